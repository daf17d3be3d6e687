"""The in-process engine as a backend, shared by every HTTP client (and the language server in
the same process).

The model loads once through ``EngineClient``. Requests then run on a bounded pool of threads
that call the engine's thread-safe fast path at the same time: the engine's scheduler
(``Engine.scheduler``) admits every request in flight into the same denoising steps, so
concurrent clients share forwards instead of queueing behind one worker. ``Admission`` bounds
the pool and its waiting line; each request's cancel token (set when its client disconnects,
or by its deadline) is checked by the scheduler before every step.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from mercury_lsp.backend.admission import Admission
from mercury_lsp.backend.base import (
    BackendError,
    BackendStatus,
    Cancelled,
    DeadlineExceeded,
    InvalidInput,
    NotReady,
    QueueLimits,
)
from mercury_lsp.engine_client import (
    CancelToken,
    EngineCancelled,
    EngineClient,
    EngineError,
    EngineSession,
    LoadSpec,
)
from mercury_lsp.next_edit import EngineEdits, NextEditQuery, predict, to_result
from mercury_lsp.schema import InfillOutcome, InfillSpec, NextEditResult
from mercury_lsp.syntax import Grammars

T = TypeVar("T")

# The scheduler's default: requests that share one denoising step (1 turns batching off).
DEFAULT_BATCH = 16


def model_id(path_or_name: str) -> str:
    """The id clients name the model by: the checkpoint directory's name."""
    return Path(path_or_name).name or path_or_name


class LocalBackend:
    def __init__(self, spec: LoadSpec, limits: QueueLimits = QueueLimits(), batch: int = DEFAULT_BATCH,
                 client: EngineClient | None = None) -> None:
        self.spec = spec
        self.limits = limits
        self.batch = batch
        self.client = client or EngineClient()
        self.admission = Admission(limits.max_running, limits.max_waiting)
        self._pool = ThreadPoolExecutor(max_workers=limits.max_running, thread_name_prefix="mercury-request")
        self._session: EngineSession | None = None
        self._grammars = Grammars()
        self._edit_lock = threading.Lock()  # next edits hold the engine's lock: one at a time
        self._load: asyncio.Task | None = None

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Load the model (errors end in the ``error`` state, reported by ``status``)."""
        try:
            await self.client.load(self.spec)
            session = await self.client.run(lambda s: s, CancelToken())
            session.engine.scheduler.max_batch = self.batch
            self._session = session
        except EngineError:
            return

    def start_background(self, done: Callable[[BackendStatus], None] | None = None) -> None:
        """Load in the background; ``done(status)`` when it is ready or has failed."""
        async def load() -> None:
            await self.start()
            if done is not None:
                done(self.status())

        self._load = asyncio.ensure_future(load())

    def status(self) -> BackendStatus:
        info = self.client.info
        state = "ready" if self._session is not None else ("error" if self.client.state == "error" else "loading")
        return BackendStatus(
            state=state, model=model_id(info.model if info else (self.spec.model or "embedded")),
            running=self.admission.running, waiting=self.admission.waiting,
            max_running=self.admission.max_running, max_waiting=self.admission.max_waiting,
            message=self.client.error or "", context_tokens=info.context_tokens if info else None,
            chars_per_token=info.chars_per_token if info else None)

    async def close(self) -> None:
        if self._load is not None:
            self._load.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.client.close()

    # ------------------------------------------------------------------ requests
    async def _call(self, fn: Callable[[EngineSession], T], cancel: CancelToken) -> T:
        session = self._session
        if session is None:
            st = self.status()
            raise NotReady(f"the model failed to load: {st.message}" if st.state == "error"
                           else "the model is still loading; retry shortly")
        await self.admission.acquire(cancel.deadline)
        loop = asyncio.get_running_loop()

        def job() -> T:
            from mercury_engine.errors import CancelledError, InvalidRequestError
            from mercury_engine.errors import EngineError as EngineFailure

            try:
                return fn(session)
            except CancelledError as exc:  # the engine's errors, in the daemon's terms
                raise EngineCancelled(str(exc)) from None
            except InvalidRequestError as exc:
                raise InvalidInput(str(exc)) from None
            except EngineFailure as exc:
                raise BackendError(f"the engine failed: {exc}") from None

        async def run() -> T:
            try:
                return await loop.run_in_executor(self._pool, job)
            finally:  # the slot frees when the engine is done with the request, not before
                self.admission.release()

        task = asyncio.ensure_future(run())
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # retrieved when abandoned
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            cancel.cancel()  # the scheduler drops it before its next step
            raise
        except EngineCancelled:
            if cancel.deadline is not None and time.monotonic() >= cancel.deadline:
                raise DeadlineExceeded("the request ran past its deadline") from None
            raise Cancelled("the request was cancelled") from None
        except EngineError as exc:  # raised by the daemon's own code around the engine
            raise BackendError(str(exc)) from None

    async def infill(self, spec: InfillSpec, cancel: CancelToken) -> InfillOutcome:
        return await self._call(lambda s: s.infill(spec, cancel), cancel)

    async def next_edit(self, query: NextEditQuery, cancel: CancelToken) -> NextEditResult:
        def job(session: EngineSession) -> NextEditResult:
            with self._edit_lock:
                outcome = predict(query, EngineEdits(session.engine), self._grammars, cancel)
            return to_result(outcome, query, model_id(session.info.model))

        return await self._call(job, cancel)
