"""``POST /v1/completions`` (OpenAI) and ``POST /v1/fim/completions`` (Inception): one infill.

The prompt is plain text before the cursor (``suffix`` after it) or a fill-in-the-middle
prompt in one of Zed's formats, read back into prefix and suffix. ``stream: true`` answers in
server-sent events of OpenAI's chunk shape, ending with ``data: [DONE]``; the stream starts once
the completion is written, so a full queue, a loading model or a deadline is an HTTP status
(429, 503, 504), never a 200 whose body is an error.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from mercury_engine.options import PRIVATE_SCOPE, InfillOptions
from mercury_lsp.backend.base import BackendError
from mercury_lsp.backend.prompts import apply_stop, parse_prompt
from mercury_lsp.http.context import ApiContext
from mercury_lsp.http.errors import ApiError, from_backend
from mercury_lsp.http.settings import HttpLimits
from mercury_lsp.http.transport import SseResponse, decode, until_disconnect
from mercury_lsp.http.wire import (
    CompletionChoice,
    CompletionRequest,
    CompletionResponse,
    Usage,
)
from mercury_lsp.schema import InfillOutcome, InfillSpec, RetrievedChunk

log = logging.getLogger(__name__)
DONE = b"[DONE]"  # the stream's last event, as OpenAI's


def completion_id() -> str:
    return "cmpl-" + secrets.token_hex(12)


def to_spec(req: CompletionRequest, ctx: ApiContext) -> InfillSpec:
    prompt = req.prompt if isinstance(req.prompt, str) else req.prompt[0]
    parsed = parse_prompt(prompt)
    if parsed.format is not None and req.suffix:
        raise ApiError(400, f"the prompt is a fill-in-the-middle prompt ({parsed.format} format) and a suffix "
                       "was given too; send one or the other", param="suffix", code="ambiguous_suffix")
    prefix, suffix = parsed.prefix, parsed.suffix if parsed.format is not None else (req.suffix or "")
    limits = ctx.settings.limits
    prefix, suffix, retrieved = nearest(prefix, suffix, (*parsed.retrieved, *req.retrieved), limits.max_prompt_chars)
    max_tokens = checked_max_tokens(req.max_tokens, limits)
    if ctx.settings.debug_log_user_code:
        log.info("completion request (%s format): prefix %r suffix %r", parsed.format, prefix[-200:], suffix[:200])
    options = InfillOptions(preset=req.preset or ctx.settings.preset, temperature=req.temperature or 0.0,
                            seed=req.seed or 0, single_line=req.single_line, context_scope=context_scope(req.user))
    return InfillSpec(prefix=prefix, suffix=suffix, max_tokens=max_tokens, options=options, retrieved=retrieved)


def checked_max_tokens(asked: int | None, limits: HttpLimits) -> int:
    """``max_tokens`` as asked (400 past the server's limit, which the document states), else the default."""
    if asked is None:
        return min(limits.default_max_tokens, limits.max_tokens)
    if asked > limits.max_tokens:
        raise ApiError(400, f"max_tokens is {asked}; this server allows at most {limits.max_tokens}",
                       param="max_tokens", code="invalid_value")
    return asked


def nearest(prefix: str, suffix: str, retrieved: tuple[RetrievedChunk, ...],
            budget: int) -> tuple[str, str, tuple[RetrievedChunk, ...]]:
    """At most ``budget`` characters of context, those nearest the cursor: the suffix's start (at
    most half, unless the prefix is shorter), the prefix's end, then the retrieved chunks that
    fit, in their order. The engine keeps only what its window holds, nearest the cursor too:
    what is cut here it would never have read."""
    suffix = suffix[:max(budget // 2, budget - len(prefix))]
    prefix = prefix[max(0, len(prefix) - (budget - len(suffix))):]
    room = budget - len(prefix) - len(suffix)
    kept = []
    for chunk in retrieved:
        if len(chunk.text) <= room:
            kept.append(chunk)
            room -= len(chunk.text)
    return prefix, suffix, tuple(kept)


def context_scope(user: str | None) -> str:
    """Requests of one OpenAI ``user`` may reuse each other's context (typing in one file); a
    request without one shares it with nobody: no client's code shapes another's completion."""
    return PRIVATE_SCOPE if not user else f"user:{user}"


def stops(req: CompletionRequest) -> list[str]:
    if req.stop is None:
        return []
    return [req.stop] if isinstance(req.stop, str) else list(req.stop)


@dataclass(frozen=True)
class Returned:
    """What a completion answers: its text, why it ended, and the tokens of that text."""
    text: str
    finish_reason: str
    usage: Usage


def returned(outcome: InfillOutcome, stop: list[str], max_tokens: int) -> Returned:
    """The outcome as answered: cut at the first stop sequence and after ``max_tokens``
    generated tokens, and ``completion_tokens`` counting the tokens that wrote the text returned
    (a healed boundary token that only re-spells the prompt's end writes none; one cut by a stop
    sequence counts). Without token offsets (a remote backend), its own count, at most
    ``max_tokens``."""
    text, stopped = apply_stop(outcome.text, stop)
    reason = "stop" if stopped or outcome.stop_reason == "stop" else "length"
    ends = outcome.token_ends
    if len(ends) != outcome.tokens or not ends:
        count = min(outcome.tokens, max_tokens)
    else:
        count, start = 0, 0
        for end in ends:
            if end > start and start < len(text):
                count += 1
                if count == max_tokens and end < len(text):
                    text, reason = text[:end], "length"
            start = max(start, end)
    prompt = outcome.prompt_tokens
    return Returned(text, reason, Usage(prompt_tokens=prompt, completion_tokens=count, total_tokens=prompt + count))


async def completions(request: Request) -> Response:
    ctx: ApiContext = request.app.state.ctx
    req = await decode(request, ctx.settings.limits, CompletionRequest)
    model = ctx.check_model(req.model)
    spec = to_spec(req, ctx)
    cancel = ctx.cancel_token()
    try:  # streamed or not, the work is done before the status is sent: a refusal is an HTTP status
        outcome = await until_disconnect(request, ctx.backend.infill(spec, cancel), cancel)
    except BackendError as exc:
        raise from_backend(exc) from None
    answer = returned(outcome, stops(req), spec.max_tokens)
    if req.stream:
        return SseResponse(_events(answer, model), cancel)
    body = CompletionResponse(id=completion_id(), created=int(time.time()), model=model,
                              choices=[CompletionChoice(text=answer.text, finish_reason=answer.finish_reason)],
                              usage=answer.usage)
    return Response(msgspec.json.encode(body), media_type="application/json")


async def _events(answer: Returned, model: str) -> AsyncIterator[bytes]:
    """OpenAI's chunks: the text, then an empty chunk with the finish reason and the usage, then
    ``[DONE]`` (the engine writes a span whole: there is nothing to send before it is done)."""
    cid, created = completion_id(), int(time.time())
    if answer.text:
        yield msgspec.json.encode(CompletionResponse(id=cid, created=created, model=model,
                                                     choices=[CompletionChoice(text=answer.text)]))
    yield msgspec.json.encode(CompletionResponse(id=cid, created=created, model=model,
                                                 choices=[CompletionChoice(text="", finish_reason=answer.finish_reason)],
                                                 usage=answer.usage))
    yield DONE
