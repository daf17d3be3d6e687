"""Edits read as whole lines (shared by the line rules ``repeated``, ``moved``): the lines an edit
deleted or inserted (``line_changes``: compared without their indentation), the places where the
same lines stand or would go (``block_sites``), and the text the newest edits just wrote
(``written_just_now``: deleting lines there would undo the user)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from mercury_lsp.next_edit.examples import Example, to_current
from mercury_lsp.next_edit.query import DocState
from mercury_lsp.next_edit.statements import widen_deletion
from mercury_lsp.next_edit.text import changed_lines, diff_region, indent_of

MIN_BLOCK_CHARS = 8  # a shorter block ('}', "'',") stands everywhere
# An insertion's anchor lines must show this many non-blank characters: both together ('}' above
# and '}' below stand everywhere; '"fmt"' above a blank line in an import block does not), or
# one alone (then it must be a distinctive statement).
PAIR_ANCHOR_CHARS = 4
SINGLE_ANCHOR_CHARS = 20
MAX_BLOCK_LINES = 12  # a larger block is a rewrite, not a line repeated
MAX_REGION_LINES = 200  # an edit changing more lines than this is not read line by line
# A file's header lines (any grammar): comments, Rust inner attributes, Go build constraints and
# directives, ``"use strict"``, ``from __future__`` imports, a shebang; blank lines between.
HEADER_LINE = re.compile(r"\s*(?:$|#!|//|/\*|\*|#(?!\[)|[\"']use strict[\"'];?\s*$|from __future__ import )")
HEADER_KIND_CHARS = 3  # lines opening with the same characters are of one kind (``#![``, ``//go``)


@dataclass(frozen=True)
class LineChange:
    deleted: tuple[str, ...]  # stripped lines (empty for an insertion)
    inserted: tuple[str, ...]  # the inserted lines as written (empty for a deletion)
    before: str  # stripped line above an insertion
    after: str  # stripped line below it
    indent: str  # indentation of the line below (re-indents the inserted lines)
    at: int = 0  # offset in the edit's new text of the first inserted line (of the deletion point)


def line_changes(before: str, after: str) -> list[LineChange]:
    """The whole-line deletions and insertions of one edit."""
    lines = changed_lines(before, after)
    if lines is None:
        return []
    lo, hb, ha = lines
    a, b = before[lo:hb].split("\n"), after[lo:ha].split("\n")
    if max(len(a), len(b)) > MAX_REGION_LINES:
        return []
    out = []
    above, below = before[:lo].split("\n")[-2:-1], before[hb + 1:].split("\n")[:1]
    starts = [lo]
    for x in b:
        starts.append(starts[-1] + len(x) + 1)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "delete":
            out.append(LineChange(tuple(x.strip() for x in a[i1:i2]), (), "", "", "", starts[j1]))
        elif tag == "insert":
            prev = a[i1 - 1] if i1 > 0 else (above[0] if above else "")
            nxt = a[i1] if i1 < len(a) else (below[0] if below else "")
            if j2 - j1 == 1 and b[j1].strip() in (prev.strip(), nxt.strip()):
                continue  # a line duplicated in place: the user is about to change the copy
            out.append(LineChange((), tuple(b[j1:j2]), prev.strip(), nxt.strip(), indent_of(nxt), starts[j1]))
    return [c for c in out if len(c.deleted or c.inserted) <= MAX_BLOCK_LINES
            and sum(len(x.strip()) for x in c.deleted or c.inserted) >= MIN_BLOCK_CHARS]


def line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def block_sites(change: LineChange, doc: DocState) -> list[tuple[int, int, str]]:
    """(start, end, new text) where ``change`` applies in ``doc``."""
    text = doc.text
    starts = line_starts(text)
    lines = [text[s:(starts[i + 1] - 1 if i + 1 < len(starts) else len(text))] for i, s in enumerate(starts)]
    stripped = [x.strip() for x in lines]
    out = []
    if change.deleted:
        n = len(change.deleted)
        for i in range(len(lines) - n + 1):
            if tuple(stripped[i:i + n]) == change.deleted:
                end = starts[i + n] if i + n < len(starts) else len(text)
                out.append((*widen_deletion(text, starts[i], end), ""))
        return out
    for anchors in ((change.before, change.after), (change.before, None), (None, change.after)):
        need = PAIR_ANCHOR_CHARS if None not in anchors else SINGLE_ANCHOR_CHARS
        if sum(len(a) for a in anchors if a is not None) < need:
            continue
        block = tuple(x.strip() for x in change.inserted)
        n = len(block)
        for i in range(len(lines) - 1):
            if block in (tuple(stripped[i + 1:i + 1 + n]), tuple(stripped[max(0, i + 1 - n):i + 1])):
                continue  # the lines stand there already (the example itself)
            if all(a is None or stripped[i + k] == a for k, a in enumerate(anchors)):
                indent = indent_of(lines[i + 1])
                new = "".join((indent + x[len(change.indent):] if x.startswith(change.indent) else x) + "\n"
                              for x in change.inserted)
                out.append((starts[i + 1], starts[i + 1], new))
        if out:
            break
    return out


def written_just_now(examples: list[Example]) -> dict[str, list[tuple[int, int]]]:
    """Per document, the spans of its current text that the examples wrote: deleting lines there
    would undo the user (a line moved, an import just added, a block just pasted)."""
    out: dict[str, list[tuple[int, int]]] = {}
    for ex in examples:
        p, _, ea = diff_region(ex.before, ex.after)
        lo, hi = to_current(ex, p), to_current(ex, ea)
        if lo is not None and hi is not None and hi > lo:
            out.setdefault(ex.doc.uri, []).append((lo, hi))
    return out


def is_header(change: LineChange) -> bool:
    """``change`` inserted lines at the very start of its document, all of them header lines."""
    return bool(change.inserted) and change.at == 0 and all(HEADER_LINE.match(x) for x in change.inserted)


def header_site(change: LineChange, doc: DocState) -> tuple[int, int, str] | None:
    """Where a header ``change`` (``is_header``) goes in ``doc``: after the document's leading lines
    of the inserted kind (a ``#![allow(...)]`` below the ``#![allow(...)]`` already there, a
    ``//go:build`` below a ``//go:generate``), else at its start; None when the lines stand in
    its header already."""
    text = doc.text
    lines = text.split("\n")
    block = tuple(x.strip() for x in change.inserted if x.strip())
    head = [x.strip() for x in lines[:len(block) + MAX_BLOCK_LINES]]
    if all(x in head for x in block):
        return None
    kind = block[0][:HEADER_KIND_CHARS]
    n = 0
    while n < len(lines) - 1 and lines[n].strip() and lines[n].strip()[:HEADER_KIND_CHARS] == kind:
        n += 1
    at = sum(len(x) + 1 for x in lines[:n])
    new = "".join(x + "\n" for x in change.inserted)
    if n:  # below lines of its kind: the block's own trailing blank line stays with theirs
        new = new.rstrip("\n") + "\n"
    return at, at, new
