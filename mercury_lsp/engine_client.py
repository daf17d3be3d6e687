"""The one place mercury_lsp runs work against a model: ``EngineClient``.

An ``EngineClient`` serves one ``backend.session.Session`` at a time, opened by its ``Opener``
(the in-process engine, or a remote backend: ``backend.connect.engine_client_for``). One daemon
worker thread opens and retires sessions, in order. Request jobs (an infill and the CPU work
that goes with it: parsing, windows, the syntax guard) run on a pool of REQUEST_THREADS
threads, so the requests of every editor connected to one daemon are in flight at once and the
engine's scheduler batches their denoising steps (as it does the HTTP server's); the event loop
only schedules and awaits. Jobs carry a ``mercury_engine.CancelToken``: a job cancelled before it
starts is skipped, a running infill stops at its next denoising step. A retired session is
closed once every job submitted for it has finished.

The model code (and torch) is imported on the worker, so the server answers ``initialize`` at
once while the model loads in the background; the loop side uses the engine's own
``CancelToken`` and errors, whose modules (``mercury_engine.types``, ``mercury_engine.errors``,
``mercury_engine.options``) import without torch.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import threading
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from mercury_engine.errors import CancelledError as EngineCancelled
from mercury_engine.errors import EngineError
from mercury_engine.types import CancelToken
from mercury_lsp.heap import release_free_memory, settle
from mercury_lsp.schema import EngineInfo

if TYPE_CHECKING:
    from mercury_lsp.backend.session import Opener, Session

log = logging.getLogger(__name__)
T = TypeVar("T")

# Request jobs in flight at once: the engine scheduler's batch (engine.scheduler.MAX_BATCH), so
# every editor's request can join the same denoising step; more would only wait in its queue.
REQUEST_THREADS = 16

__all__ = ["CancelToken", "EngineCancelled", "EngineClient", "EngineError", "LoadSpec"]


@dataclass(frozen=True)
class LoadSpec:
    """The local model to load (a remote backend's opener reads its own settings instead)."""
    model: str | None
    device: str = "auto"
    dtype: str = "auto"
    threads: int | None = None
    context_tokens: int | None = None


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
            fut.set_exception(_unheld(exc))
            del fut  # the job's frames lead back here (f_back): holding ``fut`` (and so ``exc``) made a cycle


class EngineClient:
    """Async facade over the worker: ``await load(spec)``, ``await run(job, cancel)``; the job
    gets the open ``Session``, whichever backend it is."""

    def __init__(self, opener: Opener) -> None:
        self.opener = opener
        self._worker = _Worker()
        self._requests = _Worker(REQUEST_THREADS, "mercury-request")
        self._inflight = _InFlight()
        self._session: Session | None = None
        self._spec: LoadSpec | None = None
        self._loading: asyncio.Future | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._listeners: weakref.WeakSet[Any] = weakref.WeakSet()
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

    # ------------------------------------------------------------------ reports
    def watch(self, server: Any) -> None:
        """``server.warn(message)`` is told what the session reports (a remote backend that stops
        or starts answering); held weakly, so a closed connection's server is dropped."""
        self._listeners.add(server)

    def _report(self, message: str) -> None:
        """Thread-safe: the session's message to every watching server, on the event loop."""
        def tell() -> None:
            for server in list(self._listeners):
                server.warn(message)

        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(tell)

    # ------------------------------------------------------------------ sessions
    async def load(self, spec: LoadSpec) -> EngineInfo:
        """Open (or reopen) the session on the worker; raises EngineError with a user message.

        Callers asking for the spec already loaded or loading share that load (each connection
        of a TCP daemon asks when it starts); a caller that is cancelled (its connection ended)
        leaves the load running for the others. A failed load is tried again when asked again.
        """
        self._loop = asyncio.get_running_loop()
        again = self._loading is not None and self._loading.done() and self.state == "error"
        if self._spec != spec or self._loading is None or again:
            self._spec = spec
            self.state, self.error = "loading", None
            self._loading = asyncio.ensure_future(self._load(spec))
            self._loading.add_done_callback(_retrieved)
        return await asyncio.shield(self._loading)

    async def _load(self, spec: LoadSpec) -> EngineInfo:
        fut = self._worker.submit(lambda: self.opener.open(spec, self._report), None)
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
            settle()
        else:  # superseded while it loaded: never used
            self._worker.submit(_retirement(session, self._inflight), None)
        return session.info

    def _retire(self) -> asyncio.Future:
        """Drop the current session now; the returned future ends when it is closed on the
        worker — after the request jobs submitted for it — and its memory is back with the
        system (a reload must not keep the old model: its scheduler thread held it, about one
        model's size per reload)."""
        session, self._session = self._session, None
        if session is None:
            done = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done
        return asyncio.wrap_future(self._worker.submit(_retirement(session, self._inflight), None))

    async def run(self, job: Callable[[Session], T], cancel: CancelToken) -> T:
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
        finally:  # ``fut`` holds the job's exception, whose traceback holds this frame: no cycle
            del fut

    def close(self) -> None:
        """The daemon ends: stop the worker. The session is not closed here: closing an engine
        on the worker while the interpreter exits aborted the process (SIGABRT in torch's
        teardown)."""
        self._worker.stop()
        self._requests.stop()

    async def aclose(self) -> None:
        """This client is replaced while the daemon runs (another ``backend``): its session is
        closed once its last jobs ended (a model freed, connections closed), then the workers stop."""
        retired = self._retire()
        self.close()  # queued behind the retirement
        await retired


def _unheld(exc: BaseException) -> BaseException:
    """``exc`` as it leaves a job: its traceback no longer holds the worker's frame nor the
    locals of the job's frames (the request's texts, parse trees and tensors), for it and the
    exceptions it chains. Every cancelled request raised one, in a reference cycle with the
    worker's frame and its future: they waited for the cycle collector's rare full passes, a
    few hundred megabytes of them in a soak. The frames' code and lines stay, for the log."""
    if exc.__traceback__ is not None:  # its first entry is the worker's frame, which caught it
        exc.__traceback__ = exc.__traceback__.tb_next
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if e.__traceback__ is not None:
            traceback.clear_frames(e.__traceback__)
        e = e.__cause__ or e.__context__
    return exc


def _retrieved(fut: asyncio.Future) -> None:
    """A load's outcome is read by its callers; none may be left (no "never retrieved" warning)."""
    if not fut.cancelled():
        fut.exception()


def _retirement(session: Session, inflight: _InFlight) -> Callable[[], None]:
    """A worker job closing ``session`` once its request jobs have ended, and returning
    its memory (holds no reference after)."""
    held = [session]

    def retire() -> None:
        session = held.pop()
        inflight.wait_idle(session)  # new requests already go to the new session
        session.close()
        del session
        release_free_memory(collect=True)

    return retire
