"""Start ``mercury-lsp http`` in its own process for a benchmark (no code shared with it: the
command line in, its stderr lines out)."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

START_TIMEOUT_S = 300


class HttpProcess:
    def __init__(self, args: list[str], nice: int = 0) -> None:
        exe = Path(sys.executable).parent / "mercury-lsp"
        cmd = [str(exe), "http", "--port", "0", *args]
        if nice:
            cmd = ["nice", "-n", str(nice), *cmd]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self._lines: queue.Queue[str] = queue.Queue()
        self.log: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()
        self.url = self._wait("listening on ").split("listening on ", 1)[1].strip()
        self._wait(" ready")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            self._lines.put(line)
        self._lines.put("")

    def _wait(self, marker: str) -> str:
        while True:
            line = self._lines.get(timeout=START_TIMEOUT_S)
            if not line:
                raise RuntimeError("mercury-lsp http exited:\n" + "".join(self.log[-20:]))
            if marker in line:
                return line

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
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
