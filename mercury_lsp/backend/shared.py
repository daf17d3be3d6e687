"""One ``EngineClient`` shared by every HTTP client (and a language server in the same process):
``SharedBackend``, what the HTTP API's routes call.

The session opens once. Requests then run on the client's request pool, calling the session
at the same time: for the local engine its scheduler admits every request in flight into the
same denoising steps, so concurrent clients share forwards instead of queueing behind one
worker. ``Admission`` bounds the requests running and waiting; each request's cancel token (set
when its client disconnects, or by its deadline) is checked by the scheduler before every step.
The session's errors are mapped onto the HTTP layer's (``backend.base``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from mercury_engine.errors import InvalidRequestError
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
from mercury_lsp.engine_client import CancelToken, EngineCancelled, EngineClient, EngineError, LoadSpec
from mercury_lsp.next_edit.service import run_prediction
from mercury_lsp.schema import InfillOutcome, InfillSpec, NextEditResult
from mercury_lsp.syntax import Grammars

if TYPE_CHECKING:
    from mercury_lsp.backend.session import Session
    from mercury_lsp.next_edit import NextEditQuery

T = TypeVar("T")


def model_id(path_or_name: str) -> str:
    """The id clients name the model by: the checkpoint directory's name."""
    return Path(path_or_name).name or path_or_name


class SharedBackend:
    def __init__(self, client: EngineClient, spec: LoadSpec, limits: QueueLimits = QueueLimits()) -> None:
        self.client = client
        self.spec = spec
        self.limits = limits
        self.admission = Admission(limits.max_running, limits.max_waiting)
        self._grammars = Grammars()
        self._edit_lock = threading.Lock()  # next edits, many model calls each: one at a time
        self._load: asyncio.Task | None = None

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Open the session (errors end in the ``error`` state, reported by ``status``)."""
        try:
            await self.client.load(self.spec)
        except EngineError:
            return

    def start_background(self, done: Callable[[BackendStatus], None] | None = None) -> None:
        """Open in the background; ``done(status)`` when it is ready or has failed."""
        async def load() -> None:
            await self.start()
            if done is not None:
                done(self.status())

        self._load = asyncio.ensure_future(load())

    def status(self) -> BackendStatus:
        info = self.client.info
        state = "ready" if self.client.ready else ("error" if self.client.state == "error" else "loading")
        return BackendStatus(
            state=state, model=model_id(info.model if info else (self.spec.model or "embedded")),
            running=self.admission.running, waiting=self.admission.waiting,
            max_running=self.admission.max_running, max_waiting=self.admission.max_waiting,
            message=self.client.error or "", context_tokens=info.context_tokens if info else None,
            chars_per_token=info.chars_per_token if info else None)

    async def close(self) -> None:
        if self._load is not None:
            self._load.cancel()
        self.client.close()

    # ------------------------------------------------------------------ requests
    async def _call(self, fn: Callable[[Session], T], cancel: CancelToken) -> T:
        if not self.client.ready:
            st = self.status()
            raise NotReady(f"the model failed to load: {st.message}" if st.state == "error"
                           else "the model is still loading; retry shortly")
        await self.admission.acquire(cancel.deadline)
        task = asyncio.ensure_future(self._run(fn, cancel))
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
        except InvalidRequestError as exc:
            raise InvalidInput(str(exc)) from None
        except EngineError as exc:
            raise BackendError(f"the engine failed: {exc}") from None

    async def _run(self, fn: Callable[[Session], T], cancel: CancelToken) -> T:
        try:
            return await self.client.run(fn, cancel)
        finally:  # the slot frees when the engine is done with the request, not before
            self.admission.release()

    async def infill(self, spec: InfillSpec, cancel: CancelToken) -> InfillOutcome:
        return await self._call(lambda s: s.infill(spec, cancel), cancel)

    async def next_edit(self, query: NextEditQuery, cancel: CancelToken) -> NextEditResult:
        def job(session: Session) -> NextEditResult:
            with self._edit_lock:
                return run_prediction(session, query, self._grammars, cancel, model_id(session.info.model))

        return await self._call(job, cancel)
