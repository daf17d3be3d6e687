"""What a backend is: where completions and next edits come from, in the daemon's terms.

A backend takes an ``InfillSpec`` (text in) and returns an ``InfillOutcome`` (text out), and a
``NextEditQuery`` for a ``NextEditResult``. Its failures are the typed errors below; the HTTP
layer maps them onto status codes, the language server onto "no suggestion".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import msgspec

if TYPE_CHECKING:
    from mercury_lsp.engine_client import CancelToken
    from mercury_lsp.next_edit import NextEditQuery
    from mercury_lsp.schema import InfillOutcome, InfillSpec, NextEditResult


class BackendError(Exception):
    """A backend failed (message meant for the user; never contains user code)."""


class Overloaded(BackendError):
    """The queue is full: try again later (HTTP 429)."""


class NotReady(BackendError):
    """The model is still loading, or failed to load (HTTP 503)."""


class DeadlineExceeded(BackendError):
    """The request ran past its deadline (HTTP 504)."""


class Cancelled(BackendError):
    """The request was cancelled (client gone, superseded)."""


class InvalidInput(BackendError):
    """The engine refused the input (HTTP 400)."""


class Unavailable(BackendError):
    """A remote backend could not be reached or answered badly (HTTP 502)."""


class QueueLimits(msgspec.Struct, rename="camel", kw_only=True, frozen=True):
    """Admission: requests decoding at once (they share denoising steps) and requests waiting."""
    max_running: int = 16
    max_waiting: int = 64


class BackendStatus(msgspec.Struct, kw_only=True):
    state: str  # idle | loading | ready | error
    model: str
    running: int = 0
    waiting: int = 0
    max_running: int = 0
    max_waiting: int = 0
    message: str = ""
    context_tokens: int | None = None
    chars_per_token: float | None = None


class Backend(Protocol):
    async def start(self) -> None: ...
    def status(self) -> BackendStatus: ...
    async def infill(self, spec: InfillSpec, cancel: CancelToken) -> InfillOutcome: ...
    async def next_edit(self, query: NextEditQuery, cancel: CancelToken) -> NextEditResult: ...
    async def close(self) -> None: ...
