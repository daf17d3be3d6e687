"""NE117 renamed-mention: a renamed definition's mentions in the comments and docstrings of its
documents get the new name.

**What.** When the rename search (``steps.candidates``, NE101) follows a rename of a definition
or a member — a function, class, method, field or module-level name, not a local or a parameter
— the old name spelt as code in the comments and Python docstrings of the documents it
reaches (``prose.mentions``: in backticks or called, `` `name` ``, ``name(``) becomes the new
name. A bare word is left alone, however distinctive: the commits of the tuning sets that
renamed such a name left it in sentences (``Defaults to UnknownFlagsHandlingErrorOnUnknown.``).
Strings other than docstrings are left alone: a string that spells the name is a registry (the
rename's note says so), one that holds it among words is a message. Names a document imports
are no definition of its own and are not followed. Ranked below the code's renames (``RENAMED_MENTION``).

**Why.** The documentation of a renamed function names it — its own usage example
(``@patch_with_metaclass(MyMeta)`` in its docstring), a comment above a caller — and a rename
that leaves the old name there documents a function that no longer exists.

**Example.** ``def patch_with_metaclass(metaclass):`` renamed to ``def add_metaclass(metaclass):``:
its docstring's ``@patch_with_metaclass(MyMeta)`` and ``MyClass = patch_with_metaclass(MyClass)``
become ``add_metaclass``.
"""

from __future__ import annotations

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import RENAMED_MENTION


def run(ctx: RuleContext) -> list[Prediction]:
    return [Prediction(c.uri, c.start, c.end, c.expected, RENAMED_MENTION.value, c.reason, "rename", "syntax",
                       c.old_text)
            for c in ctx.candidates if c.kind == "rename" and c.mention and c.expected is not None]


RULE = Rule("NE117", "renamed-mention", "rename", RENAMED_MENTION.value, run, __doc__)
