"""Shared helpers of the HTTP tests: a live ``mercury-lsp http`` in another process (started by
the benchmarks' launcher), and a recording backend for tests of the HTTP layer alone."""

from __future__ import annotations

import asyncio
from pathlib import Path

from benchmarks.http_api.server import MERCURY, HttpProcess, free_port
from mercury_lsp.backend.base import BackendStatus, NotReady
from mercury_lsp.schema import InfillOutcome, InfillSpec, NextEditResult

__all__ = ["MERCURY", "LiveServer", "RecordingBackend", "free_port"]


class LiveServer(HttpProcess):
    """``mercury-lsp http`` in a subprocess (benchmarks/http_api/server.py, the one launcher) with the
    tests' model settings; ``start()`` once it listens, ``ready()`` once the model is loaded."""

    def __init__(self, *args: str, model: Path | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        extra = ["--model", str(model), "--dtype", "float32", "--threads", "1"] if model is not None else []
        super().__init__([*args, *extra], host=host, port=port, wait=False)


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
