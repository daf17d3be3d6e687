"""Repeated line edits: whole lines the user just deleted or inserted, repeated where the same
lines stand.

``repeat`` reads an edit as token changes anchored on their own line, so a whole line removed or
added has no anchor there. Here the unit is the line (compared without its indentation):

* **deleted lines** — the block of lines an edit deleted (``fmt.Println("err:", err)``, a
  debugging print; ``var minWidth = 40;``, a now-unused local) is deleted wherever the same block
  still stands, in the example's document and the open documents of its language — except in
  text the examples just wrote (the block moved, or written again: deleting it undoes the user);
* **inserted lines** — the lines an edit inserted between two lines are inserted between every
  other such pair of lines, or, where no pair stands, above every other line like the one below
  them (``f.wroteHeader = true`` above ``fl := f.basicWriter.ResponseWriter.(http.Flusher)`` in
  each ``Flush`` method) or below every line like the one above; re-indented to the site.

The examples are the newest edits across documents (``examples``). A block must be specific (at
least ``MIN_BLOCK_CHARS`` non-blank characters) and, when inserted, short (``MAX_INSERTED_LINES``:
a longer one is new code for its place); a block standing at more than
``nextEdit.repeatMaxSites`` places (inserted lines: ``MAX_INSERTION_SITES``) is too common to
mean the user's intent and is not offered.
The syntax guard (``pipeline._keep_parsing``) runs on these edits like on every other.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from mercury_lsp.next_edit.examples import Example, recent_edits, to_current
from mercury_lsp.next_edit.query import DocState, NextEditQuery, Prediction
from mercury_lsp.next_edit.rules import line_bounds
from mercury_lsp.next_edit.text import diff_region

EXAMPLES = 3  # the newest edits read as examples (as ``repeat``)
MIN_BLOCK_CHARS = 8  # a shorter block ('}', "'',") stands everywhere
# An insertion's anchor lines must show this many non-blank characters: both together ('}' above
# and '}' below stand everywhere; '"fmt"' above a blank line in an import block does not), or
# one alone (then it must be a distinctive statement).
PAIR_ANCHOR_CHARS = 4
# Lines that could be inserted at more places than this are boilerplate the user adds where it is
# needed, not one change to repeat everywhere (on the real-history benchmark's dev cases, this cap
# kept every hit of line insertions and removed 14 of their 27 false positives).
MAX_INSERTION_SITES = 2
SINGLE_ANCHOR_CHARS = 20
MAX_BLOCK_LINES = 12  # a larger block is a rewrite, not a line repeated
# Inserted blocks of more non-blank lines than this are new code written for their place (a new
# method, a loop and its body): on the five real-history tuning sets, every one of the 9 sites
# offered for such blocks was a false positive, and every hit had at most 3 lines.
MAX_INSERTED_LINES = 3
MAX_REGION_LINES = 200  # an edit changing more lines than this is not read line by line
CONFIDENCE = 0.5
AGE_PENALTY = 0.1  # an older example's sites rank below the newest's
# A comment line that speaks of the line below it alone: it goes when that line goes.
NEXT_LINE_DIRECTIVE = re.compile(r"^\s*(?://|#)\s*(?:eslint-disable-next-line|@ts-ignore|@ts-expect-error"
                                 r"|prettier-ignore|noinspection|type:\s*ignore)\b")
OTHER_DOCUMENT_PENALTY = 0.2


@dataclass(frozen=True)
class LineChange:
    deleted: tuple[str, ...]  # stripped lines (empty for an insertion)
    inserted: tuple[str, ...]  # the inserted lines as written (empty for a deletion)
    before: str  # stripped line above an insertion
    after: str  # stripped line below it
    indent: str  # indentation of the line below (re-indents the inserted lines)
    at: int = 0  # offset in the edit's new text of the first inserted line (of the deletion point)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def line_changes(before: str, after: str) -> list[LineChange]:
    """The whole-line deletions and insertions of one edit."""
    p, eb, ea = diff_region(before, after)
    if p == eb == ea:
        return []
    lo, hb = line_bounds(before, p, eb)
    _, ha = line_bounds(after, p, ea)
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
            out.append(LineChange((), tuple(b[j1:j2]), prev.strip(), nxt.strip(), _indent(nxt), starts[j1]))
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
                indent = _indent(lines[i + 1])
                new = "".join((indent + x[len(change.indent):] if x.startswith(change.indent) else x) + "\n"
                              for x in change.inserted)
                out.append((starts[i + 1], starts[i + 1], new))
        if out:
            break
    return out


def repeated_lines(query: NextEditQuery) -> list[Prediction]:
    """Whole-line deletions and insertions of the newest edits, offered where the same lines stand."""
    opts = query.options
    out: list[Prediction] = []
    seen: set[tuple[str, int, int]] = set()
    examples = recent_edits(query, EXAMPLES)
    fresh = written_just_now(examples)
    for ex in examples:
        for change in line_changes(ex.before, ex.after):
            if sum(1 for x in change.inserted if x.strip()) > MAX_INSERTED_LINES:
                continue
            found = [(d, s) for d in _docs(query, ex) for s in block_sites(change, d)
                     if not (change.deleted and any(s[0] < hi and lo < s[1] for lo, hi in fresh.get(d.uri, ())))]
            if not found or len(found) > (opts.repeat_max_sites if change.deleted else MAX_INSERTION_SITES):
                continue
            for d, (s, e, new) in found:
                if (d.uri, s, e) in seen:
                    continue
                seen.add((d.uri, s, e))
                conf = CONFIDENCE - AGE_PENALTY * ex.age
                where = ""
                if d.uri != query.cursor_uri:
                    conf -= OTHER_DOCUMENT_PENALTY
                    where = " (another document)"
                what = "deleted" if change.deleted else "inserted"
                out.append(Prediction(d.uri, s, e, new, round(max(conf, 0.0), 6),
                                      f"repeated edit: the same lines {what} here{where}", "repeat", "syntax",
                                      d.text[s:e]))
    out.sort(key=lambda p: (-p.confidence, abs(p.start - query.cursor)))
    return out[: opts.repeat_max_results]


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


def _docs(query: NextEditQuery, ex: Example) -> list[DocState]:
    grammar = ex.doc.grammar
    return [d for d in query.docs if d is ex.doc or (grammar is not None and d.grammar == grammar)]


def widen_deletion(text: str, s: int, e: int) -> tuple[int, int]:
    """Deleted whole lines ``[s, e)`` widened by the comment directive above them that speaks of
    the next line only (``// eslint-disable-next-line ...``, ``// @ts-expect-error``), and by one
    blank line where deleting them would leave a blank line doubled (blank above and below) or
    ending a block (blank above, a less indented line below)."""
    directive = text.rfind("\n", 0, max(s - 1, 0)) + 1
    if s > 0 and NEXT_LINE_DIRECTIVE.search(text[directive:s - 1]):
        s = directive
    above_start = text.rfind("\n", 0, max(s - 1, 0)) + 1
    blank_above = s > 0 and not text[above_start:s].strip()
    below_end = text.find("\n", e)
    below = text[e:len(text) if below_end < 0 else below_end + 1]
    if not blank_above or e >= len(text):
        return s, e
    if not below.strip():
        return s, e + len(below)
    copy_indent = len(text[s:e]) - len(text[s:e].lstrip(" \t"))
    if len(below) - len(below.lstrip(" \t")) < copy_indent:
        return above_start, e
    return s, e
