"""NE207 shaped-repeat: the user's rewrite of a few lines repeated at the next lines below that read
as its old lines with one or two names, strings or numbers in other places, each carried over.

**What.** The newest edit rewrote whole lines (``old`` -> ``new``, both non-blank, at most
``MAX_LINES`` lines). Below it in the same document, the first run of as many lines whose tokens
read as ``old``'s token for token, except at most ``MAX_HOLES`` names, strings or numbers
(*holes*: the example's token at one place, the site's at the same place), gets ``new`` with each
hole's token replaced by the site's and re-indented to the site. A rewrite that keeps its line count must delete a token (a pure insertion within lines is
NE204's, with its own precision rules); one that wraps lines in new ones need not. A
site is taken only when

* every hole's token of the example is still in ``new`` (the rewrite *carried* it: ``routeKey``
  in ``if val != nil { context.Set(r, routeKey, val) }``); a hole the rewrite replaced says the
  site needs a text the example does not give (``license="BSD"`` -> ``"BSD-3-Clause"`` is no rule
  for ``maintainer="Pallets Team"``);
* the holes are one-to-one (two example tokens never become one site token, nor one two);
* the site shares at least as many names and strings with the example as it has holes (a line
  of punctuation and one shared keyword reads like any other);
* the new text differs from the site's;
* a name the rewrite brings that only some functions bind (a parameter just added) is bound
  where the site stands;
* the rewrite is not one name renamed where it is bound or declared (``self.count = 0`` ->
  ``self.total = 0``): the rename rules follow a rename by its scope and its member's owner.

Only the nearest such site below the edit, within ``MAX_DISTANCE_LINES`` lines, is offered: the
rule is a guess at the user's next stop, not a search-and-replace (NE204 repeats the identical
change everywhere).

Rows rewritten alike (``line_rule``): when the edit rewrote ``MIN_RULE_LINES`` or more lines one
for one, each the same way (``bold: [1, 22],`` -> ``bold: code(1, 22),`` on every row of a
table), the rows teach their own holes — the places where they differ, names, strings or numbers
however many — and the nearest run of lines below that reads as a row but at those holes is
rewritten row by row, as one edit (the next table's ``black: [30, 39],`` ... ``gray: [90, 39],``).
A number or string every row has alike and the rewrite carries over may differ in the rows below
(``bgBlack: [40, 49],`` after rows ending in ``39``), and the run's last row may lack the
separator the others end with (``bgWhite: [47, 49]``).
The document's two newest edits are rows too when each rewrote as many lines the same way
(``_pair_rule``): ``import EventEmitter from 'eventemitter3';`` then ``import inRange from
'in-range';``, each to ``= require(...)``, rewrite the next ``import randomInt from
'random-int';`` — a shape the user repeated needs no shared name, where one example does.

**Why.** A commit often makes one change to a few sibling statements that differ in a name or
two — the next ``context.Set(r, routeKey, val)`` wrapped as the one above it, the next pair of
``const code = result.code;`` lines turned into a destructuring, a struct's next method given the
same guard. NE204 needs the changed tokens themselves to repeat; here they differ, but the shape
and the tokens the edit kept say what the next one becomes.

**Example.** ``context.Set(r, varsKey, val)`` -> ``if val != nil {\\n\\tcontext.Set(r, varsKey,
val)\\n}``: the next ``context.Set(r, routeKey, val)`` below becomes ``if val != nil {\\n\\t
context.Set(r, routeKey, val)\\n}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mercury_lsp.next_edit.examples import Example, to_current
from mercury_lsp.next_edit.members import declares
from mercury_lsp.next_edit.prose import non_code
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import SHAPED_REPEAT
from mercury_lsp.next_edit.scopes import binds, local_only_scopes
from mercury_lsp.next_edit.text import (
    KEYWORDS,
    QUOTED,
    TOKEN,
    changed_lines,
    diff_region,
    indent_of,
    shared_ends,
)
from mercury_lsp.text import line_starts_of

# A string literal is one token (a hole is the whole string), anything else as ``TOKEN`` reads it.
SHAPE_TOKEN = re.compile(f"{QUOTED.pattern}|{TOKEN.pattern}")
SEPARATORS = ",;"  # what ends each row of a list but, often, its last
SPELLED_NAME = re.compile(r"[A-Za-z_$][\w$]*")  # a string literal's whole text that is a name ("keys")
MAX_LINES = 12  # a longer rewrite is new code, not a shape a sibling repeats
MIN_TOKENS = 4  # fewer tokens ('x = 1') read like too many other lines
# Lines rewritten each alike that teach their own holes (where they differ): a table's rows.
MIN_RULE_LINES = 2
MAX_HOLES = 2  # more differing tokens: another statement that looks alike, not a sibling
# The site is looked for this far below the edit: on the six tuning sets (dev, heldout..heldout5,
# offline on their hunks) 20 lines found 4 new hits for 5 false positives, the whole file below
# 7 for 9; the nearest site alone is offered either way.
MAX_DISTANCE_LINES = 400
# A rewrite the document's previous edit made alike (``_pair_rule``) is looked for among this many
# newest edits (across documents): an edit of another file in between still leaves the pair.
PAIR_EXAMPLES = 3


def hole_kind(tok: str) -> str | None:
    """The class of a token that may be a hole: a string, a number or a name (no keyword)."""
    if tok[0] in "\"'`":
        return "string"
    if tok[0].isdigit():
        return "number"
    if (tok[0].isalpha() or tok[0] in "_$") and tok not in KEYWORDS:
        return "name"
    return None


def holes(example: list[str], site: list[str]) -> dict[str, str] | None:
    """The example token -> site token at each place the two differ, when the site reads as the
    example but for those (module docstring: one-to-one, names, strings and numbers only, at
    least as many shared names and strings as holes); None when it does not."""
    if len(example) != len(site):
        return None
    found: dict[str, str] = {}
    same: set[str] = set()
    shared = 0  # places where a name or string stands unchanged
    for a, b in zip(example, site, strict=True):
        if a == b:
            same.add(a)
            shared += hole_kind(a) in ("name", "string")
            continue
        kind = hole_kind(a)
        if kind is None or kind != hole_kind(b) or found.get(a, b) != b:
            return None
        found[a] = b
    if not found or len(found) > MAX_HOLES or len(set(found.values())) != len(found) or shared < len(found):
        return None
    # a token that stands unchanged at one place and differs at another, or a site token the
    # example spells elsewhere, is a reordering ('Copy, Clone, Eq' / 'Clone, Eq, Copy'), not a hole
    if same & (set(found) | set(found.values())) or set(found.values()) & set(example):
        return None
    return found


def _deletes(old: list[str], new: list[str]) -> bool:
    """Whether the change from ``old`` to ``new`` deletes a token: a pure insertion within the
    lines (an argument, a union member added) is NE204's, whose precision rules (the same
    function's lists, no anchor of type words alone) say where it repeats."""
    head, tail = shared_ends(old, new)
    return len(old) - head - tail > 0


def filled_in(text: str, found: dict[str, str]) -> str:
    """``text`` with each hole's example token replaced by the site's (whole tokens only; a name
    hole also where a string literal spells it whole: ``"keys"`` for ``keys``)."""
    def fill(m: re.Match) -> str:
        t = m.group(0)
        if t in found:
            return found[t]
        inner = t[1:-1] if len(t) > 1 and t[0] in "\"'`" else None
        if inner in found and SPELLED_NAME.fullmatch(inner) and SPELLED_NAME.fullmatch(found[inner]):
            return t[0] + found[inner] + t[-1]
        return t
    return SHAPE_TOKEN.sub(fill, text)


def carried_tokens(tokens: list[str]) -> set[str]:
    """The tokens a rewrite carries: its own, and the names its string literals spell whole
    (``operator.methodcaller("keys")`` carries ``keys``)."""
    return set(tokens) | {t[1:-1] for t in tokens if t[0] in "\"'`" and SPELLED_NAME.fullmatch(t[1:-1])}


def reindented(text: str, old_indent: str, new_indent: str) -> str | None:
    """``text``'s lines moved from ``old_indent`` to ``new_indent`` (None: a line is outside it)."""
    if old_indent == new_indent:
        return text
    lines = text.split("\n")
    if any(line.strip() and not line.startswith(old_indent) for line in lines):
        return None
    return "\n".join(new_indent + line[len(old_indent):] if line.strip() else line for line in lines)


def _renames_binding(ctx: RuleContext, ex: Example, example: list[str], rewritten: list[str]) -> bool:
    """The rewrite replaced one name where it is bound or a member declared (``self.count = 0``
    -> ``self.total = 0``): a rename, whose sites the rename rules find by scope and owner — a
    sibling line of another binding or another class's member is not one of them."""
    head, tail = shared_ends(example, rewritten)
    if len(example) - head - tail != 1 or len(rewritten) - head - tail != 1 or hole_kind(rewritten[head]) != "name":
        return False
    home = ctx.by_uri.get(ex.doc.uri)
    at = to_current(ex, diff_region(ex.before, ex.after)[0])
    if home is None or at is None or not ex.doc.text.startswith(rewritten[head], at):
        return False
    return binds(home, at, rewritten[head]) or declares(home, at)


def _brought_locals(home, ex: Example, lo: int, hi: int, example: set[str]) -> list[list[tuple[int, int]]]:
    """For each name the rewrite ``ex.after[lo:hi]`` brings into code (not in a comment or a
    string) that only some functions bind (a parameter just added), those functions' spans: a
    site outside them would use a name it does not have."""
    if home is None or ex.after != home.doc.text:
        return []
    names = {m.group() for m in SHAPE_TOKEN.finditer(ex.after, lo, hi)
             if m.group() not in example and hole_kind(m.group()) == "name" and not non_code(home, m.start())}
    return [spans for spans in (local_only_scopes(home, n) for n in sorted(names)) if spans]


def run(ctx: RuleContext) -> list[Prediction]:
    """The newest rewrite's next sibling below it (module docstring)."""
    ex = ctx.newest
    if ex is None:
        return []
    got = _rewrite(ex)
    if got is None:
        return []
    old_lines, new_lines, lo, new_end, lead, trail = got
    old, new = "\n".join(old_lines), "\n".join(new_lines)
    n = len(old_lines)
    if not old.strip() or not new.strip() or n > MAX_LINES or len(new_lines) > MAX_LINES:
        return []
    example = SHAPE_TOKEN.findall(old)
    if len(example) < MIN_TOKENS:
        return []
    rewritten = SHAPE_TOKEN.findall(new)
    if len(new_lines) == n and not _deletes(example, rewritten) or _renames_binding(ctx, ex, example, rewritten):
        return []
    carried = carried_tokens(rewritten)
    new_lo = lo + sum(len(line) + 1 for line in ex.after[lo:new_end].split("\n")[:lead])
    local = _brought_locals(ctx.by_uri.get(ex.doc.uri), ex, new_lo, new_lo + len(new), set(example))
    text = ex.doc.text
    lines = text.split("\n")
    starts = line_starts_of(text)
    first = text.count("\n", 0, new_end) + 1 - trail
    for i in range(first, min(len(lines) - n + 1, first + MAX_DISTANCE_LINES)):
        site = "\n".join(lines[i:i + n])
        found = holes(example, SHAPE_TOKEN.findall(site))
        if found is None or any(a not in carried for a in found):
            continue
        filled = reindented(filled_in(new, found), indent_of(old), indent_of(site))
        if filled is None or filled == site:
            continue
        start = starts[i]
        if any(not any(lo <= start < hi for lo, hi in spans) for spans in local):
            continue
        names = ", ".join(f"'{a}' -> '{b}'" for a, b in found.items())
        return [Prediction(ex.doc.uri, start, start + len(site), filled, SHAPED_REPEAT.value,
                           f"the next lines below read as the ones just rewritten ({names}): the same rewrite",
                           RULE.kind, "syntax", site)]
    rule = line_rule(old_lines, new_lines) or _pair_rule(ctx, ex, old_lines, new_lines)
    return [] if rule is None else _next_run(ex, rule, first, local)


def _rewrite(ex: Example) -> tuple[list[str], list[str], int, int, int, int] | None:
    """The whole lines ``ex`` rewrote, old and new, without the lines both versions share at
    their ends, with the region's start, its end in the new text and how many lines were shared
    at its start and at its end; None when the edit changed nothing."""
    span = changed_lines(ex.before, ex.after)
    if span is None:
        return None
    lo, old_end, new_end = span
    old_lines, new_lines = ex.before[lo:old_end].split("\n"), ex.after[lo:new_end].split("\n")
    lead, trail = shared_ends(old_lines, new_lines)  # no part of the rewrite
    return (old_lines[lead:len(old_lines) - trail], new_lines[lead:len(new_lines) - trail], lo, new_end,
            lead, trail)


def _pair_rule(ctx: RuleContext, ex: Example, old_lines: list[str], new_lines: list[str]) -> LineRule | None:
    """The rewrite the document's two newest edits made alike, each to its own lines (``import
    EventEmitter from 'eventemitter3';`` then ``import inRange from 'in-range';``, each to ``import
    X = require('x');``): the two edits are the rows of ``line_rule``, their differences its holes
    — a shape the user repeated is confirmed where one example alone needs shared names."""
    prev = next((e for e in ctx.examples[1:PAIR_EXAMPLES] if e.doc.uri == ex.doc.uri and e.index == 1), None)
    got = None if prev is None else _rewrite(prev)
    if got is None or len(got[0]) != len(old_lines) or len(got[1]) != len(new_lines):
        return None
    return line_rule(got[0] + old_lines, got[1] + new_lines)


@dataclass(frozen=True)
class LineRule:
    """One rewrite the edit made to each of its lines alike: the first line's tokens and its new
    text, and the places where the lines differ (the holes, learnt from the lines themselves)."""
    tokens: list[str]
    new: str
    indent: str
    holes: list[int]
    # places where every row has the same number or string, carried over by the rewrite: another
    # table's rows may hold another there (``black: [30, 39]`` rows teach ``bgBlack: [40, 49]``)
    soft: frozenset[int] = frozenset()

    def rewrite(self, line: str) -> str | None:
        """``line`` rewritten so, when it reads as the rule's old line but at its holes (a name,
        string or number of the same kind at each); None otherwise."""
        site = SHAPE_TOKEN.findall(line)
        tokens, new = self.tokens, self.new
        if len(site) == len(tokens) - 1 and tokens[-1] in SEPARATORS and new.rstrip().endswith(tokens[-1]):
            # the last row of a list, without the separator the others end with
            tokens, new = tokens[:-1], new.rstrip()[:-1]
        if len(site) != len(tokens):
            return None
        found: dict[str, str] = {}
        for i, (a, b) in enumerate(zip(tokens, site, strict=True)):
            if a == b and i not in self.holes:
                continue
            if i not in self.holes and i not in self.soft or hole_kind(a) != hole_kind(b) \
                    or found.setdefault(a, b) != b:
                return None
        return reindented(filled_in(new, found), self.indent, indent_of(line))


def line_rule(old_lines: list[str], new_lines: list[str]) -> LineRule | None:
    """The one rewrite each of several lines got (``bold: [1, 22],`` -> ``bold: code(1, 22),``
    on every line of a table): the lines read alike but at some names, strings or numbers, and
    each line's new text is the first's with those filled in. None when the lines differ
    otherwise, or were rewritten each its own way."""
    if len(old_lines) < MIN_RULE_LINES or len(old_lines) != len(new_lines):
        return None
    toks = [SHAPE_TOKEN.findall(line) for line in old_lines]
    if len(toks[0]) < MIN_TOKENS or any(len(t) != len(toks[0]) for t in toks):
        return None
    holes = [i for i in range(len(toks[0])) if len({t[i] for t in toks}) > 1]
    if not holes or len(holes) == len(toks[0]):
        return None
    # the rule is read from the first line whose holes hold distinct tokens, none of them also
    # standing where the lines agree (``reset: [0, 0]`` cannot say which 0 goes where)
    k = next((k for k, t in enumerate(toks) if _distinct_holes(t, holes)), None)
    if k is None:
        return None
    first = toks[k]
    carried = set(SHAPE_TOKEN.findall(new_lines[k]))
    if any(hole_kind(first[i]) is None or first[i] not in carried for i in holes):
        return None
    if not _deletes(first, SHAPE_TOKEN.findall(new_lines[k])):
        return None  # tokens added within each line: NE204's, with its own precision rules
    new_tokens = SHAPE_TOKEN.findall(new_lines[k])
    soft = frozenset(i for i, t in enumerate(first) if i not in holes and hole_kind(t) in ("number", "string")
                     and first.count(t) == 1 and new_tokens.count(t) == 1)
    rule = LineRule(first, new_lines[k], indent_of(old_lines[k]), holes, soft)
    if any(rule.rewrite(o) != n for o, n in zip(old_lines, new_lines, strict=True)):
        return None
    return rule


def _distinct_holes(tokens: list[str], holes: list[int]) -> bool:
    values = [tokens[i] for i in holes]
    fixed = {t for i, t in enumerate(tokens) if i not in holes}
    return len(set(values)) == len(values) and not fixed & set(values)


def _next_run(ex: Example, rule: LineRule, first: int, local) -> list[Prediction]:
    """The nearest run of lines below the edit (within ``MAX_DISTANCE_LINES``) that the rule
    rewrites, rewritten as one edit; [] when there is none."""
    text = ex.doc.text
    lines = text.split("\n")
    starts = line_starts_of(text)
    for i in range(first, min(len(lines), first + MAX_DISTANCE_LINES)):
        out = rule.rewrite(lines[i])
        if out is None or out == lines[i]:
            continue
        j = i + 1
        while j < len(lines) and (more := rule.rewrite(lines[j])) is not None and more != lines[j]:
            j += 1
        start, end = starts[i], starts[i] + len("\n".join(lines[i:j]))
        if any(not any(lo <= start < hi for lo, hi in spans) for spans in local):
            return []
        new = "\n".join(rule.rewrite(line) or line for line in lines[i:j])
        return [Prediction(ex.doc.uri, start, end, new, SHAPED_REPEAT.value,
                           f"the next {j - i} line(s) below read as each line just rewritten: the same rewrite",
                           RULE.kind, "syntax", text[start:end])]
    return []


RULE = Rule("NE207", "shaped-repeat", "repeat", SHAPED_REPEAT.value, run, __doc__)
