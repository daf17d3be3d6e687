"""The protocol rules pygls does not enforce (``MercuryProtocol``).

* every inbound message is read inside one guard (``receive``): whatever goes wrong while
  checking, decoding or converting it, a request is answered (InvalidRequest / InvalidParams)
  and a notification costs one log line; no exception reaches the transport. A string UTF-8
  cannot encode (a lone surrogate) is invalid params wherever it is, but in the document texts;
* every request gets exactly one response (bad frames and messages: ``framing``, ``jsonrpc``;
  internal errors carry an incident id, never a traceback): requests before ``initialize`` answer
  ServerNotInitialized, after ``shutdown`` InvalidRequest, with malformed params InvalidParams;
* pygls' own copy of open documents is bypassed: the server's ``DocumentStore`` is the only one
  (the document notifications go straight to the registered handlers);
* nothing outlives the connection (``abandon_requests``; no per-instance method caches).
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types as lsp
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
)
from pygls.protocol.language_server import lsp_method

from mercury_lsp.server.access import admit
from mercury_lsp.server.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    Reject,
    check_message,
    public_error,
    unencodable,
    valid_id,
)

log = logging.getLogger("mercury_lsp")


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

    # ------------------------------------------------------------------ the guard
    def receive(self, data: dict | list | Reject) -> bool:
        """Handle one frame's content (decoded JSON, or the framing's Reject). Never raises;
        False when the connection must end (a wrong token)."""
        try:
            reject = data if isinstance(data, Reject) else check_message(data)
            if reject is None and not self.initialize_seen and (reject := admit(data, self.token)) is not None:
                self.send_reject(reject)
                return False
            if reject is not None:
                self.send_reject(reject)
                return True
            message = self._structured(data)
        except Exception as exc:  # a bug in the checks above: still one answer, still reading
            self._unreadable(data, type(exc).__name__)
            return True
        if message is None:
            return True
        try:
            self.handle_message(message)
        except Exception as exc:  # pygls answers a handler's own failures; this is dispatch failing
            log.error("message could not be dispatched (%s): %s", getattr(message, "method", "response"),
                      type(exc).__name__)
            msg_id = getattr(message, "id", None)
            if getattr(message, "method", None) is not None and valid_id(msg_id):
                self._error(msg_id, INTERNAL_ERROR, "internal error")
        return True

    def _structured(self, data: dict):
        """The typed message pygls handles, or None when ``data`` has been answered instead."""
        if (where := unencodable(data)) is not None:
            self._unreadable(data, f"{where} holds a lone UTF-16 surrogate (not encodable as UTF-8)")
            return None
        try:
            return self.structure_message(data)
        except Exception as exc:  # pygls wraps cattrs' errors; anything else is unreadable too
            self._unreadable(data, type(exc.__cause__ or exc).__name__)
            return None

    def structure_message(self, data: dict):
        """pygls' structuring, without its traceback in the log (it may quote the message)."""
        method = data.get("method")
        if "id" in data and "error" in data:
            return self._converter.structure(data, lsp.ResponseErrorMessage)
        if "id" in data and method is not None:
            return self._converter.structure(data, self.get_message_type(method) or JsonRPCRequestMessage)
        if "id" in data:
            return self._converter.structure(data, self._result_types.pop(data["id"], None) or JsonRPCResponseMessage)
        return self._converter.structure(data, self.get_message_type(method) or JsonRPCNotification)

    def _unreadable(self, data: Any, reason: str) -> None:
        """A message that could not be read: a request answered InvalidParams, a response turned
        into an error for whoever waits on it, a notification logged once."""
        if not isinstance(data, dict):
            log.warning("message could not be read: %s", reason)
            return
        method, msg_id = data.get("method"), data.get("id")
        if isinstance(method, str) and "id" in data:
            log.warning("invalid params for %s: %s", method, reason)
            self._error(msg_id if valid_id(msg_id) else None, INVALID_PARAMS, f"invalid params for {method}: {reason}")
        elif isinstance(method, str):
            self.bad_notification(data, reason)
        elif valid_id(msg_id) and (fut := self._request_futures.pop(msg_id, None)) is not None:
            log.warning("unreadable response to request %r: %s", msg_id, reason)
            self._result_types.pop(msg_id, None)
            if not fut.done():
                fut.set_exception(ValueError(f"unreadable response: {reason}"))
        else:
            log.warning("unreadable response: %s", reason)

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        """pygls files the future of every handler that is a generator or a coroutine under
        ``msg_id`` and removes it only for requests: each document notification (one per
        keystroke) left one behind, with its result, for the connection's lifetime. A finished
        handler's future leaves the table here, whatever kind of message started it."""
        def done(future) -> None:
            if self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]
            callback(future)

        super()._execute_handler(msg_id, handler, done, args, kwargs)

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

    def bad_notification(self, data: dict, reason: str) -> None:
        """A notification whose params could not be read (requests get InvalidParams instead):
        one log line; a didOpen/didChange is read again plainly (``handlers.sync``)."""
        method = data.get("method")
        log.warning("unreadable %s notification: %s", method, reason)
        if self.initialize_seen:
            try:
                self._server.unreadable_notification(method, data.get("params"))
            except Exception as exc:
                log.error("unreadable %s notification could not be handled: %s", method, type(exc).__name__)

    def _error(self, msg_id, code: int, message: str) -> None:
        self._send_response(msg_id, error=lsp.ResponseError(code=code, message=message))

    def handle_message(self, message) -> None:
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
