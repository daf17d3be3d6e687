"""The one place mercury_lsp talks to the engine.

One daemon worker thread loads and retires the ``Engine``, in order. Request jobs (an infill
and the CPU work that goes with it: parsing, windows, the syntax guard) run on a pool of
REQUEST_THREADS threads, so the requests of every editor connected to one daemon are in flight
at once and the engine's scheduler batches their denoising steps (as it does the HTTP
server's); the event loop only schedules and awaits. Jobs carry an ``engine.CancelToken``: a
job cancelled before it starts is skipped, a running infill stops at its next denoising step.
A retired engine is closed once every job submitted for it has finished.

Engine results are converted to ``schema`` Structs here. The engine's model code (and torch)
is imported on the worker, so the server answers ``initialize`` at once while the model loads
in the background; the loop side uses the engine's own ``CancelToken`` and errors, whose
modules (``mercury_engine.types``, ``mercury_engine.errors``, ``mercury_engine.options``) import without torch.
Choosing the sampler is the engine's policy: ``InfillSpec`` carries a preset and, when the user
asked for one, a sampler; ``Engine.infill`` defaults to the fast sampler.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from mercury_engine.errors import CancelledError as EngineCancelled
from mercury_engine.errors import EngineError
from mercury_engine.options import InfillOptions
from mercury_engine.types import CancelToken
from mercury_lsp.heap import release_free_memory
from mercury_lsp.schema import EngineInfo, InfillOutcome, InfillSpec

if TYPE_CHECKING:
    from mercury_engine import Engine, InfillResult

log = logging.getLogger(__name__)
T = TypeVar("T")

CALIBRATION_CHARS = 16_000  # of real code, to estimate characters per token once per model
# Request jobs in flight at once: the engine scheduler's batch (engine.scheduler.MAX_BATCH), so
# every editor's request can join the same denoising step; more would only wait in its queue.
REQUEST_THREADS = 16

__all__ = ["CancelToken", "EngineCancelled", "EngineClient", "EngineError", "EngineSession", "LoadSpec", "load_session"]


@dataclass(frozen=True)
class LoadSpec:
    model: str | None
    device: str = "auto"
    dtype: str = "auto"
    threads: int | None = None
    context_tokens: int | None = None


class EngineSession:
    """What a job running on the worker thread may use (wraps one loaded Engine)."""

    def __init__(self, engine: Engine, info: EngineInfo) -> None:
        self._engine = engine
        self.info = info

    @property
    def context_tokens(self) -> int:
        return self._engine.context_tokens

    @property
    def engine(self) -> Engine:
        """The loaded engine, for feature jobs that need more than ``infill`` (worker thread only)."""
        return self._engine

    @property
    def chars_per_token(self) -> float:
        return self.info.chars_per_token

    def count_tokens(self, text: str) -> int:
        return self._engine.count_tokens(text)

    def close(self) -> None:
        """Stop the engine's scheduler thread (it holds the model) so the model can be freed."""
        self._engine.close()

    def infill(self, spec: InfillSpec, cancel: CancelToken | None) -> InfillOutcome:
        fields = {"preset": spec.preset, "temperature": spec.temperature, "seed": spec.seed,
                  "single_line": spec.single_line, "context_reuse": spec.context_reuse,
                  "context_scope": spec.context_scope}
        if spec.sampler != "auto":  # the user asked for a sampler; otherwise the engine's default
            fields["sampler"] = spec.sampler
        if spec.length != "auto":
            fields["length"] = spec.length
        options = InfillOptions(**fields)
        t0 = time.perf_counter()
        result: InfillResult = self._engine.infill(spec.prefix, spec.suffix, spec.max_tokens, options,
                                                   cancel=cancel)
        return InfillOutcome(
            text=result.text, tokens=len(result.token_ids), mean_confidence=result.mean_confidence,
            stop_reason=result.stop_reason, steps=result.steps, forwards=result.forwards,
            prompt_tokens=result.prompt_tokens, trimmed=result.trimmed,
            elapsed_ms=(time.perf_counter() - t0) * 1000, confidences=tuple(result.confidences),
            token_ends=self._token_ends(result.token_ids, result.text))

    def _token_ends(self, ids: list[int], text: str) -> tuple[int, ...]:
        """Where each token ends in ``text`` (empty when the decoded tokens do not spell it)."""
        tok = getattr(self._engine, "tokenizer", None)
        if tok is None or not ids:
            return ()
        ends = tuple(len(tok.decode(ids[: i + 1])) for i in range(len(ids)))
        return ends if text.startswith(tok.decode(ids[: len(ids)])[: len(text)]) else ()


class _InFlight:
    """Request jobs submitted and not finished, per session (local or remote)."""

    def __init__(self) -> None:
        self._jobs: dict[int, int] = {}
        self._changed = threading.Condition()

    def enter(self, session: object) -> None:
        with self._changed:
            self._jobs[id(session)] = self._jobs.get(id(session), 0) + 1

    def leave(self, session: object) -> None:
        with self._changed:
            left = self._jobs[id(session)] - 1
            if left:
                self._jobs[id(session)] = left
            else:
                del self._jobs[id(session)]
            self._changed.notify_all()

    def wait_idle(self, session: object) -> None:
        with self._changed:
            self._changed.wait_for(lambda: id(session) not in self._jobs)


class _Worker:
    """Daemon threads running jobs from one queue (one thread: in order; daemon: exiting never
    waits for a decode)."""

    def __init__(self, threads: int = 1, name: str = "mercury-engine") -> None:
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._run, name=name, daemon=True) for _ in range(threads)]
        for t in self._threads:
            t.start()

    def submit(self, fn: Callable[[], T], cancel: CancelToken | None) -> concurrent.futures.Future[T]:
        fut: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((fn, cancel, fut))
        return fut

    def stop(self) -> None:
        for _ in self._threads:
            self._jobs.put(None)

    def _run(self) -> None:
        while True:
            item = self._jobs.get()
            if item is None:
                return
            self._one(*item)
            del item  # an idle thread must not keep its last job (and its session) alive

    @staticmethod
    def _one(fn: Callable[[], T], cancel: CancelToken | None, fut: concurrent.futures.Future[T]) -> None:
        if not fut.set_running_or_notify_cancel():
            return
        if cancel is not None and cancel.cancelled:
            fut.set_exception(EngineCancelled("cancelled before it started"))
            return
        try:
            fut.set_result(fn())
        except BaseException as exc:  # delivered to the awaiting coroutine
            fut.set_exception(exc)


class EngineClient:
    """Async facade over the worker: ``await load(spec)``, ``await run(job, cancel)``."""

    def __init__(self, loader: Callable[..., Engine] | None = None) -> None:
        self._worker = _Worker()
        self._requests = _Worker(REQUEST_THREADS, "mercury-request")
        self._inflight = _InFlight()
        self._loader = loader
        self._session: EngineSession | None = None
        self._spec: LoadSpec | None = None
        self._loading: asyncio.Future | None = None
        self.state = "idle"
        self.error: str | None = None

    @property
    def ready(self) -> bool:
        return self._session is not None and self.state == "ready"

    @property
    def info(self) -> EngineInfo | None:
        return self._session.info if self._session is not None else None

    @property
    def spec(self) -> LoadSpec | None:
        return self._spec

    async def load(self, spec: LoadSpec) -> EngineInfo:
        """Load (or reload) the model on the worker; raises EngineError with a user message.

        Callers asking for the spec already loaded or loading share that load (each connection
        of a TCP daemon asks when it starts); a caller that is cancelled (its connection ended)
        leaves the load running for the others. A failed load is tried again when asked again.
        """
        again = self._loading is not None and self._loading.done() and self.state == "error"
        if self._spec != spec or self._loading is None or again:
            self._spec = spec
            self.state, self.error = "loading", None
            self._loading = asyncio.ensure_future(self._load(spec))
            self._loading.add_done_callback(_retrieved)
        return await asyncio.shield(self._loading)

    async def _load(self, spec: LoadSpec) -> EngineInfo:
        fut = self._worker.submit(lambda: self._load_blocking(spec), None)
        try:
            session = await asyncio.wrap_future(fut)
        except EngineError as exc:
            if self._spec == spec:
                retired = self._retire()
                self.state, self.error = "error", str(exc)
                await retired
            raise
        except Exception as exc:  # an unexpected failure still ends as a clear state
            if self._spec == spec:
                retired = self._retire()
                self.state, self.error = "error", f"{type(exc).__name__}: {exc}"
                await retired
            raise EngineError(f"loading the model failed: {type(exc).__name__}: {exc}") from exc
        if self._spec == spec:  # a newer load request wins
            retired = self._retire()
            self._session, self.state = session, "ready"
            await retired  # the load ends when the old model is gone (its last requests ended first)
        else:  # superseded while it loaded: never used
            self._worker.submit(_retirement(session, self._inflight), None)
        return session.info

    def _retire(self) -> asyncio.Future:
        """Drop the current session now; the returned future ends when its engine is closed on
        the worker — after the request jobs submitted for it — and its memory is back with the
        system (a reload must not keep the old model: its scheduler thread held it, about one
        model's size per reload)."""
        session, self._session = self._session, None
        if session is None:
            done = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done
        return asyncio.wrap_future(self._worker.submit(_retirement(session, self._inflight), None))

    def _load_blocking(self, spec: LoadSpec) -> EngineSession:
        return load_session(spec, self._loader)

    async def run(self, job: Callable[[EngineSession], T], cancel: CancelToken) -> T:
        """Run ``job(session)`` on the request pool. Raises EngineCancelled when cancelled/superseded."""
        session = self._session
        if session is None:
            raise EngineError("the model is not loaded")
        self._inflight.enter(session)
        fut = self._requests.submit(lambda: job(session), cancel)
        fut.add_done_callback(lambda _: self._inflight.leave(session))
        try:
            return await asyncio.wrap_future(fut)
        except asyncio.CancelledError:
            cancel.cancel()
            fut.cancel()
            raise

    def close(self) -> None:
        """The daemon ends: stop the worker. The engine is not closed here: closing it on the
        worker while the interpreter exits aborted the process (SIGABRT in torch's teardown)."""
        self._worker.stop()
        self._requests.stop()

    async def aclose(self) -> None:
        """``close`` from the event loop (a remote client also closes its connections)."""
        self.close()


def _retrieved(fut: asyncio.Future) -> None:
    """A load's outcome is read by its callers; none may be left (no "never retrieved" warning)."""
    if not fut.cancelled():
        fut.exception()


def _retirement(session: EngineSession, inflight: _InFlight) -> Callable[[], None]:
    """A worker job closing ``session``'s engine once its request jobs have ended, and returning
    its memory (holds no reference after)."""
    held = [session]

    def retire() -> None:
        session = held.pop()
        inflight.wait_idle(session)  # new requests already go to the new session
        session.close()
        del session
        release_free_memory(collect=True)

    return retire


def load_session(spec: LoadSpec, loader: Callable[..., Engine] | None = None) -> EngineSession:
    """Load the engine in this thread (the CLI's batch commands; the daemon uses ``EngineClient``)."""
    t0 = time.perf_counter()
    if loader is None:
        from mercury_engine import Engine

        loader = Engine.load
    engine = loader(spec.model, device=spec.device, dtype=spec.dtype,
                    context_tokens=spec.context_tokens, threads=spec.threads)
    sample = _calibration_text()
    cpt = len(sample) / max(1, engine.count_tokens(sample))
    info = EngineInfo(model=str(engine.path or spec.model or "embedded"), device=str(engine.device),
                      dtype=str(engine.dtype).removeprefix("torch."),
                      context_tokens=int(engine.context_tokens), chars_per_token=round(cpt, 3),
                      load_ms=round((time.perf_counter() - t0) * 1000, 1))
    return EngineSession(engine, info)


def _calibration_text() -> str:
    here = Path(__file__).parent
    parts = []
    for name in ("context.py", "documents.py", "completion/service.py"):
        try:
            parts.append((here / name).read_text(encoding="utf-8"))
        except OSError:
            continue
    text = "".join(parts)[:CALIBRATION_CHARS]
    return text or "def add(a, b):\n    return a + b\n" * 64
