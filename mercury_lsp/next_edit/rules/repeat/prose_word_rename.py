"""NE202 prose-word-rename: a word of a docstring or comment renamed to a name the code uses is
renamed in the rest of that string or comment run.

**What.** One word replaced by another inside a docstring, a string or a comment (a word that is
not itself a distinctive identifier: those are renamed everywhere, NE201), where the new word is
a name the document's code uses: the old word's other occurrences in the same string, or the
same run of comments on consecutive lines, get the new word. Any example of the newest three
(a docstring's examples are edited one after another). The first word of a doc comment renamed
(``// Batch creates ...`` -> ``// Buffer creates ...``, the Go convention) renames the
declaration right below it that declares the old word (``func Batch[T any](...)``), though the
code does not use the new name yet (``doc_subject``).

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


# A comment line's marker and first word (``// Batch creates``, ``/// Batch``).
COMMENT_HEAD = re.compile(r"[ \t]*(?://+|#)[ \t]*")
# A declaration's keywords before its name (``func (r *T) Name``, ``pub fn name``, ``type Name``).
DECLARED = re.compile(r"[ \t]*(?:pub(?:\([\w:]+\))?\s+)?(?:func\s*(?:\([^)]*\)\s*)?|fn\s+|type\s+|struct\s+"
                      r"|enum\s+|trait\s+|const\s+|var\s+|static\s+|def\s+|class\s+)(?P<name>[A-Za-z_$][\w$]*)")


def doc_subject(rule: TokenRule, home: DocState, edit: tuple[int, int]) -> list[Site]:
    """The first word of a doc comment renamed: the name of the declaration right below the
    comment's run, where it declares the old word (module docstring)."""
    old, new = rule.deleted[0], rule.inserted.strip()
    text = home.text
    start = text.rfind("\n", 0, edit[0]) + 1
    head = COMMENT_HEAD.match(text, start)
    if head is None or head.end() != edit[0] + len(rule.inserted) - len(rule.inserted.lstrip()):
        return []  # not the comment line's first word
    pos = text.find("\n", edit[1])
    while pos >= 0:
        line_end = text.find("\n", pos + 1)
        line = text[pos + 1:line_end if line_end >= 0 else len(text)]
        if COMMENT_HEAD.match(line) and line.strip()[:1] in "/#":
            pos = line_end
            continue
        m = DECLARED.match(line)
        if m is None or m.group("name") != old:
            return []
        at = pos + 1 + m.start("name")
        return [Site(home, at, at + len(old), new, 0, True, code=RULE.code)]
    return []


RULE = Rule("NE202", "prose-word-rename", "rename", REPEAT_RENAME.value, family_member(FAMILY, "NE202"),
            __doc__)
