"""``mercury-lsp http`` in its own process, for the benchmarks and the tests (the one place that
starts it). It speaks only the command's public contract — a command line in, stderr lines
out (``listening on URL``, then ``model ... ready``) — and imports nothing of the daemon, so the
clients that measure or test the server share no code with it."""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import sys
import threading
from pathlib import Path

MERCURY = str(Path(sys.executable).parent / "mercury-lsp")
START_TIMEOUT_S = 300  # a cold model load on a loaded 2-core machine
STOP_TIMEOUT_S = 10


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpProcess:
    """Start ``mercury-lsp http [args]``; with ``wait`` (the default) return once the model is
    ready, else call ``start()`` (listening: ``url`` is set) and ``ready()`` yourself. Both wait
    on the server's stderr lines, never by polling."""

    def __init__(self, args: list[str], *, host: str = "127.0.0.1", port: int = 0, nice: int = 0,
                 wait: bool = True, argv: list[str] | None = None) -> None:
        """``argv``: the command that runs ``mercury-lsp`` (another checkout's:
        ``benchmarks.common.checkouts.cli_argv``); this environment's by default."""
        cmd = [*(argv or [MERCURY]), "http", "--host", host, "--port", str(port), *args]
        if nice:
            cmd = ["nice", "-n", str(nice), *cmd]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.lines: queue.Queue[str] = queue.Queue()
        self.log: list[str] = []
        self.url = ""
        threading.Thread(target=self._drain, daemon=True).start()
        if wait:
            self.start().ready()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            self.lines.put(line)
        self.lines.put("")  # end of output: the process exited

    def wait_for(self, marker: str) -> str:
        """The first stderr line (from here on) holding ``marker``; fails if the server exits."""
        while True:
            line = self.lines.get(timeout=START_TIMEOUT_S)
            if not line:
                raise RuntimeError("mercury-lsp http exited:\n" + "".join(self.log[-20:]))
            if marker in line:
                return line

    def start(self) -> HttpProcess:
        self.url = self.wait_for("listening on ").split("listening on ", 1)[1].strip()
        return self

    def ready(self) -> HttpProcess:
        self.wait_for(" ready")
        return self

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def peak_rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time the process has used so far (Linux ``/proc``; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
