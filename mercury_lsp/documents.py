"""Open documents: text, versions, positions in the client's encoding, incremental sync, and the
edit history (coalesced edits) that context and next-edit read.

Offsets are Python string indices (Unicode code points). Lines end at ``\\n`` (a ``\\r`` before it
belongs to the line ending). Everything here runs on the event loop and is cheap: an edit costs
O(edit + lines after it); the syntax tree is *not* parsed here (see ``syntax``), the document only
records the byte-level edits the next incremental parse needs.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from mercury_lsp.edits import checked_changes, clean_text
from mercury_lsp.heap import TRIM_AFTER_CHARS, release_free_memory
from mercury_lsp.schema import EditRecord
from mercury_lsp.text import (
    NEWLINE,
    Lines,
    PositionEncoding,
    PositionError,
    end_point,
    index_of_units,
    line_starts_of,
    units_len,
    utf8_len,
    utf16_len,
)

__all__ = ["Document", "DocumentSnapshot", "DocumentStore", "EditHistory", "PositionEncoding",
           "PositionError", "index_of_units", "units_len", "utf16_len"]

HOT_SPOT_MERGE_CHARS = 256  # edits closer than this to a newer one count as the same region
HOT_SPOTS = 8  # recent edit regions remembered per document (the context window favours them)
MAX_PENDING_EDITS = 2048  # byte edits kept for the next incremental parse before starting over
RECENT_RECORDS = 16  # default number of records ``EditHistory.recent`` returns
SYNTAX_MAX_BYTES = 1 << 20  # default size above which documents get no syntax tree (see Settings)


@dataclass(frozen=True)
class ByteEdit:
    """A tree-sitter input edit (byte offsets and (row, byte column) points)."""
    seq: int
    start_byte: int
    old_end_byte: int
    new_end_byte: int
    start_point: tuple[int, int]
    old_end_point: tuple[int, int]
    new_end_point: tuple[int, int]


@dataclass(frozen=True)
class SyntaxSnapshot:
    """What the parser needs to bring a document's tree up to date (immutable)."""
    grammar: str
    tree: object | None  # tree_sitter.Tree of an older text, or None (parse from scratch)
    edits: tuple[ByteEdit, ...]  # to apply to ``tree`` (in order) before re-parsing
    seq: int  # sequence number of the last edit included


@dataclass(frozen=True)
class DocumentSnapshot(Lines):
    """An immutable view of a document at one version: what a worker thread may read."""
    uri: str
    language_id: str
    version: int
    text: str
    line_starts: tuple[int, ...]  # a copy: the document's own list changes with the next edit
    syntax: SyntaxSnapshot | None
    hot_spots: tuple[int, ...]  # offsets of recent edits, most recent first
    crlf: bool


class Document(Lines):
    """An open document; ``line_starts`` is kept up to date edit by edit."""

    def __init__(self, uri: str, language_id: str, version: int, text: str, grammar: str | None) -> None:
        self.uri = uri
        self.language_id = language_id
        self.version = version
        self.grammar = grammar
        self.text = ""
        self.line_starts: list[int] = [0]
        self.hot_spots: deque[int] = deque(maxlen=HOT_SPOTS)
        self._tree: object | None = None
        self._edits: list[ByteEdit] = []
        self._seq = 0
        self._reset_seq = 0  # trees parsed before this edit belong to another text
        self._tree_seq = 0  # the edit the kept tree was parsed at (jobs may finish out of order)
        self._set_text(text)

    # ------------------------------------------------------------------ state
    def _set_text(self, text: str) -> None:
        self.text = text
        self.line_starts = line_starts_of(text)
        self._tree = None
        self._edits.clear()
        self.hot_spots.clear()

    @property
    def binary(self) -> bool:
        return "\x00" in self.text

    @property
    def crlf(self) -> bool:
        first = self.text.find("\n")
        return first > 0 and self.text[first - 1] == "\r"

    def snapshot(self, syntax_max_bytes: int) -> DocumentSnapshot:
        syntax = None
        if self.grammar is not None and len(self.text) <= syntax_max_bytes:
            syntax = SyntaxSnapshot(self.grammar, self._tree, tuple(self._edits), self._seq)
        return DocumentSnapshot(self.uri, self.language_id, self.version, self.text,
                                tuple(self.line_starts), syntax, tuple(self.hot_spots), self.crlf)

    def adopt_tree(self, tree: object, seq: int) -> None:
        """A worker parsed the text as of edit ``seq``: keep the tree, drop the edits it covers."""
        if not self._reset_seq <= seq <= self._seq:
            return  # the text was reset in between: that tree belongs to another text
        if self._tree is not None and seq < self._tree_seq:
            return  # a newer tree is kept already (the edits this one lacks are gone)
        self._edits = [e for e in self._edits if e.seq > seq]
        self._tree, self._tree_seq = tree, seq

    # ------------------------------------------------------------------ edits
    def replace(self, start: int, end: int, new: str, track_syntax: bool) -> str:
        """Replace ``text[start:end]`` with ``new``; returns the old text."""
        text = self.text
        old = text[start:end]
        if track_syntax and self.grammar is not None:
            self._record_byte_edit(start, end, new)
        else:
            self._drop_tree()
        l0 = self.line_of(start)
        l1 = self.line_of(end)
        delta = len(new) - (end - start)
        inside = [start + m.end() for m in NEWLINE.finditer(new)]
        tail = self.line_starts[l1 + 1:]
        self.line_starts[l0 + 1:] = inside + ([s + delta for s in tail] if delta else tail)
        self.text = text[:start] + new + text[end:]
        here = start + len(new)
        spots = [s + delta if s >= end else here if s > start else s for s in self.hot_spots]
        self.hot_spots.clear()
        self.hot_spots.extend(s for s in spots if abs(s - here) > HOT_SPOT_MERGE_CHARS)
        self.hot_spots.appendleft(here)
        return old

    def _drop_tree(self) -> None:
        self._seq += 1
        self._reset_seq = self._seq
        self._tree = None
        self._edits.clear()

    def _record_byte_edit(self, start: int, end: int, new: str) -> None:
        text = self.text
        if len(self._edits) >= MAX_PENDING_EDITS:  # no parse for long: start over rather than grow
            self._drop_tree()

        def point(offset: int) -> tuple[int, int]:
            row = self.line_of(offset)
            return row, utf8_len(text[self.line_starts[row]:offset])

        start_byte = utf8_len(text[:start])
        old_end_byte = start_byte + utf8_len(text[start:end])
        new_bytes = utf8_len(new)
        start_point = point(start)
        old_end_point = point(end)
        new_end_point = end_point(start_point, new)
        self._seq += 1
        self._edits.append(ByteEdit(self._seq, start_byte, old_end_byte, start_byte + new_bytes,
                                    start_point, old_end_point, new_end_point))

    def reset(self, text: str) -> None:
        self._drop_tree()
        self._set_text(text)


# ---------------------------------------------------------------------------- history
@dataclass
class EditHistory:
    """A bounded log of coalesced edits across documents (most recent last).

    Consecutive edits of the same document that touch the region the previous record produced
    (typing a word, backspacing it) within ``coalesce_s`` merge into one record.
    """
    max_records: int = 256  # records kept across documents (next edit reads the newest few)
    coalesce_s: float = 2.0  # edits this close in time, in the same region, are one edit
    max_text: int = 16_384  # longest old/new text stored per record (longer ones are clipped)
    _records: deque[EditRecord] = field(default_factory=deque)
    _last_mono: float = 0.0

    def __post_init__(self) -> None:
        self._records = deque(maxlen=self.max_records)

    def __iter__(self) -> Iterator[EditRecord]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def recent(self, uri: str | None = None, limit: int = RECENT_RECORDS) -> list[EditRecord]:
        out = [r for r in reversed(self._records) if uri is None or r.uri == uri]
        return out[:limit]

    def forget(self, uri: str) -> None:
        kept = [r for r in self._records if r.uri != uri]
        self._records.clear()
        self._records.extend(kept)

    def record(self, doc: Document, start: int, end: int, new: str, before: str) -> None:
        """Record replacing ``before[start:end]`` with ``new`` (``before``: the text before the edit)."""
        now_mono, now = time.monotonic(), time.time()
        last = self._records[-1] if self._records else None
        if (last is not None and last.uri == doc.uri and not last.clipped
                and now_mono - self._last_mono <= self.coalesce_s):
            s, length = last.offset, len(last.new_text)
            if start <= s + length and end >= s:  # touches what the last record produced
                lo, hi = min(start, s), max(end, s + length)
                merged_new = before[lo:start] + new + before[end:hi]
                merged_old = before[lo:s] + last.old_text + before[s + length:hi]
                if len(merged_new) <= self.max_text and len(merged_old) <= self.max_text:
                    if lo < s:
                        last.start_line, last.start_col = _line_col(before, lo)
                        last.end_line, last.end_col = _advance(last.start_line, last.start_col, merged_old)
                    elif hi > s + length:
                        last.end_line, last.end_col = _advance(last.start_line, last.start_col, merged_old)
                    last.offset, last.old_text, last.new_text = lo, merged_old, merged_new
                    last.version, last.time = doc.version, now
                    self._last_mono = now_mono
                    return
        old = before[start:end]
        clipped = len(old) > self.max_text or len(new) > self.max_text
        sl, sc = _line_col(before, start)
        el, ec = _advance(sl, sc, old)
        self._records.append(EditRecord(
            uri=doc.uri, version=doc.version, start_line=sl, start_col=sc, end_line=el, end_col=ec,
            offset=start, old_text=old[: self.max_text], new_text=new[: self.max_text], time=now,
            clipped=clipped))
        self._last_mono = now_mono


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset)
    return line, offset - (text.rfind("\n", 0, offset) + 1)


def _advance(line: int, col: int, text: str) -> tuple[int, int]:
    nl = text.count("\n")
    if not nl:
        return line, col + len(text)
    return line + nl, len(text) - text.rfind("\n") - 1


# ---------------------------------------------------------------------------- store
class DocumentStore:
    """The open documents of one client connection, plus their edit history."""

    def __init__(self, grammar_for, history: EditHistory | None = None) -> None:
        self._docs: dict[str, Document] = {}
        self._grammar_for = grammar_for  # (language_id, uri) -> grammar name | None
        self.history = history if history is not None else EditHistory()
        self.syntax_max_bytes = SYNTAX_MAX_BYTES
        self._out_of_sync: set[str] = set()

    def get(self, uri: str) -> Document | None:  # features never see an out-of-sync document
        return None if uri in self._out_of_sync else self._docs.get(uri)

    def desync(self, uri: str) -> bool:
        """Mark a document out of sync until a whole text comes; True the first time (tell once)."""
        fresh = uri in self._docs and uri not in self._out_of_sync
        self._out_of_sync.update([uri] if fresh else [])
        return fresh

    def __len__(self) -> int:
        return len(self._docs)

    def __iter__(self) -> Iterator[Document]:
        return iter(list(self._docs.values()))

    def open(self, uri: str, language_id: str, version: int, text: str) -> Document:
        self._docs.pop(uri, None)  # the old text's memory goes before the new one is built
        self._out_of_sync.discard(uri)
        doc = Document(uri, language_id, version, clean_text(text), self._grammar_for(language_id, uri))
        self._docs[uri] = doc
        return doc

    def close(self, uri: str) -> None:
        doc = self._docs.pop(uri, None)
        self._out_of_sync.discard(uri)
        self.history.forget(uri)
        if doc is not None and len(doc.text) >= TRIM_AFTER_CHARS:
            del doc
            release_free_memory()

    def change(self, uri: str, version: int, changes: list[tuple[tuple[int, int, int, int] | None, str]],
               enc: PositionEncoding) -> Document | None:
        """Apply content changes in order, all or nothing (``edits.checked_changes`` raises
        EditRejected first). A change is (range, text); range None = whole text. Ranges are
        clamped, as editors expect; unknown documents are ignored; out-of-sync ones take only a
        whole text."""
        doc = self._docs.get(uri)
        if doc is None:
            return None
        changes = checked_changes(doc.version, version, changes)
        doc.version = version
        if uri in self._out_of_sync:
            full = [i for i, (rng, _) in enumerate(changes) if rng is None]
            changes = changes[full[-1]:] if full else []
            self._out_of_sync.difference_update([uri] if full else [])
        for rng, new in changes:
            before = doc.text
            if rng is None:
                doc.reset(new)
                continue
            start = doc.offset_at(rng[0], rng[1], enc, strict=False)
            end = max(start, doc.offset_at(rng[2], rng[3], enc, strict=False))
            doc.replace(start, end, new, track_syntax=len(before) <= self.syntax_max_bytes)
            self.history.record(doc, start, end, new, before)
        return doc
