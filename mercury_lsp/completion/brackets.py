"""The brackets left open before the cursor, and whether a candidate closes one that is not.

A rest of line often ends by closing what the lines above opened (``})``, ``);``, ``],``). Which
closers are right depends on the code above the cursor's line, not on the line alone: a candidate
that closes a ``)`` where the innermost open bracket is a ``{`` is wrong however often its text
follows the typed context elsewhere. The ranker reads that as a feature (``rank.features``,
``open_mismatch``).

The scan is a heuristic over the text, not a parse: string and character literals and comments
are blanked first (``"…"``, ``'…'``, `` `…` ``, ``//…``, ``/*…*/``; in Rust a lifetime or a label
``'a`` is not a literal), then the brackets are matched in order; a closer with no matching opener
is skipped.
"""

from __future__ import annotations

import re

# The text before the cursor that is scanned: a long function or two. Brackets opened further up
# are a class's or a module's, which a rest of line does not close; a bound on the work per request.
SCAN_CHARS = 6000
OPENERS, CLOSERS = "([{", ")]}"
MATCH = dict(zip(CLOSERS, OPENERS, strict=True))
# Blanked before matching: literals and comments (single-line literals, but template strings and
# block comments). In Rust a lifetime or a label comes first, so that ``'a`` never starts a literal.
_LITERALS = (r'"(?:\\.|[^"\\\n])*"'
             r"|'(?:\\.|[^'\\\n])*'"
             r"|`(?:\\.|[^`\\])*`"
             r"|//[^\n]*"
             r"|/\*.*?\*/")
LITERALS = re.compile(_LITERALS, re.S)
RUST_LITERALS = re.compile(r"'[A-Za-z_]\w*(?![\w'])|" + _LITERALS, re.S)


BRACKET = re.compile(r"[()\[\]{}]")


def _literals(language: str) -> re.Pattern[str]:
    return RUST_LITERALS if language == "rust" else LITERALS


def _walk(text: str, stack: list[str], language: str) -> int:
    """Match ``text``'s brackets onto ``stack`` (changed in place); the closers that matched no
    open bracket."""
    unmatched = 0
    for ch in BRACKET.findall(_literals(language).sub(" ", text)):
        if ch in OPENERS:
            stack.append(ch)
        elif stack and stack[-1] == MATCH[ch]:
            stack.pop()
        else:
            unmatched += 1
    return unmatched


def open_at(text: str, cursor: int, language: str = "") -> str:
    """The brackets open at ``cursor`` (innermost last), from the ``SCAN_CHARS`` before it
    (``language``: the grammar's name)."""
    stack: list[str] = []
    _walk(text[max(0, cursor - SCAN_CHARS):cursor], stack, language)
    return "".join(stack)


def closes_unopened(open_brackets: str, text: str, language: str = "") -> bool:
    """Does ``text``, typed at a cursor where ``open_brackets`` are open, close a bracket that is
    not the innermost open one (or close one when none is open)?"""
    return _walk(text, list(open_brackets), language) > 0
