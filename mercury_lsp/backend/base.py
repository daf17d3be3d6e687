"""A backend's failures in the HTTP API's terms, its queue limits and its status.

``RemoteApi`` raises the errors below; a session (``backend.session``) turns them into the
engine's (``EngineError``, ``EngineCancelled``), and ``SharedBackend`` turns a session's errors
back into these, which the HTTP layer maps onto status codes.
"""

from __future__ import annotations

import msgspec


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
