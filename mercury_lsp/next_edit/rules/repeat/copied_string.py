"""NE210 copied-string: a string literal the user rewrote, and its copies elsewhere — the same text
in another string literal, an error message a test asserts — get the same new text.

**What.** The newest edit changed text inside one string literal only (``'JWE Shared Protected,
... must be disjoint'`` -> ``'JWE Protected, ... must be disjoint'``), and the literal's old text
is specific (at least ``MIN_STRING_CHARS`` characters and ``MIN_WORDS`` words). Every other
string literal in the open documents (of any language: a TypeScript message asserted by a
JavaScript test) whose text is exactly the old one gets the
new text, inside its own quotes — the cursor's document first, then the others (ranked below);
more copies than ``nextEdit.repeatMaxSites``: the text is boilerplate, none is offered. Where
copies stand, the token rules do not repeat the edit's change in other strings: the words around
it are the message's own.

**Why.** A message is written once and asserted or repeated elsewhere (the test that expects
it, a second raise of the same error); the token rules anchor a change inside a string on the
few words around it, which other strings share (``JWE Shared Unprotected`` beside ``JWE Shared
Protected``). The whole old text is the anchor here: what matches it is a copy.

**Example.** ``throw new JWEInvalid('JWE Shared Protected, JWE Shared Unprotected and JWE
Per-Recipient Header Parameter names must be disjoint')`` loses ``Shared `` before
``Protected``: the test's ``message: 'JWE Shared Protected, ... must be disjoint'`` follows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mercury_lsp.next_edit.query import DocState, Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import COPIED_STRING, REPEAT_OTHER_DOCUMENT_PENALTY
from mercury_lsp.next_edit.text import diff_region, line_bounds

# A one-line string literal (its quotes kept: group 1 the quote, group 2 the text).
LITERAL = re.compile(r"""(["'`])((?:\\.|(?!\1)[^\\\n])*)\1""")
MIN_STRING_CHARS = 16  # shorter texts ('utf-8', 'id') are common words, not one message's copies
MIN_WORDS = 3


def _literal_at(text: str, lo: int, hi: int) -> re.Match | None:
    """The string literal of ``text`` that contains ``[lo, hi)`` whole, on its line."""
    start, end = line_bounds(text, lo, hi)
    for m in LITERAL.finditer(text, start, end):
        if m.start(2) <= lo and hi <= m.end(2):
            return m
    return None


def _rewritten(ctx: RuleContext) -> tuple[str, str, str, int] | None:
    """(old text, new text, the document's URI, the literal's start now) of the string literal the
    newest edit rewrote inside; None when the edit changed anything else."""
    ex = ctx.newest
    if ex is None:
        return None
    p, eb, ea = diff_region(ex.before, ex.after)
    old, new = _literal_at(ex.before, p, eb), _literal_at(ex.after, p, ea)
    if old is None or new is None or old.start() != new.start() or old.group(1) != new.group(1):
        return None
    before, after = old.group(2), new.group(2)
    if before == after or len(before) < MIN_STRING_CHARS or len(before.split()) < MIN_WORDS:
        return None
    return before, after, ex.doc.uri, new.start()


@dataclass(frozen=True)
class Copies:
    before: str  # the literal's old text
    after: str  # its new text
    sites: tuple[tuple[DocState, int, int], ...]  # the spans of the copies' text


def copies(ctx: RuleContext) -> Copies | None:
    """The copies of the string literal the newest edit rewrote inside; None when there is none
    or too many (shared: the token rules leave such an edit to this rule)."""
    got = _rewritten(ctx)
    if got is None:
        return None
    before, after, uri, at = got
    sites = []
    for d in ctx.query.docs:  # a message's copy may stand in a test of another language (.ts, .mjs)
        for m in LITERAL.finditer(d.text):
            if m.group(2) == before and not (d.uri == uri and m.start() == at):
                sites.append((d, m.start(2), m.end(2)))
    return Copies(before, after, tuple(sites)) if 0 < len(sites) <= ctx.options.repeat_max_sites else None


def run(ctx: RuleContext) -> list[Prediction]:
    """The copies of the rewritten literal's old text, given its new text (module docstring)."""
    found = ctx.shared(copies)
    if found is None:
        return []
    cursor, home = ctx.query.cursor, ctx.query.cursor_uri
    out = []
    for d, s, e in sorted(found.sites, key=lambda x: (x[0].uri != home, abs(x[1] - cursor)))[:ctx.options.repeat_max_results]:
        confidence = COPIED_STRING.value - (0 if d.uri == home else REPEAT_OTHER_DOCUMENT_PENALTY.value)
        out.append(Prediction(d.uri, s, e, found.after, round(confidence, 3),
                              "a copy of the string the user just rewrote", RULE.kind, "syntax", found.before))
    return out


RULE = Rule("NE210", "copied-string", "repeat", COPIED_STRING.value, run, __doc__)
