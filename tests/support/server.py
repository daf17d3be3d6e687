"""Serving the tiny test model: the ``serve`` command line, and a document with many places to
complete (``PROBE_TEXT``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import threading
from pathlib import Path

from benchmarks.common.checkouts import cli_argv
from benchmarks.common.jsonrpc import LspConnection
from tests.support.settings import MODEL_DRAFTS_RAW

# Created once per test session (the server only reads it after `initialized`).
_RUN = os.environ.get("MERCURY_TEST_RUN", str(os.getpid()))
TINY_MODEL_DIR = Path(tempfile.gettempdir()) / f"mercury-lsp-tests-{_RUN}" / "tiny"


# A checkout whose daemon the tests drive instead of this tree's (benchmarks/lsp/regressions runs
# the regression tests against the daemon before the fixes this way).
SERVER_SOURCE_ENV = "MERCURY_TEST_SERVER_SOURCE"


def configuration_answers(config: dict):
    """A client's answers to ``workspace/configuration`` (each item's section of ``config``, as
    Helix and Zed answer it; other server requests: null): ``on_request`` of the wire client."""
    def answer(method: str, params):
        if method != "workspace/configuration":
            return None
        result = []
        for item in params["items"]:
            value = config
            for part in (item.get("section") or "").split("."):
                value = value.get(part) if part and isinstance(value, dict) else value
            result.append(value)
        return result

    return answer


def serve_command(*extra: str) -> list[str]:
    """The tiny model's daemon; its base settings show the model's drafts ungated with no memory
    (``tests.support.settings``), merged under any ``--settings`` in ``extra`` (a daemon of another
    checkout, older than those settings, gets only ``extra``'s)."""
    args = list(extra)
    other = os.environ.get(SERVER_SOURCE_ENV) or None
    settings = {} if other else dict(MODEL_DRAFTS_RAW)
    if "--settings" in args:
        i = args.index("--settings")
        settings.update(json.loads(args[i + 1]))
        del args[i:i + 2]
    base = ["--settings", json.dumps(settings)] if settings else []
    return [*cli_argv(other), "serve", "--model", str(TINY_MODEL_DIR), "--dtype", "float32", "--threads", "1",
            *base, *args]


class TcpDaemon:
    """``serve --tcp HOST:0`` in a subprocess: its port, its log lines (kept as they come) and
    clients connected to it (``benchmarks.common.jsonrpc.LspConnection``)."""

    def __init__(self, *extra: str, host: str = "127.0.0.1") -> None:
        self.proc = subprocess.Popen(serve_command("--tcp", f"{host}:0", *extra), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.log: list[bytes] = []
        self.port: int | None = None
        for line in self.proc.stderr:
            self.log.append(line)
            if m := re.search(rb"listening on .*:(\d+)", line):
                self.port = int(m.group(1))
                break
        # Keep reading: the daemon must never block on a full stderr pipe.
        threading.Thread(target=lambda: self.log.extend(self.proc.stderr), daemon=True).start()

    def connect(self) -> LspConnection:
        assert self.port is not None, b"".join(self.log).decode(errors="replace")
        return LspConnection.over_tcp(self.proc, self.port)

    def close(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            return self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


# A document with many places to complete: with random weights, most suggestions are
# undecodable bytes (cut to nothing); `probe_positions` lists where to look for a real one.
PROBE_TEXT = (
    "import os\n\n\ndef add(a, b):\n    return a\n\n\ndef mul(x, y):\n    z = x\n    return z\n\n\n"
    "class Point:\n    def __init__(self, x):\n        self.x = x\n\n\nfor i in range(10):\n    print(i)\n"
    "total = 0\nname = 'a'\nvalues = [1, 2]\nresult = add(1, 2)\n"
    + "".join(f"item_{i} = values[{i % 2}] + total * {i}\n" for i in range(24))
)


def probe_positions() -> list[tuple[int, int]]:
    """(line, column) at the end of every line that is completed as a single line."""
    out = []
    for i, line in enumerate(PROBE_TEXT.split("\n")):
        if line.strip() and not line.rstrip().endswith(":"):
            out.append((i, len(line)))
    return out
