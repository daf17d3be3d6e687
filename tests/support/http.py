"""Shared helpers of the HTTP tests: a live ``mercury-lsp http`` in another process, and a
recording backend for tests of the HTTP layer alone."""

from __future__ import annotations

import asyncio
import os
import queue
import socket
import subprocess
import sys
import threading
from pathlib import Path

from mercury_lsp.backend.base import BackendStatus, NotReady
from mercury_lsp.schema import InfillOutcome, InfillSpec, NextEditResult

MERCURY = str(Path(sys.executable).parent / "mercury-lsp")
START_TIMEOUT_S = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """``mercury-lsp http`` in a subprocess; ``url`` once it listens, ``ready()`` once the model is
    loaded (both read from its stderr lines, no polling)."""

    def __init__(self, *args: str, model: Path | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        cmd = [MERCURY, "http", "--host", host, "--port", str(port), *args]
        if model is not None:
            cmd += ["--model", str(model), "--dtype", "float32", "--threads", "1"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.lines: queue.Queue[str] = queue.Queue()
        self.log: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()
        self.url = ""

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            self.lines.put(line)
        self.lines.put("")  # EOF

    def wait_for(self, marker: str) -> str:
        while True:
            line = self.lines.get(timeout=START_TIMEOUT_S)
            if line == "":
                raise AssertionError("mercury-lsp http exited:\n" + "".join(self.log))
            if marker in line:
                return line

    def start(self) -> LiveServer:
        line = self.wait_for("listening on ")
        self.url = line.split("listening on ", 1)[1].strip()
        return self

    def ready(self) -> LiveServer:
        self.wait_for(" ready")
        return self

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class RecordingBackend:
    """A backend that records what it was asked and answers ``text``; with ``block=True`` it
    waits until the request is cancelled (and records that)."""

    def __init__(self, text: str = "x + 1", block: bool = False, state: str = "ready") -> None:
        self.text = text
        self.block = block
        self.state = state
        self.specs: list[InfillSpec] = []
        self.cancelled = asyncio.Event()
        self.started = asyncio.Event()

    async def start(self) -> None:
        return None

    def status(self) -> BackendStatus:
        return BackendStatus(state=self.state, model="test-model", max_running=1, max_waiting=1)

    async def infill(self, spec: InfillSpec, cancel) -> InfillOutcome:
        if self.state != "ready":
            raise NotReady("the model is still loading; retry shortly")
        self.specs.append(spec)
        self.started.set()
        if self.block:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                if cancel.cancelled:
                    self.cancelled.set()
                raise
        return InfillOutcome(text=self.text, tokens=3, mean_confidence=0.5, stop_reason="stop", steps=1,
                             forwards=1, prompt_tokens=len(spec.prefix) + len(spec.suffix), trimmed=False,
                             elapsed_ms=1.0)

    async def next_edit(self, query, cancel) -> NextEditResult:
        return NextEditResult(edits=[], model="test-model")

    async def close(self) -> None:
        return None
