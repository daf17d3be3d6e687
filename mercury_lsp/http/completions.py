"""``POST /v1/completions`` (OpenAI) and ``POST /v1/fim/completions`` (Inception): one infill.

The prompt is plain text before the cursor (``suffix`` after it) or a fill-in-the-middle
prompt in one of Zed's formats, read back into prefix and suffix. ``stream: true`` answers in
server-sent events of OpenAI's chunk shape, ending with ``data: [DONE]``.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncIterator

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from mercury_engine.options import PRIVATE_SCOPE, InfillOptions
from mercury_lsp.backend.base import BackendError
from mercury_lsp.backend.prompts import apply_stop, parse_prompt
from mercury_lsp.engine_client import CancelToken
from mercury_lsp.http.context import ApiContext
from mercury_lsp.http.errors import ApiError, from_backend
from mercury_lsp.http.transport import SseResponse, decode, until_disconnect
from mercury_lsp.http.wire import (
    CompletionChoice,
    CompletionRequest,
    CompletionResponse,
    ErrorDetail,
    ErrorResponse,
    Usage,
)
from mercury_lsp.schema import InfillOutcome, InfillSpec

log = logging.getLogger(__name__)


def completion_id() -> str:
    return "cmpl-" + secrets.token_hex(12)


def to_spec(req: CompletionRequest, ctx: ApiContext) -> InfillSpec:
    prompt = req.prompt if isinstance(req.prompt, str) else req.prompt[0]
    parsed = parse_prompt(prompt)
    if parsed.format is not None and req.suffix:
        raise ApiError(400, f"the prompt is a fill-in-the-middle prompt ({parsed.format} format) and a suffix "
                       "was given too; send one or the other", param="suffix", code="ambiguous_suffix")
    prefix, suffix = parsed.prefix, parsed.suffix if parsed.format is not None else (req.suffix or "")
    retrieved = (*parsed.retrieved, *req.retrieved)
    limits = ctx.settings.limits
    size = len(prefix) + len(suffix) + sum(len(c.text) for c in retrieved)
    if size > limits.max_prompt_chars:
        raise ApiError(400, f"prompt, suffix and retrieved context have {size} characters; the limit is "
                       f"{limits.max_prompt_chars}", param="prompt", code="context_length_exceeded")
    max_tokens = req.max_tokens if req.max_tokens is not None else min(limits.default_max_tokens,
                                                                       limits.max_tokens)
    if max_tokens > limits.max_tokens:
        raise ApiError(400, f"max_tokens is {max_tokens}; this server allows at most {limits.max_tokens}",
                       param="max_tokens", code="invalid_value")
    if ctx.settings.debug_log_user_code:
        log.info("completion request (%s format): prefix %r suffix %r", parsed.format, prefix[-200:], suffix[:200])
    options = InfillOptions(preset=req.preset or ctx.settings.preset, temperature=req.temperature or 0.0,
                            seed=req.seed or 0, single_line=req.single_line, context_scope=context_scope(req.user))
    return InfillSpec(prefix=prefix, suffix=suffix, max_tokens=max_tokens, options=options, retrieved=retrieved)


def context_scope(user: str | None) -> str:
    """Requests of one OpenAI ``user`` may reuse each other's context (typing in one file); a
    request without one shares it with nobody: no client's code shapes another's completion."""
    return PRIVATE_SCOPE if not user else f"user:{user}"


def stops(req: CompletionRequest) -> list[str]:
    if req.stop is None:
        return []
    return [req.stop] if isinstance(req.stop, str) else list(req.stop)


def finish(outcome: InfillOutcome, stop: list[str]) -> tuple[str, str]:
    text, stopped = apply_stop(outcome.text, stop)
    return text, "stop" if stopped or outcome.stop_reason == "stop" else "length"


def usage(outcome: InfillOutcome) -> Usage:
    return Usage(prompt_tokens=outcome.prompt_tokens, completion_tokens=outcome.tokens,
                 total_tokens=outcome.prompt_tokens + outcome.tokens)


async def completions(request: Request) -> Response:
    ctx: ApiContext = request.app.state.ctx
    req = await decode(request, ctx.settings.limits, CompletionRequest)
    model = ctx.check_model(req.model)
    spec = to_spec(req, ctx)
    cancel = ctx.cancel_token()
    if req.stream:
        return SseResponse(_stream(ctx, spec, req, model, cancel), cancel)
    try:
        outcome = await until_disconnect(request, ctx.backend.infill(spec, cancel), cancel)
    except BackendError as exc:
        raise from_backend(exc) from None
    text, reason = finish(outcome, stops(req))
    body = CompletionResponse(id=completion_id(), created=int(time.time()), model=model,
                              choices=[CompletionChoice(text=text, finish_reason=reason)], usage=usage(outcome))
    return Response(msgspec.json.encode(body), media_type="application/json")


async def _stream(ctx: ApiContext, spec: InfillSpec, req: CompletionRequest, model: str,
                  cancel: CancelToken) -> AsyncIterator[bytes]:
    cid, created = completion_id(), int(time.time())
    try:
        outcome = await ctx.backend.infill(spec, cancel)
    except BackendError as exc:
        err = from_backend(exc)
        yield msgspec.json.encode(ErrorResponse(error=ErrorDetail(message=err.message, type=err.type,
                                                                  code=err.code)))
        yield b"[DONE]"
        return
    text, reason = finish(outcome, stops(req))
    if text:
        yield msgspec.json.encode(CompletionResponse(id=cid, created=created, model=model,
                                                     choices=[CompletionChoice(text=text)]))
    yield msgspec.json.encode(CompletionResponse(id=cid, created=created, model=model,
                                                 choices=[CompletionChoice(text="", finish_reason=reason)],
                                                 usage=usage(outcome)))
    yield b"[DONE]"

