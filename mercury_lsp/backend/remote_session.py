"""A remote backend as a ``Session``: ``serve`` (or ``infill --backend``) loads no model.

The completion pipeline still runs here (tree-sitter windows, shaping, the syntax guard,
version checks); only the model's part goes over the network. ``RemoteSession`` runs its
``RemoteApi`` (httpx, asynchronous) on an event loop of its own, on a daemon thread, so a worker
thread waits for an answer as it waits for the local engine, and the language server's loop is
never held by the network. A cancelled or superseded request is abandoned at once (its
connection closed); the deadline bounds each request. Every request passes ``Outbound`` first
(no excluded file's text is sent). A server that cannot be reached, or fails, raises
``EngineError`` (the features answer "no suggestion") and is reported once per outage (and once
when it answers again) through the ``report`` its opener was given, never a crash.

What a remote can do is in its ``Capabilities``: a ``mercury-lsp http`` predicts next edits
itself; no remote scores masked spans (next edit then answers from the syntax alone), and
token counts are estimates from the server's characters per token.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from mercury_lsp.backend.base import BackendError, Cancelled, DeadlineExceeded
from mercury_lsp.backend.outbound import Outbound, not_sent
from mercury_lsp.backend.remote import RemoteApi
from mercury_lsp.backend.session import Budget, Capabilities, Report
from mercury_lsp.config import BackendSettings
from mercury_lsp.engine_client import CancelToken, EngineCancelled, EngineError, LoadSpec
from mercury_lsp.schema import EngineInfo, InfillOutcome, InfillSpec, NextEditResult

if TYPE_CHECKING:
    from mercury_lsp.next_edit import NextEditQuery

T = TypeVar("T")
# How often a worker waiting on the network looks at its cancel token: a superseded request is
# abandoned within this (the scheduler's step plays this role for the local engine).
CANCEL_POLL_S = 0.01
# A mercury-lsp http predicts next edits itself; the FIM servers only infill.
PREDICTS_NEXT_EDITS = Capabilities(next_edit=True)
INFILL_ONLY = Capabilities()


class RemoteSession(Budget):
    """A remote server (worker threads only; any number at once)."""
    edit_model = None  # no remote scores masked spans

    def __init__(self, settings: BackendSettings, report: Report, outbound: Outbound | None = None,
                 api: RemoteApi | None = None) -> None:
        self._report = report
        self.outbound = outbound or Outbound()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mercury-remote", daemon=True)
        self._thread.start()
        self.capabilities = PREDICTS_NEXT_EDITS if settings.api == "mercury" else INFILL_ONLY
        self._failing = False
        self._failing_lock = threading.Lock()  # workers report at once; each outage once
        t0 = time.perf_counter()
        self.api = api if api is not None else self._wait(_make_api(settings), None)
        self._wait(self.api.start(), None)
        if self.api.error:
            self._failed(self.api.error)
        self.info = EngineInfo(model=f"{self.api.model or 'remote'} via {self.api.url}", device="remote",
                               dtype=settings.api, context_tokens=self.api.context_tokens,
                               chars_per_token=self.api.chars_per_token,
                               load_ms=round((time.perf_counter() - t0) * 1000, 1))

    def count_tokens(self, text: str) -> int:
        return max(1, round(len(text) / self.chars_per_token))

    def close(self) -> None:
        """Close the connections and stop the session's loop (the remote server owns its model)."""
        try:
            self._wait(self.api.close(), None)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

    # ------------------------------------------------------------------ requests
    def infill(self, spec: InfillSpec, cancel: CancelToken | None) -> InfillOutcome:
        sent = self.outbound.infill(spec)
        if sent is None:
            return not_sent()
        return self._wait(self.api.infill(sent, cancel or CancelToken()), cancel, answers=True)

    def next_edit(self, query: NextEditQuery, cancel: CancelToken | None) -> NextEditResult | None:
        """The server's prediction, or None when it has none (the caller keeps the syntax's)."""
        sent = self.outbound.next_edit(query) if self.capabilities.next_edit else None
        if sent is None:
            return None
        return self._wait(self.api.next_edit(sent, cancel or CancelToken()), cancel, answers=True)

    def _wait(self, coro: Coroutine[Any, Any, T], cancel: CancelToken | None, answers: bool = False) -> T:
        """Run ``coro`` on the session's loop and wait for it here; ``answers``: a request to the
        server, whose failure or success ends or starts an outage."""
        fut = asyncio.run_coroutine_threadsafe(coro, self._loop)
        while True:
            try:
                result = fut.result(timeout=CANCEL_POLL_S)
            except concurrent.futures.TimeoutError:
                if cancel is not None and cancel.cancelled:
                    fut.cancel()
                    raise EngineCancelled("cancelled while the remote backend worked") from None
                continue
            except concurrent.futures.CancelledError:
                raise EngineCancelled("cancelled") from None
            except (Cancelled, DeadlineExceeded) as exc:
                raise EngineCancelled(str(exc)) from None
            except BackendError as exc:
                self._failed(str(exc))
                raise EngineError(str(exc)) from None
            if answers:
                self._answered()
            return result

    # ------------------------------------------------------------------ outage reports
    def _failed(self, message: str) -> None:
        with self._failing_lock:
            began, self._failing = not self._failing, True
        if began:
            self._report(f"mercury-lsp: the remote backend failed ({message}); no suggestions until it answers")

    def _answered(self) -> None:
        with self._failing_lock:
            ended, self._failing = self._failing, False
        if ended:
            self._report("mercury-lsp: the remote backend answers again")


async def _make_api(settings: BackendSettings) -> RemoteApi:
    """The client, made on the session's loop (httpx binds its connections to the loop it runs on)."""
    return RemoteApi(settings)


class RemoteOpener:
    """Opens a ``RemoteSession`` to the server ``settings`` name (the ``LoadSpec`` names a local
    model and is not read); ``outbound``: what may be sent (the ``exclude`` setting)."""

    def __init__(self, settings: BackendSettings, outbound: Outbound | None = None) -> None:
        self.settings = settings
        self.outbound = outbound

    def open(self, spec: LoadSpec, report: Report) -> RemoteSession:
        return RemoteSession(self.settings, report, self.outbound)
