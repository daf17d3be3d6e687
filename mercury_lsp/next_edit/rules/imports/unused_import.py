"""NE401 unused-import: an import whose last use the user's edit rewrote goes.

**What.** The newest edit, rewriting lines in place, removed the last use of a name an import
brings in (the import statements come from the language's query file, ``symbols``; names and
an import's own name: ``import_lists``): the import goes — its whole line when the name is all
it brings, else the name and its comma. Edits that remove or add lines are left alone: on real
histories they were mostly code being moved, its uses coming back a moment later.

**Why.** An unused import fails the build in Go and every linter elsewhere.

**Example.** ``os.path.join(a, b)`` rewritten to ``Path(a) / b`` (and ``os`` used nowhere
else): ``import os`` goes.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.import_lists import WORD, code_words, edited_imports, line_span, own_name, spans
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import UNUSED_IMPORT
from mercury_lsp.next_edit.symbols import captures
from mercury_lsp.next_edit.text import diff_region
from mercury_lsp.next_edit.tree import ParsedDoc


def run(ctx: RuleContext) -> list[Prediction]:
    """The imports whose last use the newest edit rewrote in place (module docstring)."""
    got = edited_imports(ctx.edited, ctx.grammars)
    if got is None:
        return []
    text = got.home.doc.text
    p, eb, ea = diff_region(got.before, text)
    if got.before.count("\n", p, eb) != text.count("\n", p, ea):
        return []  # lines removed or added: code being moved, its uses may come back
    return _unused(got.home, got.old, got.caps, captures(ctx.grammars, got.old))


def _unused(home: ParsedDoc, old: ParsedDoc, caps: dict, old_caps: dict) -> list[Prediction]:
    text = home.doc.text
    imports = spans(home, caps["import"])
    gone = code_words(old, old_caps["import"]) - code_words(home, caps["import"])
    out = []
    for s, e in imports:
        statement = text[s:e]
        name = own_name(statement)
        if name is None or name not in gone:
            continue
        lines = line_span(text, s, e)
        if lines is not None:
            out.append(Prediction(home.doc.uri, lines[0], lines[1], "", UNUSED_IMPORT.value,
                                  f"'{name}' is no longer used: its import goes", "import", "syntax",
                                  text[lines[0]:lines[1]]))
    for s, e in imports:  # a name of a list: it and its comma go
        statement = text[s:e]
        for name in sorted(gone & set(WORD.findall(statement))):
            if name == own_name(statement):
                continue
            m = re.search(rf"(?<![\w$.:]){re.escape(name)}\s*,\s*|\s*,\s*(?<![\w$.:]){re.escape(name)}(?![\w$.:])",
                          statement)
            if m is not None:
                out.append(Prediction(home.doc.uri, s + m.start(), s + m.end(), "", UNUSED_IMPORT.value,
                                      f"'{name}' is no longer used: it leaves the import", "import", "syntax",
                                      m.group()))
    return out


RULE = Rule("NE401", "unused-import", "import", UNUSED_IMPORT.value, run, __doc__)
