"""NE106 removed-import-name: a name the user deleted leaves the import lists of the other open
documents of its language.

**What.** For each name the newest edits deleted and no open document defines any more
(``deleted.gone``), the other documents of its language that import it lose it: a list's item
with its comma; a statement importing only it, whole.

**Why.** Importing a name that no longer exists fails at the import, before any use.

**Example.** Deleting ``export interface KyOptions`` from ``types.ts`` offers ``import {Ky,
KyOptions} from './types'`` -> ``import {Ky} from './types'`` in the other open files.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import REMOVED_IMPORT_NAME
from mercury_lsp.next_edit.rules.follow.deleted import gone
from mercury_lsp.next_edit.symbols import captures
from mercury_lsp.next_edit.tree import ParsedDoc


def run(ctx: RuleContext) -> list[Prediction]:
    """The names the newest edits deleted, out of the other documents' import lists."""
    out: list[Prediction] = []
    for _, home, name, _ in ctx.shared(gone):
        for p in ctx.parsed:
            if p is not home and p.doc.grammar == home.doc.grammar:
                out += _from_imports(name, p, captures(ctx.grammars, p))
    return out


def _from_imports(name: str, doc: ParsedDoc, caps: dict) -> list[Prediction]:
    """``name`` taken out of the import lists of ``doc`` (a list's item with its comma; a statement
    importing only it, whole)."""
    text, out = doc.doc.text, []
    for n in caps["import"]:
        s, e = doc.b.char(n.start_byte), doc.b.char(n.end_byte)
        statement = text[s:e]
        m = re.search(rf"(?<![\w$.:]){re.escape(name)}\s*,\s*|\s*,\s*(?<![\w$.:]){re.escape(name)}(?![\w$.:])",
                      statement)
        if m is not None:
            out.append(Prediction(doc.doc.uri, s + m.start(), s + m.end(), "", REMOVED_IMPORT_NAME.value,
                                  f"'{name}' was deleted: it leaves the import", "import", "syntax", m.group()))
    return out


RULE = Rule("NE106", "removed-import-name", "import", REMOVED_IMPORT_NAME.value, run, __doc__)
