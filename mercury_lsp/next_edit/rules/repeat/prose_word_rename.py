"""NE202 prose-word-rename: a word of a docstring or comment renamed to a name the code uses is
renamed in the rest of that string or comment run.

**What.** One word replaced by another inside a docstring, a string or a comment (a word that is
not itself a distinctive identifier: those are renamed everywhere, NE201), where the new word is
a name the document's code uses: the old word's other occurrences in the same string, or the
same run of comments on consecutive lines, get the new word. Any example of the newest three
(a docstring's examples are edited one after another).

**Why.** A docstring names the parameters and values of its code; renaming one there is made
in every sentence of it.

**Example.** In a docstring, ``data`` -> ``iterables`` (a parameter the function takes): the
docstring's other ``data`` become ``iterables``.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.prose import non_code, prose_span
from mercury_lsp.next_edit.query import DocState
from mercury_lsp.next_edit.rules.base import Rule, family_member
from mercury_lsp.next_edit.rules.confidence import REPEAT_RENAME
from mercury_lsp.next_edit.rules.repeat.patterns import Site
from mercury_lsp.next_edit.rules.repeat.tokens import FAMILY, TokenRule
from mercury_lsp.next_edit.tree import ParsedDoc


def sites(rule: TokenRule, home: DocState, parsed: ParsedDoc | None, edit: tuple[int, int]) -> list[Site]:
    """A word of a docstring or comment changed to a name the code uses (``data`` -> ``iterables``
    in a docstring's examples): the same word in the rest of that string or comment run."""
    old, new = rule.deleted[0], rule.inserted.strip()
    span = prose_span(parsed, edit[0] + len(rule.inserted) - len(rule.inserted.lstrip()))
    if span is None or not any(not non_code(parsed, m.start())
                               for m in re.finditer(rf"(?<![\w$]){re.escape(new)}(?![\w$])", home.text)):
        return []
    word = re.compile(rf"(?<![\w$]){re.escape(old)}(?![\w$])")
    return [Site(home, m.start(), m.end(), new, 0, True, code=RULE.code) for m in word.finditer(home.text, *span)
            if not (m.start() < edit[1] and edit[0] < m.end())]


RULE = Rule("NE202", "prose-word-rename", "rename", REPEAT_RENAME.value, family_member(FAMILY, "NE202"),
            __doc__)
