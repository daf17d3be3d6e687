"""NE101 renamed-binding: the other occurrences of a renamed binding get the user's new name.

**What.** The rename the history shows (``steps.candidates``: the newest edit's identifier change,
or the renames read line by line over the whole recent history) is followed at the occurrences
tied to the edited binding (``steps.locate``): scope-aware for parameters and locals (a nested
scope that rebinds the name is skipped — in every grammar a closure's or nested function's own
parameter, a Rust match arm's or ``if let``'s pattern, a ``catch (e)``; attribute and
keyword-argument names are not variables), module-wide for module-level definitions and, through the language's export
machinery (``exports``: ``__all__``, re-exports, ``pub use``, ``pkg.Old``, export lists,
``module.exports``), in the documents that import them; every ``x.name`` across the open
documents for attributes and methods (their mentions in comments and docstrings are NE117's); a
Rust method renamed in its ``impl`` or ``trait`` block reaches its calls ``x.name(...)`` (never a
field ``x.name``), its paths ``Self::name`` / ``Type::name`` and, for a trait's method, the
``impl Trait for`` blocks that define it again. A Python attribute switched at one use while
``def old`` still stands is a switch to another method, not a rename (``members.defines_method``). Where only a string names the definition
(``getattr(m, "old")``) the pipeline sends a note with these edits instead of an edit.

**Why.** A rename half done does not run; the new text is the user's own identifier, so the
syntax answers it without the model.

**Example.** ``def area(width, height)`` renamed to ``def area(w, height)``: each ``width`` of
that function's body becomes ``w``, not those of a nested ``def inner(width)``.
"""

from __future__ import annotations

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import TIED_RENAME


def run(ctx: RuleContext) -> list[Prediction]:
    return [Prediction(c.uri, c.start, c.end, c.expected, TIED_RENAME.value, c.reason, c.kind, "syntax", c.old_text)
            for c in ctx.candidates if c.kind == "rename" and c.expected is not None and not c.mention]


RULE = Rule("NE101", "renamed-binding", "rename", TIED_RENAME.value, run, __doc__)
