"""Shared helpers of the HTTP tests: a live ``mercury-lsp http`` in another process (started by
the benchmarks' launcher), and a recording session behind the real ``SharedBackend`` for tests
of the HTTP layer alone."""

from __future__ import annotations

import threading
from pathlib import Path

from benchmarks.http_api.server import MERCURY, HttpProcess, free_port
from mercury_lsp.backend.session import Capabilities
from mercury_lsp.backend.shared import SharedBackend
from mercury_lsp.engine_client import EngineCancelled, EngineClient, LoadSpec
from mercury_lsp.schema import EngineInfo, InfillOutcome, InfillSpec, NextEditResult

__all__ = ["MERCURY", "LiveServer", "RecordingBackend", "RecordingSession", "free_port", "recording"]


class LiveServer(HttpProcess):
    """``mercury-lsp http`` in a subprocess (benchmarks/http_api/server.py, the one launcher) with the
    tests' model settings; ``start()`` once it listens, ``ready()`` once the model is loaded."""

    def __init__(self, *args: str, model: Path | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        extra = ["--model", str(model), "--dtype", "float32", "--threads", "1"] if model is not None else []
        super().__init__([*args, *extra], host=host, port=port, wait=False)


class RecordingSession:
    """A ``Session`` that records what it was asked and answers ``text``; with ``block=True`` it
    waits until the request is cancelled (and records that)."""
    capabilities = Capabilities(next_edit=True)
    edit_model = None
    context_tokens = 2048
    chars_per_token = 3.5

    def __init__(self, text: str, block: bool) -> None:
        self.text, self.block = text, block
        self.info = EngineInfo(model="test-model", device="cpu", dtype="float32", context_tokens=self.context_tokens,
                               chars_per_token=self.chars_per_token, load_ms=0.0)
        self.specs: list[InfillSpec] = []
        self.started = threading.Event()
        self.cancelled = threading.Event()

    def count_tokens(self, text: str) -> int:
        return max(1, round(len(text) / self.chars_per_token))

    def infill(self, spec: InfillSpec, cancel) -> InfillOutcome:
        self.specs.append(spec)
        self.started.set()
        if self.block:
            cancel.wait()
            self.cancelled.set()
            raise EngineCancelled("cancelled")
        return InfillOutcome(text=self.text, tokens=3, mean_confidence=0.5, stop_reason="stop", steps=1,
                             forwards=1, prompt_tokens=len(spec.prefix) + len(spec.suffix), trimmed=False,
                             elapsed_ms=1.0)

    def next_edit(self, query, cancel) -> NextEditResult:
        return NextEditResult(edits=[], model="test-model")

    def close(self) -> None:
        return None


class _Opens:
    def __init__(self, session: RecordingSession) -> None:
        self.session = session

    def open(self, spec, report) -> RecordingSession:
        return self.session


class RecordingBackend(SharedBackend):
    """The HTTP API's backend serving a ``RecordingSession`` (``recording()`` opens it)."""

    def __init__(self, text: str = "x + 1", block: bool = False) -> None:
        self.session = RecordingSession(text, block)
        super().__init__(EngineClient(_Opens(self.session)), LoadSpec("test-model"))
        self.specs, self.started, self.cancelled = self.session.specs, self.session.started, self.session.cancelled


async def recording(text: str = "x + 1", block: bool = False, state: str = "ready") -> RecordingBackend:
    """A ``RecordingBackend``, opened unless ``state`` is ``"loading"``."""
    backend = RecordingBackend(text, block)
    if state != "loading":
        await backend.start()
    return backend
