"""The language server on a remote backend: ``serve`` with a ``backend`` setting loads no model.

``RemoteEngineClient`` stands where ``EngineClient`` stands: the completion pipeline still runs
on its worker (tree-sitter windows, shaping, the syntax guard, version checks), and only the
infill goes over the network, from the worker to the event loop and back. A cancelled or
superseded request is abandoned at once (its connection closed); the deadline bounds each
request. A server that cannot be reached, or fails, gives "no suggestion" and one
``window/showMessage`` per outage (and one when it answers again), never a crash.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
import weakref
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from mercury_lsp.backend.base import BackendError, Cancelled, DeadlineExceeded
from mercury_lsp.backend.remote import RemoteBackend
from mercury_lsp.config import BackendSettings, Settings
from mercury_lsp.engine_client import CancelToken, EngineCancelled, EngineClient, EngineError, LoadSpec
from mercury_lsp.schema import EngineInfo, InfillOutcome, InfillSpec, NextEditResult

if TYPE_CHECKING:
    from mercury_lsp.next_edit import NextEditQuery

T = TypeVar("T")
# How often a worker waiting on the network looks at its cancel token: a superseded request is
# abandoned within this (the scheduler's step plays this role for the local engine).
CANCEL_POLL_S = 0.01


class RemoteSession:
    """What a job on the worker may use (``EngineSession``'s surface, over the network)."""

    def __init__(self, client: RemoteEngineClient, info: EngineInfo, loop: asyncio.AbstractEventLoop) -> None:
        self._client = client
        self._loop = loop
        self.info = info

    @property
    def context_tokens(self) -> int:
        return self.info.context_tokens

    @property
    def chars_per_token(self) -> float:
        return self.info.chars_per_token

    @property
    def engine(self) -> Any:
        raise EngineError("a remote backend has no local engine")

    def count_tokens(self, text: str) -> int:
        return max(1, round(len(text) / self.chars_per_token))

    def close(self) -> None:
        """Nothing to free here: the remote server owns its model."""

    def _wait(self, coro: Coroutine[Any, Any, T], cancel: CancelToken | None) -> T:
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
                self._client.failed(str(exc))
                raise EngineError(str(exc)) from None
            self._client.answered()
            return result

    def infill(self, spec: InfillSpec, cancel: CancelToken | None) -> InfillOutcome:
        token = cancel or CancelToken()
        return self._wait(self._client.remote.infill(spec, token), cancel)

    def next_edit(self, query: NextEditQuery, cancel: CancelToken | None) -> NextEditResult | None:
        """The server's prediction, or None when it has none (the caller keeps the syntax's)."""
        token = cancel or CancelToken()
        return self._wait(self._client.remote.next_edit(query, token), cancel)


class RemoteEngineClient(EngineClient):
    def __init__(self, settings: BackendSettings) -> None:
        super().__init__()
        self.remote = RemoteBackend(settings)
        self._servers: weakref.WeakSet = weakref.WeakSet()
        self._failing = False
        self._loop: asyncio.AbstractEventLoop | None = None

    async def load(self, spec: LoadSpec) -> EngineInfo:
        t0 = time.perf_counter()
        self._spec = spec
        self.state, self.error = "loading", None
        self._loop = asyncio.get_running_loop()
        await self.remote.start()
        if self.remote.error:
            self.failed(self.remote.error)
        info = EngineInfo(model=f"{self.remote.model or 'remote'} via {self.remote.url}", device="remote",
                          dtype=self.remote.settings.api, context_tokens=self.remote.context_tokens,
                          chars_per_token=self.remote.chars_per_token,
                          load_ms=round((time.perf_counter() - t0) * 1000, 1))
        self._session = RemoteSession(self, info, self._loop)  # type: ignore[assignment]
        self.state = "ready"
        return info

    async def aclose(self) -> None:
        self.close()
        await self.remote.close()

    # ------------------------------------------------------------------ outage reports
    def watch(self, server: Any) -> None:
        """``server.warn(message)`` is told when the backend stops or starts answering."""
        self._servers.add(server)

    def _tell(self, message: str) -> None:
        def tell() -> None:
            for server in list(self._servers):
                server.warn(message)

        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(tell)

    def failed(self, message: str) -> None:
        if not self._failing:
            self._failing = True
            self._tell(f"mercury-lsp: the remote backend failed ({message}); no suggestions until it answers")

    def answered(self) -> None:
        if self._failing:
            self._failing = False
            self._tell("mercury-lsp: the remote backend answers again")


def engine_client_for(settings: Settings) -> EngineClient:
    """The local engine, or the remote backend the settings name."""
    return RemoteEngineClient(settings.backend) if settings.backend is not None else EngineClient()


def watch_backend(engine: EngineClient, server: Any) -> None:
    if isinstance(engine, RemoteEngineClient):
        engine.watch(server)
