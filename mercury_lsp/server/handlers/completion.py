"""``textDocument/inlineCompletion`` and the ``textDocument/completion`` fallback: both ask the
``CompletionService`` for one suggestion and convert it (``completion.items``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams

from mercury_lsp.completion import Suggestion, completion_items, inline_items
from mercury_lsp.documents import PositionError

if TYPE_CHECKING:
    from mercury_lsp.server.app import MercuryServer

COMPLETION_TRIGGERS = [".", "(", "[", "{", ",", ":", "=", " "]
INLINE_OPTIONS = lsp.InlineCompletionOptions()
COMPLETION_OPTIONS = lsp.CompletionOptions(trigger_characters=COMPLETION_TRIGGERS, resolve_provider=False)


async def suggest(ls: MercuryServer, uri: str, pos: lsp.Position) -> Suggestion | None:
    """The suggestion at ``pos``; None when there is none or the document moved on meanwhile."""
    try:
        s = await ls.completions.suggest(uri, pos.line, pos.character, ls.position_encoding)
    except PositionError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    doc = ls.docs.get(uri)
    if s is None or doc is None or doc.version != s.version:
        return None
    return s


async def inline_completion(ls: MercuryServer, params: lsp.InlineCompletionParams):
    uri = params.text_document.uri
    s = await suggest(ls, uri, params.position)
    if s is None:
        return lsp.InlineCompletionList(items=[])
    return inline_items(ls.docs.get(uri), s, ls.position_encoding)


async def completion(ls: MercuryServer, params: lsp.CompletionParams):
    mode = ls.current.completion_fallback
    if mode == "never" or (mode == "auto" and ls.inline_supported):
        return lsp.CompletionList(is_incomplete=False, items=[])
    uri = params.text_document.uri
    s = await suggest(ls, uri, params.position)
    if s is None:
        return lsp.CompletionList(is_incomplete=True, items=[])
    return completion_items(ls.docs.get(uri), s, ls.position_encoding, ls.markdown_docs)


def accepted(ls, *args) -> None:  # no annotations: pygls resolves them at run time
    """The client inserted a suggestion (``partial``: only its confident part): counted."""
    raw = args[0] if args else None
    first = raw[0] if isinstance(raw, list | tuple) and raw else raw
    partial = first.get("partial") if isinstance(first, dict) else getattr(first, "partial", False)
    ls.completions.counters.accepted += 1
    if partial:
        ls.completions.counters.accepted_confident += 1
