"""Errors in OpenAI's error-object shape: ``{"error": {"message", "type", "param", "code"}}``."""

from __future__ import annotations

import msgspec
from starlette.responses import Response

from mercury_lsp.backend.base import (
    BackendError,
    Cancelled,
    DeadlineExceeded,
    InvalidInput,
    NotReady,
    Overloaded,
    Unavailable,
)
from mercury_lsp.http.wire import ErrorDetail, ErrorResponse

# Seconds a client should wait before retrying a refused request (Retry-After).
RETRY_AFTER_S = 1
# Non-standard, but what nginx and others answer when the client went away before the answer.
CLIENT_CLOSED_REQUEST = 499


class ApiError(Exception):
    def __init__(self, status: int, message: str, type: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.type, self.param, self.code = status, message, type, param, code
        self.headers = headers or {}

    def response(self) -> Response:
        return error_response(self.status, self.message, self.type, self.param, self.code, self.headers)


def error_response(status: int, message: str, type: str = "invalid_request_error", param: str | None = None,
                   code: str | None = None, headers: dict[str, str] | None = None) -> Response:
    body = msgspec.json.encode(ErrorResponse(error=ErrorDetail(message=message, type=type, param=param,
                                                               code=code)))
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def from_backend(exc: BackendError) -> ApiError:
    retry = {"Retry-After": str(RETRY_AFTER_S)}
    if isinstance(exc, Overloaded):
        return ApiError(429, str(exc), "rate_limit_error", code="queue_full", headers=retry)
    if isinstance(exc, NotReady):
        return ApiError(503, str(exc), "server_error", code="model_not_ready", headers=retry)
    if isinstance(exc, DeadlineExceeded):
        return ApiError(504, str(exc), "timeout_error", code="deadline_exceeded")
    if isinstance(exc, Cancelled):
        return ApiError(CLIENT_CLOSED_REQUEST, str(exc), "cancelled", code="cancelled")
    if isinstance(exc, InvalidInput):
        return ApiError(400, str(exc), "invalid_request_error", code="invalid_input")
    if isinstance(exc, Unavailable):
        return ApiError(502, str(exc), "server_error", code="backend_unavailable")
    return ApiError(500, str(exc), "server_error")


def validation_error(exc: msgspec.ValidationError | msgspec.DecodeError) -> ApiError:
    text = str(exc)
    param = None
    if " - at `$." in text:
        text, _, where = text.partition(" - at `$.")
        param = where.rstrip("`").split("[")[0].split(".")[0] or None
    if isinstance(exc, msgspec.ValidationError):
        return ApiError(400, f"invalid request: {text}", param=param, code="invalid_value")
    return ApiError(400, f"the body is not valid JSON: {text}", code="invalid_json")
