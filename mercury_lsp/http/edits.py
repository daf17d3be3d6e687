"""``POST /v1/edit/completions`` (Inception's shape) and ``POST /v1/next-edit`` (every location).

Both are answered by the next-edit engine (``mercury_lsp.next_edit``). The edit endpoint
rewrites the ``<|code_to_edit|>`` region: the predicted edits that fall inside it are applied;
with none (no edit history, or nothing follows from it) the model fills in at the cursor.
"""

from __future__ import annotations

import logging
import time

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from mercury_engine.options import PRIVATE_SCOPE, InfillOptions
from mercury_lsp import __version__
from mercury_lsp.backend.base import BackendError
from mercury_lsp.documents import PositionEncoding, index_of_units
from mercury_lsp.http.completions import checked_max_tokens, completion_id, returned
from mercury_lsp.http.context import ApiContext
from mercury_lsp.http.edit_prompt import EditPrompt, parse_edit_prompt
from mercury_lsp.http.errors import ApiError, from_backend
from mercury_lsp.http.transport import decode, until_disconnect
from mercury_lsp.http.wire import (
    AssistantMessage,
    ChatChoice,
    EditRequest,
    EditResponse,
    NextEditRequest,
    Usage,
)
from mercury_lsp.next_edit import DocState, NextEditQuery, apply_edits, diff_region
from mercury_lsp.schema import InfillSpec, NextEditResult, TextPosition
from mercury_lsp.syntax import grammar_for

log = logging.getLogger(__name__)


def _offset(text: str, pos: TextPosition, enc: PositionEncoding) -> int:
    """The code-point offset of ``pos``, clamped as LSP positions are: a line past the end is the
    end of the text, a column past its line's end the line's end, one inside a character its start."""
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    if pos.line >= len(starts):
        return len(text)
    end = starts[pos.line + 1] - 1 if pos.line + 1 < len(starts) else len(text)
    return starts[pos.line] + index_of_units(text[starts[pos.line]:end], pos.character, enc, False)


def _check_size(ctx: ApiContext, total: int) -> None:
    limit = ctx.settings.limits.max_body_bytes
    if total > limit:
        raise ApiError(400, f"the files have {total} characters; the limit is {limit}", param="files",
                       code="context_length_exceeded")


def next_edit_query(req: NextEditRequest, enc: PositionEncoding) -> NextEditQuery | None:
    """The query, or None when there is no edit to follow (no file has ``previousTexts`` and no
    cursor is given: nothing follows). Files of one uri: the last one counts."""
    by_uri = {f.uri: DocState(f.uri, f.text, grammar_for(f.language_id, f.uri), f.version, tuple(f.previous_texts),
                              1.0 if f.previous_texts else 0.0) for f in req.files}
    docs = tuple(by_uri.values())
    edited = [d for d in docs if d.history]
    cursor_uri = req.cursor_uri or (edited[0].uri if edited else docs[0].uri)
    if cursor_uri not in by_uri:
        raise ApiError(404, f"cursorUri {cursor_uri[:200]!r} names none of the files", param="cursorUri",
                       code="unknown_file")
    doc = by_uri[cursor_uri]
    if req.cursor is not None:
        cursor = _offset(doc.text, req.cursor, enc)
    elif doc.history:
        cursor = diff_region(doc.history[0], doc.text)[2]
    else:
        return None
    return NextEditQuery(docs, cursor_uri, cursor, enc, req.options)


async def next_edit(request: Request) -> Response:
    ctx: ApiContext = request.app.state.ctx
    req = await decode(request, ctx.settings.limits, NextEditRequest)
    model = ctx.check_model(req.model)
    _check_size(ctx, sum(len(f.text) + sum(map(len, f.previous_texts)) for f in req.files))
    query = next_edit_query(req, PositionEncoding(req.position_encoding))
    if query is None:
        result = NextEditResult(edits=[], model=model, version=__version__, position_encoding=req.position_encoding)
        return Response(msgspec.json.encode(result), media_type="application/json")
    cancel = ctx.cancel_token()
    try:
        result = await until_disconnect(request, ctx.backend.next_edit(query, cancel), cancel)
    except BackendError as exc:
        raise from_backend(exc) from None
    return Response(msgspec.json.encode(result), media_type="application/json")


def _within(result: NextEditResult, prompt: EditPrompt, uri: str) -> list[tuple[int, int, str]]:
    """The predicted edits of the prompt's file that lie inside its region (code-point offsets)."""
    starts = [0] + [i + 1 for i, ch in enumerate(prompt.text) if ch == "\n"]
    out = []
    for e in result.edits:
        if e.uri != uri:
            continue
        s = starts[e.range.start.line] + e.range.start.character
        t = starts[e.range.end.line] + e.range.end.character
        if prompt.region[0] <= s <= t <= prompt.region[1]:
            out.append((s, t, e.new_text))
    out.sort()
    keep, last = [], -1
    for s, t, new in out:  # the highest-ranked edit wins where two overlap
        if s >= last:
            keep.append((s, t, new))
            last = t
    return keep


async def edit_completions(request: Request) -> Response:
    ctx: ApiContext = request.app.state.ctx
    req = await decode(request, ctx.settings.limits, EditRequest)
    model = ctx.check_model(req.model)
    users = [m for m in req.messages if m.role == "user"]
    if not users:  # the schema asks for one (EditRequest.messages: contains)
        raise ApiError(400, "send a user message carrying the edit prompt", param="messages",
                       code="invalid_edit_prompt")
    prompt = parse_edit_prompt(users[-1].content)  # the newest user turn, as a chat model reads it
    _check_size(ctx, len(prompt.text))
    if ctx.settings.debug_log_user_code:
        log.info("edit request for %r: %r", prompt.path, prompt.text[prompt.region[0]:prompt.region[1]])
    uri = "file:///" + (prompt.path.lstrip("/") or "untitled")
    cancel = ctx.cancel_token()
    region = prompt.text[prompt.region[0]:prompt.region[1]]
    try:
        edits: list[tuple[int, int, str]] = []
        prompt_tokens = completion_tokens = 0
        if prompt.before is not None:
            doc = DocState(uri, prompt.text, grammar_for("", uri), None, (prompt.before,), 1.0)
            query = NextEditQuery((doc,), uri, prompt.cursor, PositionEncoding.UTF32)
            result = await until_disconnect(request, ctx.backend.next_edit(query, cancel), cancel)
            edits = _within(result, prompt, uri)
        if edits:
            base = prompt.region[0]
            new_region = apply_edits(region, [(s - base, t - base, new) for s, t, new in edits])
        else:  # nothing follows from the history: complete at the cursor
            max_tokens = checked_max_tokens(req.max_tokens, ctx.settings.limits)
            options = InfillOptions(preset=ctx.settings.preset, temperature=req.temperature or 0.0, seed=0,
                                    single_line=True, context_scope=PRIVATE_SCOPE)
            spec = InfillSpec(prefix=prompt.text[:prompt.cursor], suffix=prompt.text[prompt.cursor:],
                              max_tokens=max_tokens, options=options)
            outcome = await until_disconnect(request, ctx.backend.infill(spec, cancel), cancel)
            answer = returned(outcome, [], max_tokens)
            at = prompt.cursor - prompt.region[0]
            new_region = region[:at] + answer.text + region[at:]
            prompt_tokens, completion_tokens = answer.usage.prompt_tokens, answer.usage.completion_tokens
    except BackendError as exc:
        raise from_backend(exc) from None
    body = EditResponse(id=completion_id(), created=int(time.time()), model=model,
                        choices=[ChatChoice(message=AssistantMessage(content=new_region))],
                        usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                                    total_tokens=prompt_tokens + completion_tokens))
    return Response(msgspec.json.encode(body), media_type="application/json")

