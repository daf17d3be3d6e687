"""Reading a request body within limits, and watching for a client that goes away.

The body is read chunk by chunk, bounded in size (``413``) and in time (``408``, against a
client that sends it slowly). While the engine works, ``until_disconnect`` waits for the
request's own ``http.disconnect``: a client that goes away cancels its work (the scheduler
drops it before its next step). ``SseResponse`` does the same while it streams.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from typing import TypeVar

import msgspec
from starlette.requests import ClientDisconnect, Request
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from mercury_lsp.engine_client import CancelToken
from mercury_lsp.http.errors import CLIENT_CLOSED_REQUEST, ApiError, validation_error
from mercury_lsp.http.settings import HttpLimits
from mercury_lsp.server.jsonrpc import MAX_JSON_DEPTH, json_depth

T = TypeVar("T")


async def read_body(request: Request, limits: HttpLimits) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise ApiError(400, "invalid Content-Length header", code="invalid_header")
        if int(declared) > limits.max_body_bytes:
            raise _too_large(limits)
    parts: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(limits.body_timeout_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limits.max_body_bytes:
                    raise _too_large(limits)
                parts.append(chunk)
    except TimeoutError:
        raise ApiError(408, f"the request body did not arrive within {limits.body_timeout_s:g} s",
                       code="body_timeout", headers={"Connection": "close"}) from None
    except ClientDisconnect:
        raise ApiError(CLIENT_CLOSED_REQUEST, "the client disconnected", "cancelled") from None
    return b"".join(parts)


def _too_large(limits: HttpLimits) -> ApiError:
    return ApiError(413, f"the request body is larger than {limits.max_body_bytes} bytes",
                    code="body_too_large", headers={"Connection": "close"})


async def decode(request: Request, limits: HttpLimits, cls: type[T]) -> T:
    """The body as ``cls``, with the types the OpenAPI document states and nothing laxer: a
    boolean is ``true``/``false`` (not 0, not "true"), a number is not a string. An integral
    number is an integer (``16.0``: JSON Schema says so). JSON nested deeper than
    ``MAX_JSON_DEPTH`` is refused before any of it is converted (unknown fields included)."""
    body = await read_body(request, limits)
    ctype = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    if ctype not in ("application/json", "text/json", ""):
        raise ApiError(415, f"unsupported content type {ctype!r}; send application/json",
                       code="unsupported_media_type")
    try:
        raw = msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        raise validation_error(exc) from None
    except RecursionError:
        raise _too_deep() from None
    if json_depth(raw) > MAX_JSON_DEPTH:
        raise _too_deep()
    try:
        return msgspec.convert(_integral(raw), type=cls, strict=True)
    except msgspec.ValidationError as exc:
        raise validation_error(exc) from None


def _too_deep() -> ApiError:
    return ApiError(400, f"the body is JSON nested deeper than {MAX_JSON_DEPTH} levels", code="invalid_json")


def _integral(value):
    """``value`` with every integral float an int (JSON Schema's integers include 16.0)."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


async def _disconnected(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def until_disconnect(request: Request, work: Awaitable[T], cancel: CancelToken) -> T:
    """``await work``; if the client disconnects first, cancel it (and its engine request)."""
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(_disconnected(request.receive))
    try:
        await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
    if not task.done():
        cancel.cancel()
        task.cancel()
        raise ApiError(CLIENT_CLOSED_REQUEST, "the client disconnected", "cancelled")
    return task.result()


class SseResponse(StreamingResponse):
    """``text/event-stream`` from an async iterator of ``data:`` payloads; the iterator is
    cancelled (and with it the engine request) as soon as the client disconnects."""

    def __init__(self, events: AsyncIterator[bytes], cancel: CancelToken) -> None:
        super().__init__(events, media_type="text/event-stream",
                         headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        self.events = events
        self.cancel = cancel

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})

        async def pump() -> None:
            async for data in self.events:
                await send({"type": "http.response.body", "body": b"data: " + data + b"\n\n",
                            "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})

        task = asyncio.ensure_future(pump())
        watch = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watch.cancel()
            if not task.done():
                self.cancel.cancel()
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]
