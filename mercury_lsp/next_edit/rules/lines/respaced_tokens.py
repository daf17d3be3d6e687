"""NE306 respaced-tokens: an edit that changed only the spacing between two tokens, repeated
wherever the same two tokens stand spaced the old way, in the open documents of the language.

**What.** The newest edit's changed lines read as the same tokens before and after it, and at
most ``MAX_GAPS`` of the gaps between tokens changed (the indentation a line starts with is
NE304's): a stub's body joined onto its ``def`` line (``-> str:`` / ``...`` on the next line ->
``-> str: ...``), a doubled space taken out (``)  {`` -> ``) {``), a space put after a keyword
(``if(`` -> ``if (``). Every other place where the gap's left and right tokens stand with the old
spacing gets the new spacing (a gap with line breaks matches any indentation after the same
number of breaks), the nearest ``nextEdit.repeatMaxResults`` first — the cursor's document before
the others.

Places in comments and strings (a doctest's ``...``) are left alone. A gap is repeated only when it
says something: a gap the edit split onto a new line is not (the
new line's indentation is the site's to choose); a line joined between two punctuation tokens
(``(`` and ``)``, ``,`` and ``{``: brackets and separators) is too common a shape to be the user's
intent, and so is a space put between two of them; the left and right tokens of the other gaps are the pattern's anchor.

**Why.** The repeat family's layout rules (``tokens._layout_rules``, NE204) anchor a respacing on
up to ``LAYOUT_CONTEXT_TOKENS`` tokens of its line, so a sibling whose line differs before the gap
(``-> Markup:`` beside ``-> str:``) is not matched; NE304 continues one only on the lines right
below. Here the anchor is the gap's two tokens alone, gated by what the gap says. Commits that reformat do it
everywhere: the stubs of a ``Protocol`` across its file and the test doubles of another, every
``)  {`` a hand edit left.

**Example.** ``def __html__(self) -> str:`` / ``...`` joined into ``def __html__(self) -> str:
...``: the ``def __call__(self, s) -> Markup:`` / ``...`` below, and the same stubs in the tests'
``conftest.py``, are joined too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import LINES_OTHER_DOCUMENT_PENALTY, RESPACED_TOKENS
from mercury_lsp.next_edit.rules.repeat.tokens import tokenize
from mercury_lsp.next_edit.text import changed_lines
from mercury_lsp.next_edit.tree import ParsedDoc
from mercury_lsp.syntax import is_textual

MAX_GAPS = 3  # more changed gaps in one edit: a reformat of a statement, no one change to repeat
MAX_EDIT_LINES = 12  # an edit over more lines is a reformat of a block of its own
WORD = re.compile(r"[\w$]")
# Brackets and separators: a line joined between two of them (``(`` and ``)``, ``,`` and ``{``),
# or a space put between two of them, is a shape every file has, not the user's intent.
SEPARATORS = frozenset("()[]{},;")


@dataclass(frozen=True)
class Gap:
    left: str  # the token before the gap
    right: str  # the token after it
    old: str  # the spacing before the edit
    new: str  # the spacing after it

    def pattern(self) -> re.Pattern:
        """The two tokens with the old spacing between them (whole tokens; a gap with line breaks
        matches any indentation after the same number of breaks)."""
        lead = r"(?<![\w$])" if WORD.match(self.left[0]) else ""
        tail = r"(?![\w$])" if WORD.match(self.right[-1]) else ""
        breaks = self.old.count("\n")
        gap = "[ \\t]*" + "\\n[ \\t]*" * breaks if breaks else re.escape(self.old)
        return re.compile(lead + re.escape(self.left) + "(" + gap + ")" + re.escape(self.right) + tail)


def gap_changes(before: str, after: str) -> list[Gap]:
    """The gaps between tokens the edit ``before`` -> ``after`` respaced, when it changed nothing
    but spacing between tokens of its lines (module docstring); [] otherwise."""
    lines = changed_lines(before, after)
    if lines is None:
        return []
    lo, hb, ha = lines
    old, new = before[lo:hb], after[lo:ha]
    if old.count("\n") > MAX_EDIT_LINES or new.count("\n") > MAX_EDIT_LINES:
        return []
    a, b = tokenize(old), tokenize(new)
    if len(a) < 2 or [t.text for t in a] != [t.text for t in b]:
        return []
    gaps = []
    for i in range(len(a) - 1):
        ga, gb = old[a[i].end:a[i + 1].start], new[b[i].end:b[i + 1].start]
        if ga != gb:
            gaps.append(Gap(a[i].text, a[i + 1].text, ga, gb))
    if not gaps or len(gaps) > MAX_GAPS:
        return []
    return [g for g in gaps if _telling(g)]


def _telling(g: Gap) -> bool:
    """A gap whose repetition says something (module docstring)."""
    if "\n" in g.new:  # split onto a new line: the site chooses the indentation
        return False
    punctuation = g.left in SEPARATORS and g.right in SEPARATORS
    if "\n" in g.old:
        return not punctuation
    if punctuation and len(g.new) > len(g.old):
        return False
    return True


def _in_text(parsed: ParsedDoc | None, offset: int) -> bool:
    """The token at ``offset`` stands in a comment or a string (a doctest's ``...``, prose): no code
    to respace; unknown without a parse (a grammar the daemon lacks), where it counts as code."""
    if parsed is None:
        return False
    b = parsed.b.byte(offset)
    return is_textual(parsed.tree.root_node.descendant_for_byte_range(b, b + 1))


def run(ctx: RuleContext) -> list[Prediction]:
    """The newest edit's respaced gaps repeated where the same tokens stand spaced the old way."""
    if not ctx.examples:
        return []
    ex = ctx.examples[0]
    gaps = gap_changes(ex.before, ex.after)
    if not gaps:
        return []
    opts, query = ctx.options, ctx.query
    patterns = [(g, g.pattern()) for g in gaps]
    out: list[Prediction] = []
    for d in ctx.same_language(ex.doc):
        text, parsed = d.text, ctx.by_uri.get(d.uri)
        for g, pattern in patterns:
            for m in pattern.finditer(text):
                s, e = m.span(1)
                if _in_text(parsed, m.start()):
                    continue
                conf, where = RESPACED_TOKENS.value, ""
                if d.uri != query.cursor_uri:
                    conf -= LINES_OTHER_DOCUMENT_PENALTY.value
                    where = " (another document)"
                out.append(Prediction(d.uri, s, e, g.new, round(conf, 6),
                                      f"respaced like the user's edit: {g.left!r} and {g.right!r}{where}",
                                      RULE.kind, "syntax", text[s:e]))
    out.sort(key=lambda p: (p.uri != query.cursor_uri, abs(p.start - query.cursor)))
    return out[: opts.repeat_max_results]


RULE = Rule("NE306", "respaced-tokens", "repeat", RESPACED_TOKENS.value, run, __doc__)
