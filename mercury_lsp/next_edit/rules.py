"""Edits read as token-level rules (for ``repeat``): each change of an edit — a run of deleted
tokens replaced by inserted text — with up to ``CONTEXT_TOKENS`` unchanged tokens of the same
line on each side as its anchor; the last two edits' rules generalised by intersecting anchors.
Tokens are words (identifiers, numbers) and single punctuation characters, so a rule does not
depend on spacing."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from mercury_lsp.next_edit.text import diff_region

TOKEN = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*|\d[\w.]*|\S")
IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")
CONTEXT_TOKENS = 3  # anchor tokens kept on each side of a change
MERGE_GAP = 3  # changes of one edit this few tokens apart are one change (wrapping 'x' in 'f(x)')


@dataclass(frozen=True)
class Tok:
    text: str
    start: int
    end: int


def tokenize(text: str, lo: int = 0, hi: int | None = None) -> list[Tok]:
    return [Tok(m.group(), m.start(), m.end()) for m in TOKEN.finditer(text, lo, len(text) if hi is None else hi)]


@dataclass(frozen=True)
class Rule:
    lead: tuple[str, ...]  # anchor before the change
    deleted: tuple[str, ...]
    trail: tuple[str, ...]  # anchor after the change
    inserted: str  # the new text exactly as the user wrote it (between the anchors)
    indent: str  # indentation of the example's first changed line (to re-indent multi-line text)
    edit_span: tuple[int, int]  # where the example's new text is in the current document

    @property
    def is_rename(self) -> bool:
        new = self.inserted.strip()
        return (len(self.deleted) == 1 and IDENT.match(self.deleted[0]) is not None
                and IDENT.match(new) is not None and new != self.deleted[0])

    @property
    def pattern_chars(self) -> int:
        return sum(len(t) for t in self.lead + self.deleted + self.trail)


def line_bounds(text: str, lo: int, hi: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, lo) + 1
    end = text.find("\n", hi)
    return start, len(text) if end < 0 else end


def rules_from_edit(before: str, after: str) -> list[Rule]:
    """The token-level changes of one edit (``before`` -> ``after``), anchored on their lines."""
    p, eb, ea = diff_region(before, after)
    if p == eb == ea:
        return []
    bl, bh = line_bounds(before, p, eb)
    al, ah = line_bounds(after, p, ea)
    ta, tb = tokenize(before, bl, bh), tokenize(after, al, ah)
    ops = difflib.SequenceMatcher(None, [t.text for t in ta], [t.text for t in tb], autojunk=False).get_opcodes()
    rules = []
    for i1, i2, j1, j2 in _merge_changes([o for o in ops if o[0] != "equal"], ta, tb):
        here = ta[i1].start if i1 < len(ta) else (ta[i1 - 1].end if i1 else bl)
        there = ta[i2 - 1].end if i2 > i1 else here
        lead = [t for t in ta[max(0, i1 - CONTEXT_TOKENS):i1] if "\n" not in before[t.end:here]]
        trail = [t for t in ta[i2:i2 + CONTEXT_TOKENS] if "\n" not in before[there:t.start]]
        if not lead and not trail:
            continue
        if i1 == i2 and (not lead or not trail or "\n" in after[tb[j1].start:tb[j2 - 1].end]):
            continue  # an insertion repeats only between the same two anchors, within a line
        # the inserted text spans from the end of the lead anchor to the start of the trail anchor
        s = tb[j1 - 1].end if lead and j1 > 0 else (tb[j1].start if j1 < len(tb) else ah)
        e = tb[j2].start if trail and j2 < len(tb) else (tb[j2 - 1].end if j2 > 0 else s)
        line_start = after.rfind("\n", 0, s) + 1
        indent = after[line_start:len(after[line_start:]) - len(after[line_start:].lstrip(" \t")) + line_start]
        rules.append(Rule(tuple(t.text for t in lead), tuple(t.text for t in ta[i1:i2]),
                          tuple(t.text for t in trail), after[s:e], indent, (s, e)))
    return rules


def _merge_changes(ops, ta: list[Tok], tb: list[Tok]) -> list[tuple[int, int, int, int]]:
    """The changes of one edit, those at most ``MERGE_GAP`` tokens apart merged into one — unless
    every change swaps one identifier for another consistently (a rename, kept per occurrence)."""
    spans = [(i1, i2, j1, j2) for _, i1, i2, j1, j2 in ops]
    mapping: dict[str, str] = {}
    renames = all(i2 - i1 == 1 and j2 - j1 == 1 and IDENT.match(ta[i1].text) and IDENT.match(tb[j1].text)
                  and mapping.setdefault(ta[i1].text, tb[j1].text) == tb[j1].text for i1, i2, j1, j2 in spans)
    if renames or not spans:
        return spans
    merged = [spans[0]]
    for i1, i2, j1, j2 in spans[1:]:
        a1, a2, b1, b2 = merged[-1]
        if i1 - a2 <= MERGE_GAP:
            merged[-1] = (a1, i2, b1, j2)
        else:
            merged.append((i1, i2, j1, j2))
    return merged


def generalise(newest: list[Rule], older: list[Rule]) -> list[Rule]:
    """Rules of the newest edit; where the edit before it made the same change (same deleted
    tokens, same inserted text) under another anchor, the anchor is cut to what both share."""
    out = []
    for r in newest:
        for o in older:
            if o.deleted == r.deleted and o.inserted.strip() == r.inserted.strip() and (o.lead, o.trail) != (r.lead, r.trail):
                lead = _common_suffix(r.lead, o.lead)
                trail = _common_prefix(r.trail, o.trail)
                r = Rule(lead, r.deleted, trail, r.inserted, r.indent, r.edit_span)
                break
        out.append(r)
    return out


def _common_suffix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    n = 0
    while n < min(len(a), len(b)) and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    return a[len(a) - n:]


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]
