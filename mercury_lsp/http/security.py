"""Security defaults: loopback unless a key is set, a constant-time Bearer check, and a
connection whose request head is bounded in time and size, its key checked as it arrives
(``bounded_protocol``)."""

from __future__ import annotations

import hmac
import urllib.parse
from pathlib import Path

import msgspec
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from mercury_lsp.http.errors import error_response
from mercury_lsp.http.settings import HttpLimits
from mercury_lsp.http.wire import ErrorDetail, ErrorResponse
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


class _Refused(Exception):
    """Raised inside a parser callback to stop parsing a request already answered."""


def bounded_protocol(limits: HttpLimits, api_key: str | None = None) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol, bounding a request's head before anything else sees it.

    * The head must be complete within ``header_timeout_s`` (from the connection's start, or
      from the first byte of a kept-alive request): against slow clients holding sockets.
    * The request line holds at most ``max_request_line_bytes`` (414) and the head at most
      ``max_header_bytes`` (431), counted as the bytes arrive: a flood of header lines, or one
      endless line, costs the server one read of memory, not the flood (httptools and uvicorn
      keep every header until the head ends, and nothing else bounded them).
    * With a key, a wrong ``Authorization`` header is answered 401 as soon as httptools hands
      it over (when the next header starts), before the rest of the head: a flood after it is
      not read (a missing key is known only at the head's end: ``BearerAuth``).
    * Refusals, and uvicorn's own 400 for what is not HTTP, are OpenAI error objects.
    """
    key = api_key.encode("utf-8") if api_key is not None else None
    timeout_s, line_cap, head_cap = limits.header_timeout_s, limits.max_request_line_bytes, limits.max_header_bytes

    class BoundedProtocol(HttpToolsProtocol):
        _header_timer = None
        _refused = False
        _in_head = True  # bytes read now belong to a request's head
        _head_read = 0  # bytes read since the head began (a line not yet parsed included)
        _head = 0  # the head's bytes parsed so far (request line, header names and values)

        # -------------------------------------------------------------- the deadline
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

        # -------------------------------------------------------------- refusals
        def _refuse(self, status: int, message: str, code: str, type: str = "invalid_request_error",
                    headers: bytes = b"") -> None:
            if self._refused:
                return
            self._refused = True
            self._disarm()
            body = msgspec.json.encode(ErrorResponse(error=ErrorDetail(message=message, type=type, code=code)))
            self.transport.write(STATUS_LINE[status] + b"content-type: application/json\r\ncontent-length: %d\r\n"
                                 b"connection: close\r\n%s\r\n%s" % (len(body), headers, body))
            self.transport.close()

        def _over(self, status: int, what: str, cap: int) -> None:
            self._refuse(status, f"{what} is longer than {cap} bytes", "header_too_large" if status == 431
                         else "request_line_too_long")
            raise _Refused

        def send_400_response(self, msg: str) -> None:  # uvicorn's, for bytes that are not HTTP
            self._refuse(400, "invalid HTTP request", "invalid_http")

        # -------------------------------------------------------------- the protocol
        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            if self._in_head:
                self._head_read += len(data)
            super().data_received(data)
            if self._in_head and self._head_read > line_cap + head_cap:  # one line, endless
                self._refuse(431, f"the request's head is longer than {line_cap + head_cap} bytes",
                             "header_too_large")

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._in_head, self._head = True, 0
            self._arm()

        def on_url(self, url: bytes) -> None:
            super().on_url(url)
            self._head += len(url)
            if len(self.url) > line_cap:
                self._over(414, "the request line", line_cap)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._head += len(name) + len(value) + len(b": \r\n")
            if self._head > head_cap:
                self._over(431, "the request's head", head_cap)
            if key is not None and name.lower() == b"authorization" and not key_matches(value, key) \
                    and urllib.parse.unquote(self.url.split(b"?", 1)[0].decode("latin-1")) not in OPEN_PATHS:
                self._refuse(401, "invalid API key", "invalid_api_key", "authentication_error",
                             b"www-authenticate: Bearer\r\n")
                raise _Refused
            super().on_header(name, value)

        def on_headers_complete(self) -> None:
            self._disarm()
            self._in_head, self._head_read = False, 0
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._in_head, self._head_read = True, 0

        def connection_lost(self, exc) -> None:  # type: ignore[override]
            self._disarm()
            super().connection_lost(exc)

    return BoundedProtocol
