"""The suggestion cache: answers without the engine while the user types the start of a
suggestion, or comes back to a state already seen."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from mercury_lsp.schema import SpanKind

CACHE_KEY_CHARS = 2048  # prefix tail / suffix head compared by the cache


@dataclass
class _Entry:
    uri: str
    prefix_len: int
    prefix_tail: str
    suffix_len: int
    suffix_head: str
    text: str
    replace_len: int
    kind: SpanKind
    scope: int  # the workspace's state the suggestion was made in (``CompletionService.scope``)


class SuggestionCache:
    """LRU of suggestions keyed by the text around the cursor (not by version).

    ``get`` answers when the text after the cursor is unchanged and the text before it equals a
    cached prefix followed by the start of that entry's suggestion (typed along), or exactly, and
    the rest of the workspace is as it was (``scope``: the repository memory and the other open
    documents feed suggestions, so a change there makes older entries miss).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[tuple, _Entry] = OrderedDict()

    def clear(self) -> None:
        self._entries.clear()

    def put(self, uri: str, text: str, cursor: int, replace_end: int, suggestion: str, kind: SpanKind,
            scope: int = 0) -> None:
        if self.size <= 0 or not suggestion:
            return
        e = _Entry(uri, cursor, text[max(0, cursor - CACHE_KEY_CHARS):cursor], len(text) - cursor,
                   text[cursor:cursor + CACHE_KEY_CHARS], suggestion, replace_end - cursor, kind, scope)
        key = (uri, e.prefix_len, e.prefix_tail, e.suffix_len, e.suffix_head)
        self._entries[key] = e
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def get(self, uri: str, text: str, cursor: int, typeahead: bool = True,
            scope: int = 0) -> tuple[str, int, SpanKind] | None:
        """(rest of the suggestion, replace end, kind) or None; ``typeahead=False``: exact
        repeats only (the cursor where the suggestion was made)."""
        suffix_len = len(text) - cursor
        head = None
        for key in reversed(self._entries):
            e = self._entries[key]
            if e.uri != uri or e.suffix_len != suffix_len or e.prefix_len > cursor or e.scope != scope:
                continue
            typed = cursor - e.prefix_len
            if typed >= len(e.text) or (typed and not typeahead):
                continue
            if head is None:
                head = text[cursor:cursor + CACHE_KEY_CHARS]
            if head != e.suffix_head:
                continue
            if text[e.prefix_len:cursor] != e.text[:typed]:
                continue
            if text[max(0, e.prefix_len - len(e.prefix_tail)):e.prefix_len] != e.prefix_tail:
                continue
            rest = e.text[typed:]
            if not rest.strip():
                continue
            self._entries.move_to_end(key)
            return rest, cursor + e.replace_len, e.kind
        return None
