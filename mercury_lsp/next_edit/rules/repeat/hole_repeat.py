"""NE208 hole-repeat: the user's change repeated where the same tokens stand but for one name,
string or number it carried, filled in from each place.

**What.** The newest edit made one change on its lines (a run of deleted tokens replaced by
inserted text, as ``tokens`` reads it, a string literal one token): when the deleted run holds
exactly one name, string or number (no keyword) that the inserted text carries (the *hole*:
``bymonth`` of ``not bymonth`` -> ``bymonth is None``, ``"third"`` of ``String::from("third")`` ->
``"third".to_owned()``), every other place of the open documents of the language whose tokens
read ``anchor-before + deleted + anchor-after`` with another token of the same kind at the hole
(at each of its places, the anchors' too: ``(window && window.chrome`` reads ``(document &&
document.documentElement``; the anchors backed off from ``tokens.CONTEXT_TOKENS`` a side until a
place reads so, then each side whole alone) gets the inserted text with the hole filled from the
place. A place must be code where the example is code, and prose where it is prose.

An insertion that repeats the name, string or number beside it holes that token: ``key =
ireq.req.key`` -> ``key = ireq.link or ireq.req.key`` reads as ``ireq`` -> ``ireq.link or ireq``,
and ``{r.req.key: r ...}`` gets ``r.link or r``.

The change must transform the old code, not replace it: the inserted text brings at most
``MAX_NEW_NAMES`` names the deleted run lacks.

A pattern naming nothing but the hole (only keywords, punctuation and built-in types besides:
``if not X:``) stands at too many places to be the user's intent: only its next place below the
cursor is offered, within ``MAX_GENERIC_DISTANCE_LINES``, ranked low. So is any pattern matching
more than ``nextEdit.repeatMaxSites`` places. A rename of one identifier is the rename rules';
an identical change at identical tokens NE204's (a place whose hole holds the example's own token
is left to it); a rewrite of whole sibling lines with up to two holes NE207's.

**Why.** A commit often makes one change at a few places that differ in the one thing the
change keeps — the next option's ``if not byyearday:``, the next key's ``String::from("y")`` —
where NE204 needs the same tokens and NE207 the whole line alike and close below.

**Example.** ``let a = String::from("third");`` -> ``let a = "third".to_owned();``: the other
``String::from("x")`` calls become ``"x".to_owned()``.
"""

from __future__ import annotations

import difflib
import re

from mercury_lsp.next_edit.examples import to_current
from mercury_lsp.next_edit.prose import non_code
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import (
    HOLE_REPEAT,
    NEXT_PATTERN_SITE,
    REPEAT_OTHER_DOCUMENT_PENALTY,
)
from mercury_lsp.next_edit.rules.repeat.patterns import word_char
from mercury_lsp.next_edit.rules.repeat.repeated_pattern import BUILTIN_TYPES
from mercury_lsp.next_edit.rules.repeat.shaped_repeat import SHAPE_TOKEN, filled_in, hole_kind
from mercury_lsp.next_edit.rules.repeat.tokens import CONTEXT_TOKENS, MERGE_GAP
from mercury_lsp.next_edit.text import KEYWORDS, changed_lines, is_identifier

# A generic pattern's one place is looked for this far below the cursor: the user's next sibling
# stands near (a function's next option, a test's next key).
MAX_GENERIC_DISTANCE_LINES = 60
# Names the inserted text may bring that the deleted run lacks: ``not X`` -> ``X is None`` brings
# none, ``String::from(X`` -> ``X.to_owned(`` one; ``server_sock.settimeout(1`` ->
# ``request.addfinalizer(server_sock.close`` three — new code in place of the old, which on the
# tuning sets (dev2) went to five other sockets' timeouts, all false.
MAX_NEW_NAMES = 1
HOLE = "\x00HOLE"  # the hole's place in a change's shape (``_example``)
# Tokens a pattern must show besides its hole, a word among them ('if not X :' has three).
MIN_OTHER_TOKENS = 3
# The regular expression a hole matches, by its kind (``shaped_repeat.hole_kind``).
HOLE_PATTERNS = {
    "name": r"[A-Za-z_$][\w$]*",
    "string": r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|`[^`\\\n]*`",
    "number": r"\d[\w.]*",
}


def _changes(before: str, after: str) -> list[tuple] | None:
    """Each change an edit made on its lines (changes at most ``MERGE_GAP`` tokens apart are one):
    (lead anchor, deleted tokens, trail anchor, inserted text, its span in ``after``); None when
    one is a pure insertion or deletion, or spans lines."""
    span = changed_lines(before, after)
    if span is None:
        return None
    lo, old_end, new_end = span
    a = list(SHAPE_TOKEN.finditer(before, lo, old_end))
    b = list(SHAPE_TOKEN.finditer(after, lo, new_end))
    ops = [o for o in difflib.SequenceMatcher(None, [m.group() for m in a], [m.group() for m in b],
                                              autojunk=False).get_opcodes() if o[0] != "equal"]
    groups: list[list[int]] = []
    for _, i1, i2, j1, j2 in ops:
        if groups and i1 - groups[-1][1] <= MERGE_GAP:
            groups[-1][1], groups[-1][3] = i2, j2
        else:
            groups.append([i1, i2, j1, j2])
    out = []
    for i1, i2, j1, j2 in groups:
        if i1 == i2 and j1 < j2:  # an insertion carries the token beside it (``x`` -> ``x.link or x``)
            i1, i2, j1, j2 = _beside(a, b, i1, j1, j2)
        if i1 == i2 or j1 == j2:
            return None  # a pure insertion has no hole in what it replaces; a deletion carries nothing
        start, end = b[j1].start(), b[j2 - 1].end()
        if "\n" in after[start:end] or "\n" in before[a[i1].start():a[i2 - 1].end()]:
            return None  # one line's change
        line_lo = before.rfind("\n", 0, a[i1].start())
        line_hi = before.find("\n", a[i2 - 1].end())
        line_hi = len(before) if line_hi < 0 else line_hi
        lead = [m.group() for m in a[max(0, i1 - CONTEXT_TOKENS):i1] if m.start() > line_lo]
        trail = [m.group() for m in a[i2:i2 + CONTEXT_TOKENS] if m.end() <= line_hi]
        out.append((lead, [m.group() for m in a[i1:i2]], trail, after[start:end], (start, end)))
    return out


def _beside(a: list, b: list, i: int, j1: int, j2: int) -> tuple[int, int, int, int]:
    """An insertion at token ``i`` of the old line that repeats the name, string or number just
    after it (``ireq.req.key`` -> ``ireq.link or ireq.req.key``) or just before it
    (``value`` -> ``value if value else None``) as that token replaced by the inserted text with
    it: the token is the change's hole. Unchanged otherwise."""
    inserted = {m.group() for m in b[j1:j2]}
    if i < len(a) and j2 < len(b) and b[j2].group() == a[i].group() \
            and hole_kind(a[i].group()) is not None and a[i].group() in inserted:
        return i, i + 1, j1, j2 + 1
    if i > 0 and j1 > 0 and b[j1 - 1].group() == a[i - 1].group() \
            and hole_kind(a[i - 1].group()) is not None and a[i - 1].group() in inserted:
        return i - 1, i, j1 - 1, j2
    return i, i, j1, j2


def _hole(deleted: list[str], inserted: str) -> tuple[str, str] | None:
    """(the hole's token, its kind): the one name, string or number of the deleted run that the
    inserted text carries; None when there is none or more than one."""
    carried = set(SHAPE_TOKEN.findall(inserted))
    found = {(t, k) for t in deleted if (k := hole_kind(t)) is not None and t in carried}
    return found.pop() if len(found) == 1 else None


def _example(before: str, after: str):
    """The edit's one change with its hole — or, when it made the same change at several places
    (``String::from("first")`` ... ``String::from("third")`` on three lines), the first of them,
    its inner anchors aside; None otherwise."""
    changes = _changes(before, after)
    if not changes:
        return None
    shapes, holes = set(), []
    for _lead, deleted, _trail, inserted, _ in changes:
        found = _hole(deleted, inserted)
        if found is None:
            return None
        holes.append(found)
        shapes.add((tuple(HOLE if t == found[0] else t for t in deleted), filled_in(inserted, {found[0]: HOLE}), found[1]))
    if len(shapes) != 1:
        return None
    lead, deleted, trail, inserted, span = changes[0]
    if len(changes) > 1:
        lead, trail = (), ()  # the places differ around the change; its tokens say it all
    return list(lead), deleted, list(trail), inserted, span, holes[0]


def _regex(tokens: list[str], hole: str, kind: str) -> re.Pattern:
    """``tokens`` in order, any spacing on one line between them (some where two words meet); the
    hole at each of its places the same token of its kind (group ``hole``); group ``change``: the
    deleted run, marked by the NUL pseudo-tokens around it."""
    out, prev, seen, opening = [], "", False, False
    for t in tokens:
        if t in ("\x01", "\x02"):
            opening = t == "\x01"  # the group opens after the next token's spacing
            if not opening:
                out.append(")")
            continue
        if t == hole:
            piece = "(?P=hole)" if seen else f"(?P<hole>{HOLE_PATTERNS[kind]})"
            seen = True
        else:
            piece = re.escape(t)
        word = word_char(t[0]) if t != hole else kind != "string"
        sep = r"[ \t]+" if prev == "word" and word else r"[ \t]*"
        out.append((sep if prev else "") + ("(?P<change>" if opening else "") + piece)
        opening = False
        prev = "word" if (word_char(t[-1]) if t != hole else kind != "string") else "other"
    body = "".join(out)
    first, last = tokens[0] if tokens[0] != "\x01" else tokens[1], tokens[-1] if tokens[-1] != "\x02" else tokens[-2]
    head = r"(?<![\w$])" if (first == hole and kind != "string") or (first != hole and word_char(first[0])) else ""
    tail = r"(?![\w$])" if (last == hole and kind != "string") or (last != hole and word_char(last[-1])) else ""
    return re.compile(head + body + tail)


def _anchors(n_lead: int, n_trail: int) -> list[tuple[int, int]]:
    """The anchors' lengths to try, in order: both backed off a token at a time, then each side
    whole alone (``ireq.req.key`` at ``key = ireq.req.key`` reads ``r.req.key`` after ``{``)."""
    both = [(min(n, n_lead), min(n, n_trail)) for n in range(max(n_lead, n_trail), -1, -1)]
    return [*dict.fromkeys([*both, (n_lead, 0), (0, n_trail)])]


def _code_offset(inserted: str) -> int:
    """Where in the inserted text whether it is code can be read: its first token that is no
    string literal (``"x".to_owned(`` is code, though it starts inside a string)."""
    return next((m.start() for m in SHAPE_TOKEN.finditer(inserted) if m.group()[0] not in "\"'`"), 0)


def _names_a_thing(tokens: list[str], hole: str) -> bool:
    """Some token besides the hole names something of the user's code or is a string: the pattern
    is specific (``String::from(...)``), not a shape (``if not X:``)."""
    return any(t != hole and (t[0] in "\"'`" or (word_char(t[0]) and not t[0].isdigit() and t not in KEYWORDS
                                                   and t not in BUILTIN_TYPES)) for t in tokens)


def run(ctx: RuleContext) -> list[Prediction]:
    """The newest change's places with another token at its hole (module docstring)."""
    ex = ctx.newest
    if ex is None:
        return []
    change = _example(ex.before, ex.after)
    if change is None:
        return []
    lead, deleted, trail, inserted, (start, end), found = change
    brought = {t for t in SHAPE_TOKEN.findall(inserted) if hole_kind(t) == "name" and t not in deleted}
    if len(brought) > MAX_NEW_NAMES:
        return []  # new code in place of the old, not the old transformed
    if len(deleted) == 1 and is_identifier(inserted.strip()):
        return []  # no hole; or one name for another: a rename
    hole, kind = found
    here, there = to_current(ex, start), to_current(ex, end)
    home = ctx.by_uri.get(ex.doc.uri)
    in_code = home is None or here is None or not non_code(home, here + _code_offset(inserted))
    sites, tokens = [], []
    for n_lead, n_trail in _anchors(len(lead), len(trail)):
        tokens = [*lead[len(lead) - n_lead:], "\x01", *deleted, "\x02", *trail[:n_trail]]
        others = [t for t in tokens if t not in (hole, "\x01", "\x02")]
        if len(others) < MIN_OTHER_TOKENS or not any(word_char(t[0]) for t in others):
            continue  # the hole and a bracket or two read like anything
        rx = _regex(tokens, hole, kind)
        for doc in ctx.same_language(ex.doc):
            parsed = ctx.by_uri.get(doc.uri)
            for m in rx.finditer(doc.text):
                s, e = m.span("change")
                if m.group("hole") == hole or doc is ex.doc and here is not None and s <= there and here <= e:
                    continue
                if parsed is not None and non_code(parsed, s) == in_code:
                    continue
                sites.append((doc, s, e, filled_in(inserted, {hole: m.group("hole")}), m.group("hole")))
        if sites:
            break
    if not sites:
        return []
    query, opts = ctx.query, ctx.options
    specific = _names_a_thing(tokens, hole)
    if not specific or len(sites) > opts.repeat_max_sites:
        below = [x for x in sites if x[0].uri == query.cursor_uri and x[1] >= query.cursor
                 and (specific or x[0].text.count("\n", query.cursor, x[1]) <= MAX_GENERIC_DISTANCE_LINES)]
        if not below:
            return []
        sites, conf = [min(below, key=lambda x: x[1])], NEXT_PATTERN_SITE.value
    else:
        conf = HOLE_REPEAT.value
    out = []
    for doc, s, e, new, value in sites:
        c = conf - (REPEAT_OTHER_DOCUMENT_PENALTY.value if doc.uri != query.cursor_uri else 0.0)
        out.append(Prediction(doc.uri, s, e, new, round(max(c, 0.0), 6),
                              f"the same change as the last edit, with {value} for {hole}", RULE.kind, "syntax",
                              doc.text[s:e]))
    return out


RULE = Rule("NE208", "hole-repeat", "repeat", HOLE_REPEAT.value, run, __doc__)
