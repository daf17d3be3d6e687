"""The protocol rules pygls does not enforce (``MercuryProtocol``).

* every request gets exactly one response (bad frames and messages: ``framing``, ``jsonrpc``;
  internal errors carry an incident id, never a traceback): requests before ``initialize`` answer
  ServerNotInitialized, after ``shutdown`` InvalidRequest, with malformed params InvalidParams;
* pygls' own copy of open documents is bypassed: the server's ``DocumentStore`` is the only one
  (the document notifications go straight to the registered handlers);
* nothing outlives the connection (``abandon_requests``; no per-instance method caches).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from mercury_lsp.server.jsonrpc import Reject, public_error

log = logging.getLogger("mercury_lsp")


@dataclass(frozen=True)
class BadRequest:
    """A request whose params could not be read: answered with InvalidParams."""
    id: Any
    method: str


class MercuryProtocol(LanguageServerProtocol):
    def __init__(self, server, converter) -> None:
        super().__init__(server, converter)
        self.initialize_seen = False
        self.exit_code: int | None = None
        self.token: str | None = None  # required in ``initialize`` (TCP with --token-file)

    @property
    def shut_down(self) -> bool:
        """``shutdown`` was received (exiting now is a clean exit)."""
        return bool(self._shutdown)

    # pygls caches these two with ``functools.lru_cache`` on the method, keyed by ``self``: the
    # cache kept the protocol of every recent connection, and with it the connection's server and
    # documents, after the connection ended. A dict lookup needs no cache.
    def get_message_type(self, method: str) -> type | None:
        return lsp.METHOD_TO_TYPES.get(method, (None,))[0]

    def get_result_type(self, method: str) -> type | None:
        return lsp.METHOD_TO_TYPES.get(method, (None, None))[1]

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException:
            if isinstance(data, dict) and "id" in data and "method" in data:
                return BadRequest(data["id"], str(data["method"]))
            raise

    def send_reject(self, reject: Reject) -> None:
        """Answer a bad frame or message (``jsonrpc.Reject``; id ``null`` when unreadable)."""
        log.warning("message refused (%d): %s", reject.code, reject.message)
        self._send_data(reject.response())

    def _send_response(self, msg_id, result=None, error=None) -> None:
        super()._send_response(msg_id, result, public_error(error, msg_id) if error is not None else None)

    def abandon_requests(self) -> None:
        """The client is gone: cancel every request still in flight (no one reads the answers)."""
        futures, self._request_futures = list(self._request_futures.values()), {}
        for fut in futures:
            fut.cancel()

    def bad_notification(self, data: dict, exc: Exception) -> None:
        """A notification whose params could not be read (requests get InvalidParams instead)."""
        method = data.get("method")
        log.warning("unreadable %s notification: %s", method, type(exc).__name__)
        if self.initialize_seen:
            self._server.unreadable_notification(method, data.get("params"))

    def _error(self, msg_id, code: int, message: str) -> None:
        self._send_response(msg_id, error=lsp.ResponseError(code=code, message=message))

    def handle_message(self, message) -> None:
        if isinstance(message, BadRequest):
            self._error(message.id, lsp.ErrorCodes.InvalidParams, f"invalid params for {message.method}")
            return
        method = getattr(message, "method", None)
        is_request = method is not None and hasattr(message, "id")
        if method is not None and not self.initialize_seen and method not in (lsp.INITIALIZE, lsp.EXIT):
            if is_request:
                self._error(message.id, lsp.ErrorCodes.ServerNotInitialized, "server not initialized")
            return
        if method == lsp.INITIALIZE and is_request:
            if self.initialize_seen:
                self._error(message.id, lsp.ErrorCodes.InvalidRequest, "already initialized")
                return
            self.initialize_seen = True
        if self._shutdown and is_request and method != lsp.EXIT:
            self._error(message.id, lsp.ErrorCodes.InvalidRequest, "server is shutting down")
            return
        super().handle_message(message)

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams):
        result = yield from super().lsp_initialize(params)
        result.capabilities.position_encoding = self._server.position_encoding.value
        return result

    # Documents live in mercury_lsp.documents only (no second copy in pygls' workspace).
    def _user(self, method: str, params):
        if (handler := self.fm.features.get(method)) is not None:
            yield handler, (params,), None

    @lsp_method(lsp.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params):
        yield from self._user(lsp.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params):
        yield from self._user(lsp.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params):
        yield from self._user(lsp.TEXT_DOCUMENT_DID_CLOSE, params)

    @lsp_method(lsp.EXIT)
    def lsp_exit(self, *args):
        yield from self._user(lsp.EXIT, None)
        self.exit_code = 0 if self._shutdown else 1
