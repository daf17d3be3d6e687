"""Edits read as token rules (for the repeat family): each change of an edit — a run of deleted
tokens replaced by inserted text — with up to ``CONTEXT_TOKENS`` unchanged tokens of the same
line on each side as its anchor (an insertion at the end of a line is anchored on the line's
end, ``EOL``, one at the start of a line's code on the line's start, ``BOL``); the last two edits' rules generalised by intersecting anchors, where identifiers
the two examples disagree on become a wildcard (``WILD``: any identifier), as
``except BadSignature, e:`` and ``except Exception, e:`` give ``except ID , e :``.
Tokens are words (identifiers, numbers) and single punctuation characters, so a rule does not
depend on spacing."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace

from mercury_lsp.next_edit.text import (
    IDENT,
    KEYWORDS,
    PATH_SEPARATORS,
    TOKEN,
    changed_lines,
    indent_of,
    line_bounds,
)

FAMILY = "repeat"  # the family's name (``RuleContext.family``): its rules share one search
CONTEXT_TOKENS = 3  # anchor tokens kept on each side of a change
# An insertion within a line whose CONTEXT_TOKENS anchors are punctuation and numbers only (``[1]`` + ``)`` for
# ``basename(argv[1])`` -> ``basename(argv[1], '.js')``) has its lead reach back, on its line, to
# the nearest name of the user's code, at most this many tokens: an insertion must be anchored on
# a name (``repeated_pattern``), and the name that is there says where it repeats.
NAMED_LEAD_TOKENS = 8
# The same reach back when the anchors and the deleted run are shorter than this (the smallest
# pattern ``repeated_pattern`` searches for): ``'-v'`` + ``, '-p', 'no:asyncio'`` is anchored on
# ``- v '`` (a string's contents), four characters; ``runpytest('-v'`` says where it repeats.
MIN_PATTERN_CHARS = 8  # shorter patterns ('(' -> '[') match too much to be a user's intent
# A layout rule's tokens are mostly punctuation ('-> X: ...'): more of its line anchors it.
LAYOUT_CONTEXT_TOKENS = 6
QUOTES = frozenset("'\"`")  # what opens a string literal (``quote_flip``)
MERGE_GAP = 3  # changes of one edit this few tokens apart are one change (wrapping 'x' in 'f(x)')
# Changes of one edit further apart on one line are still one change when only together do they
# open and close the same brackets (``&(dyn Error + 'static)`` -> ``Ref<dyn Error + 'static>``):
# alone, each half leaves a bracket open, a place the syntax check refuses. A long expression
# wrapped in new brackets stays two changes: on heldout3, ``process.env.TERM`` ->
# ``(process.env.TERM || '')`` repeated as one change went to six assignments to it, all false.
PAIRED_GAP = 24
OPENERS, CLOSERS = "([{<", ")]}>"
# Anchor pseudo-tokens (TOKEN never yields a multi-character non-word token): any identifier, the
# end of the line (an insertion appended to a line) and the start of its code (an insertion before
# a statement: ``await `` before ``t.throwsAsync(``, ``// `` before a line commented out).
WILD = "\x00ID"
EOL = "\x00EOL"
BOL = "\x00BOL"
# Words never abstracted to WILD: the keywords that give an anchor its shape (``text.KEYWORDS``).


@dataclass(frozen=True)
class Tok:
    text: str
    start: int
    end: int


def tokenize(text: str, lo: int = 0, hi: int | None = None) -> list[Tok]:
    return [Tok(m.group(), m.start(), m.end()) for m in TOKEN.finditer(text, lo, len(text) if hi is None else hi)]


@dataclass(frozen=True)
class TokenRule:
    lead: tuple[str, ...]  # anchor before the change
    deleted: tuple[str, ...]
    trail: tuple[str, ...]  # anchor after the change
    inserted: str  # the new text exactly as the user wrote it (between the anchors)
    indent: str  # indentation of the example's first changed line (to re-indent multi-line text)
    edit_span: tuple[int, int]  # where the example's new text is in the current document
    layout: bool = False  # only the spacing between the tokens changed (matched across lines)

    @property
    def is_rename(self) -> bool:
        new = self.inserted.strip()
        return (len(self.deleted) == 1 and IDENT.match(self.deleted[0]) is not None
                and IDENT.match(new) is not None and new != self.deleted[0]
                and self.deleted[0] not in KEYWORDS and new not in KEYWORDS)

    @property
    def quote_flip(self) -> bool:
        """A string literal replaced by code, or code by a string (``'#'`` -> ``/#/g``): whether a
        place is code is then read where the lead anchor ends, the same before and after the
        change (the deleted run is prose where the example's new text is code)."""
        new = self.inserted.lstrip()[:1]
        return bool(self.lead and self.deleted and new) and (self.deleted[0] in QUOTES) != (new in QUOTES)

    @property
    def pattern_chars(self) -> int:
        """Characters a match must show (a wildcard or the line's end counts one)."""
        return sum(1 if t in (WILD, EOL, BOL) else len(t) for t in self.lead + self.deleted + self.trail)


def rules_from_edit(before: str, after: str) -> list[TokenRule]:
    """The token-level changes of one edit (``before`` -> ``after``), anchored on their lines."""
    lines = changed_lines(before, after)
    if lines is None:
        return []
    bl, bh, ah = lines
    al = bl
    ta, tb = tokenize(before, bl, bh), tokenize(after, al, ah)
    ops = difflib.SequenceMatcher(None, [t.text for t in ta], [t.text for t in tb], autojunk=False).get_opcodes()
    if all(o[0] == "equal" for o in ops):
        return _layout_rules(before, after, ta, tb)
    rules = []
    for i1, i2, j1, j2 in _merge_changes([o for o in ops if o[0] != "equal"], ta, tb, before):
        here = ta[i1].start if i1 < len(ta) else (ta[i1 - 1].end if i1 else bl)
        there = ta[i2 - 1].end if i2 > i1 else here
        lead = [t for t in ta[max(0, i1 - CONTEXT_TOKENS):i1] if "\n" not in before[t.end:here]]
        trail = [t for t in ta[i2:i2 + CONTEXT_TOKENS] if "\n" not in before[there:t.start]]
        if not lead and not trail:
            continue
        short = sum(len(t.text) for t in lead + ta[i1:i2] + trail) < MIN_PATTERN_CHARS
        if (i1 == i2 and len(lead) == CONTEXT_TOKENS and 0 < j1 < j2
                and (short or not any(_names(t.text) for t in lead + trail))
                and "\n" not in after[tb[j1 - 1].end:tb[j2].start if j2 < len(tb) else tb[j2 - 1].end]):
            lead = _named_lead(before, ta, i1, here) or lead
        # the inserted text spans from the end of the lead anchor to the start of the trail anchor
        s = tb[j1 - 1].end if lead and j1 > 0 else (tb[j1].start if j1 < len(tb) else ah)
        e = tb[j2].start if trail and j2 < len(tb) else (tb[j2 - 1].end if j2 > 0 else s)
        if i1 == i2 and lead and not trail and j2 > j1 and not after[e:line_bounds(after, e, e)[1]].strip():
            trail = [Tok(EOL, e, e)]  # appended to the line: the line's end is the anchor
        if (i1 == i2 and trail and not lead and j2 > j1 and "\n" not in after[tb[j1].start:e]
                and not before[before.rfind("\n", 0, here) + 1:here].strip()):
            lead = [Tok(BOL, here, here)]  # put before a line's code: the line's start is the anchor
        line_start = after.rfind("\n", 0, s) + 1
        indent = indent_of(after[line_start:])
        if i1 == i2 and (not lead or not trail or not aligned(after[tb[j1].start:tb[j2 - 1].end], indent)):
            continue  # an insertion repeats only between the same two anchors, within a line or aligned below it
        rules.append(TokenRule(tuple(t.text for t in lead), tuple(t.text for t in ta[i1:i2]),
                          tuple(t.text for t in trail), after[s:e], indent, (s, e)))
    return rules


def aligned(inserted: str, indent: str) -> bool:
    """An insertion within its line, or one whose new lines start at its line's own indentation
    (``n.lineno)`` -> ``n.lineno,`` / ``n.filename)`` below it, aligned): re-indented to the site's
    line, it says as much there. A new line indented otherwise is a block the site's code decides."""
    lines = inserted.split("\n")
    if len(lines) > 1 and not lines[0].strip():
        return False  # a line break first: the site's line is broken, not continued
    return all(line.startswith(indent) and line[len(indent):].strip() and not line[len(indent):][0].isspace()
               for line in lines[1:])


def _names(token: str) -> bool:
    return IDENT.match(token) is not None and token not in KEYWORDS


def _named_lead(before: str, ta: list[Tok], i1: int, here: int) -> list[Tok] | None:
    """The tokens before ``ta[i1]`` on its line back to the nearest name (``NAMED_LEAD_TOKENS``
    at most); None when the line has none that near."""
    for n in range(CONTEXT_TOKENS + 1, min(NAMED_LEAD_TOKENS, i1) + 1):
        t = ta[i1 - n]
        if "\n" in before[t.end:here]:
            return None
        if _names(t.text):
            return ta[i1 - n:i1]
    return None


def _layout_rules(before: str, after: str, ta: list[Tok], tb: list[Tok]) -> list[TokenRule]:
    """Rules of an edit that changed only the spacing between its tokens (``{write: w}`` ->
    ``{ write: w }``, a ``...`` body joined to its ``def`` line): each run of changed gaps (at most
    ``MERGE_GAP`` tokens apart) as the tokens around them, re-spaced. A gap that only changed the
    indentation after its line break is left to ``whitespace-continued`` (NE304: a block re-indented)."""
    changed = []
    for i in range(len(ta) - 1):
        old, new = before[ta[i].end:ta[i + 1].start], after[tb[i].end:tb[i + 1].start]
        if old != new and not ("\n" in old and old.count("\n") == new.count("\n")):
            changed.append(i)
    runs: list[list[int]] = []
    for i in changed:
        if runs and i - runs[-1][1] <= MERGE_GAP:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    rules = []
    for first, last in runs:
        i1, i2 = first, last + 2  # the tokens on both sides of the run's gaps
        here, there = ta[i1].start, ta[i2 - 1].end
        lead = [t for t in ta[max(0, i1 - LAYOUT_CONTEXT_TOKENS):i1] if "\n" not in before[t.end:here]]
        trail = [t for t in ta[i2:i2 + LAYOUT_CONTEXT_TOKENS] if "\n" not in before[there:t.start]]
        # the new text spans from the end of the lead anchor to the start of the trail anchor
        s = tb[i1 - 1].end if lead else tb[i1].start
        e = tb[i2].start if trail else tb[i2 - 1].end
        line_start = after.rfind("\n", 0, s) + 1
        indent = indent_of(after[line_start:s])
        rules.append(TokenRule(tuple(t.text for t in lead), tuple(t.text for t in ta[i1:i2]),
                          tuple(t.text for t in trail), after[s:e], indent, (s, e), layout=True))
    return rules


def _merge_changes(ops, ta: list[Tok], tb: list[Tok], before: str) -> list[tuple[int, int, int, int]]:
    """The changes of one edit, those at most ``MERGE_GAP`` tokens apart merged into one — unless
    every change swaps one identifier for another consistently (a rename, kept per occurrence)
    and no two of them are names of one path (``log.Printf`` -> ``t.Logf`` is one change)."""
    spans = [(i1, i2, j1, j2) for _, i1, i2, j1, j2 in ops]
    mapping: dict[str, str] = {}
    renames = all(i2 - i1 == 1 and j2 - j1 == 1 and IDENT.match(ta[i1].text) and IDENT.match(tb[j1].text)
                  and mapping.setdefault(ta[i1].text, tb[j1].text) == tb[j1].text for i1, i2, j1, j2 in spans)
    renames = renames and not any(0 < b[0] - a[1] <= 2 and all(t.text in PATH_SEPARATORS for t in ta[a[1]:b[0]])
                                  for a, b in zip(spans, spans[1:], strict=False))
    if renames or not spans:
        return spans
    merged = [spans[0]]
    for i1, i2, j1, j2 in spans[1:]:
        a1, a2, b1, b2 = merged[-1]
        if i1 - a2 <= MERGE_GAP or (i1 - a2 <= PAIRED_GAP and _pairs(before, ta, tb, (a1, a2, b1, b2), (i1, i2, j1, j2))):
            merged[-1] = (a1, i2, b1, j2)
        else:
            merged.append((i1, i2, j1, j2))
    return merged


def _balance(tokens: list[Tok]) -> int:
    return sum((t.text in OPENERS) - (t.text in CLOSERS) for t in tokens)


def _pairs(before: str, ta: list[Tok], tb: list[Tok], first: tuple[int, int, int, int],
           second: tuple[int, int, int, int]) -> bool:
    """Two changes of one line (``PAIRED_GAP``) whose brackets balance only together: the first
    leaves a bracket open (before or after the edit) that the second closes."""
    a1, a2, b1, b2 = first
    i1, i2, j1, j2 = second
    if a2 < 1 or i1 >= len(ta) or "\n" in before[ta[a2 - 1].end:ta[i1].start]:
        return False
    if a1 == a2 and i1 == i2:  # a long expression wrapped (``(x.y.z || '')``): no bracket replaced, and
        return False           # the wrap fits where the expression is read, not where it is assigned
    opened = _balance(ta[a1:a2]) or _balance(tb[b1:b2])
    return bool(opened) and _balance(ta[a1:i2]) == 0 and _balance(tb[b1:j2]) == 0


def generalise(newest: list[TokenRule], older: list[TokenRule], min_chars: int = 0) -> list[TokenRule]:
    """Rules of the newest edit; where the edit before it made the same change (same deleted
    tokens, same inserted text) under another anchor, the anchor is cut to what both share,
    identifiers they disagree on becoming wildcards. Two anchors that share nothing on either
    side (``process || {env: {}}`` and ``getListeners(this, eventName) || new Set()``) say
    nothing in common about where the change goes, nor does a shared anchor too short to search
    (under ``min_chars`` characters, ``repeated_pattern.MIN_PATTERN_CHARS``): the newest rule
    keeps its own anchor (cut, the newest edit's own siblings were lost)."""
    out = []
    for r in newest:
        for o in older:
            if o.deleted == r.deleted and o.inserted.strip() == r.inserted.strip() and (o.lead, o.trail) != (r.lead, r.trail):
                lead = _shared(r.lead[::-1], o.lead[::-1])[::-1]
                trail = _shared(r.trail, o.trail)
                shared = replace(r, lead=lead, trail=trail)
                if (lead or trail) and shared.pattern_chars >= min_chars:
                    r = shared
                break
        out.append(r)
    return out


def _shared(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    """The common start of two anchors (nearest the change first), differing identifiers as WILD."""
    out = []
    for x, y in zip(a, b, strict=False):
        if x == y:
            out.append(x)
        elif all(IDENT.match(t) and t not in KEYWORDS or t == WILD for t in (x, y)):
            out.append(WILD)
        else:
            break
    return tuple(out)


def keyword_shape(rule: TokenRule) -> TokenRule | None:
    """The rule with the identifiers of its anchors abstracted, for a replacement whose anchor a
    keyword opens (``except BadSignature , e :`` -> ``except ID , e :``: every ``except X, e:`` of
    Python 2); None otherwise, or when no identifier was abstracted. (Insertions and deletions so
    generalised matched every ``import x from`` and every ``def f(self, x, salt=None)``.)"""
    def shape(tokens: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(WILD if IDENT.match(t) and t not in KEYWORDS else t for t in tokens)

    if not (rule.deleted and rule.inserted.strip() and rule.lead and rule.lead[0] in KEYWORDS):
        return None  # a replacement in a statement a keyword opens (insertions and deletions match too much)
    lead, trail = shape(rule.lead), shape(rule.trail)
    if (lead, trail) == (rule.lead, rule.trail):
        return None
    return replace(rule, lead=lead, trail=trail)


MIN_AFFIX_CHARS = 2  # a one-character affix ('s', '_') is no naming convention


def affix_change(old: str, new: str):
    """How ``new`` derives from ``old`` by a prefix or suffix dropped or added (``getOutOrStdout``
    -> ``OutOrStdout``), as a function applying the same change to another name (None where it
    does not apply); None when the rename is not such a change."""
    if len(old) > len(new) + MIN_AFFIX_CHARS - 1 and old.endswith(new):
        p = old[: len(old) - len(new)]
        return lambda x: x[len(p):] if x.startswith(p) and IDENT.match(x[len(p):]) else None
    if len(new) > len(old) + MIN_AFFIX_CHARS - 1 and new.endswith(old):
        p = new[: len(new) - len(old)]
        return lambda x: None if x.startswith(p) else p + x
    if len(old) > len(new) + MIN_AFFIX_CHARS - 1 and old.startswith(new):
        s = old[len(new):]
        return lambda x: x[: -len(s)] if x.endswith(s) and len(x) > len(s) else None
    if len(new) > len(old) + MIN_AFFIX_CHARS - 1 and new.startswith(old):
        s = new[len(old):]
        return lambda x: None if x.endswith(s) else x + s
    return None
