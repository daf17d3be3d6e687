"""NE404 unimported-use: a use of a name whose import the user removed is unwrapped, or goes with
its statement.

**What.** The imports of the newest edited document (``stale``) no longer bring a name they
brought before the history, the document does not define it, and no newly imported name pairs
with it (NE403): a call of it with one argument gives way to the argument
(``strip_current_dir(path)`` -> ``path``), a line left assigning a name to itself (``let input =
strip_current_dir(input);``) is deleted, and any other use (a path through it:
``libc::isatty(...)``) takes its statement with it (``statements.statement_lines``: a short
statement that defines nothing). At most ``stale.MAX_SITES`` uses of one name.

**Why.** Removing an import says the code stops depending on it; the uses left would not resolve.

**Example.** ``use libc;`` removed: ``let tty = unsafe { libc::isatty(1) } != 0;`` goes.
"""

from __future__ import annotations

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import UNIMPORTED_USE
from mercury_lsp.next_edit.rules.imports.stale import stale_uses


def run(ctx: RuleContext) -> list[Prediction]:
    return [p for p in ctx.shared(stale_uses) if p.kind == RULE.kind]


RULE = Rule("NE404", "unimported-use", "import", UNIMPORTED_USE.value, run, __doc__)
