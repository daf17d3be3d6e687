"""NE105 removed-use: statements left using a definition the user deleted go.

**What.** For each name the newest edits deleted and no open document defines any more
(``deleted.gone``), each statement of the document still using it in code goes (whole lines,
with a blank line that would be left doubled): a variable deleted inside a function was its
local: only that function's uses count, and never an attribute of the same name (``v.host`` for
a deleted ``host``). The statement is the use's outermost enclosing node directly inside a block
(a function body, a class or struct body, the file), when it is at most
``statements.MAX_STATEMENT_LINES`` lines and not a definition of a function, type or class
itself (those are the user's to rework). More uses of a name than ``deleted.MAX_SITES`` (a field
or variable) or ``deleted.MAX_CALLABLE_SITES`` (a function or type: more often moved than
deleted): the user is reworking the code, nothing is offered.

**Why.** A statement using a name that is gone no longer compiles; deleting a field or a
variable usually takes the lines that set or read it with it.

**Example.** Deleting the field ``Timeout time.Duration`` from a Go struct offers deleting
``c.Timeout = d`` where it was set.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.prose import non_code
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import REMOVED_USE
from mercury_lsp.next_edit.rules.follow.deleted import gone, local_scope
from mercury_lsp.next_edit.scopes import binds
from mercury_lsp.next_edit.statements import statement_lines


def run(ctx: RuleContext) -> list[Prediction]:
    """The statements still using the names the newest edits deleted (module docstring)."""
    out: list[Prediction] = []
    taken: set[tuple[str, int]] = set()
    for ex, home, name, limit in ctx.shared(gone):
        text = home.doc.text
        scope = local_scope(ex, home, limit)
        word = re.compile(rf"(?<![\w${'.' if scope else ''}]){re.escape(name)}(?![\w$])")
        uses = [m.start() for m in word.finditer(text, *(scope or (0, len(text))))
                if not non_code(home, m.start())]
        if scope and any(binds(home, at, name) for at in uses):
            continue  # still a parameter or assigned in its function: not gone
        if not uses or len(uses) > limit:
            continue
        for at in uses:
            span = statement_lines(home, at)
            if span is None or (home.doc.uri, span[0]) in taken:
                continue
            taken.add((home.doc.uri, span[0]))
            s, e = span
            out.append(Prediction(home.doc.uri, s, e, "", REMOVED_USE.value,
                                  f"'{name}' was deleted: the statement using it goes", RULE.kind, "syntax",
                                  text[s:e]))
    return out


RULE = Rule("NE105", "removed-use", "repeat", REMOVED_USE.value, run, __doc__)
