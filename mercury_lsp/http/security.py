"""Security defaults: loopback unless a key is set, a constant-time Bearer check, and a
connection that must finish its headers in time (against slow clients holding sockets)."""

from __future__ import annotations

import hmac
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from mercury_lsp.http.errors import error_response
from mercury_lsp.server.access import is_loopback

# Reachable without the key: load balancers and supervisors poll it; it shows no user data.
OPEN_PATHS = frozenset({"/health"})


class StartupError(Exception):
    """A configuration that must not start (message for the user)."""


def read_api_key(path: Path) -> str:
    try:
        key = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise StartupError(f"--api-key-file {path}: cannot read it ({exc.strerror or exc})") from None
    if len(key) < MIN_KEY_CHARS:
        raise StartupError(f"--api-key-file {path}: the key must have at least {MIN_KEY_CHARS} characters")
    return key


MIN_KEY_CHARS = 16  # a guessable key is no key


def check_bind(host: str, api_key: str | None) -> None:
    if api_key is None and not is_loopback(host):
        raise StartupError(f"refusing to listen on {host} without an API key: anyone who can reach it "
                           f"could run the model. Give --api-key-file FILE, or bind 127.0.0.1")


def key_matches(header: bytes | None, key: bytes) -> bool:
    """``Authorization: Bearer <key>``, compared in constant time."""
    if header is None:
        return False
    scheme, _, token = header.partition(b" ")
    if scheme.lower() != b"bearer":
        return False
    return hmac.compare_digest(token.strip(), key)


class BearerAuth:
    """ASGI middleware: every path but ``OPEN_PATHS`` needs the key (checked before the body is read)."""

    def __init__(self, app: ASGIApp, key: str) -> None:
        self.app = app
        self.key = key.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"authorization")
        if not key_matches(header, self.key):
            missing = header is None
            response = error_response(
                401, "missing API key: send Authorization: Bearer <key>" if missing else "invalid API key",
                "authentication_error", code="missing_api_key" if missing else "invalid_api_key",
                headers={"WWW-Authenticate": "Bearer"})
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def protocol_with_header_timeout(timeout_s: float) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol, closing a connection whose request headers take longer than
    ``timeout_s`` (from the connection's start, or from the first byte of a kept-alive request)."""

    class HeaderTimeoutProtocol(HttpToolsProtocol):
        _header_timer = None

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(timeout_s, self._too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _too_slow(self) -> None:
            self._header_timer = None
            if self.transport is not None and not self.transport.is_closing():
                self.transport.close()

        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def connection_lost(self, exc) -> None:  # type: ignore[override]
            self._disarm()
            super().connection_lost(exc)

    return HeaderTimeoutProtocol
