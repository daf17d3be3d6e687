"""Next-edit suggestions: after the user's edit, the other places that must follow.

Pipeline (runs on the engine worker; no LSP types here):

1. **What changed** — each recently edited document comes with the texts before its last few
   edit records (newest first). The smallest diff between one of them and the current text that
   turns one identifier into another is a *rename* (``foo`` -> ``bar``), and so are the
   identifier maps of the lines changed over the whole recent history (several hunks, several
   names at once, a rename back to a used name at its binding); a function whose
   parameters differ between the oldest of them and now is a *signature change* (in every
   grammar: the query files capture the functions and their parameter lists).
2. **Where** (tree-sitter decides) — for a rename, the remaining occurrences of the old name tied
   to the edited one: scope-aware for parameters and locals (nested scopes that rebind the name
   are skipped; attribute names and keyword-argument names are not variables), module-wide plus
   importing documents for module-level functions and classes, every ``x.name`` across the open
   documents for attributes and methods. For a signature change, the calls (``x.f(...)``,
   ``pkg.F(...)``, ``T::f(...)``, a bare ``f(...)`` for a free function) whose arguments fitted
   the old signature and no longer fit the new one, or fit both when the parameters were
   reordered or removed. When syntax ties nothing, the
   model-only path scores every token around the edit before and after it (batched masked
   passes) and takes the identifiers whose likelihood dropped.
3. **What** — where the syntax determines the new text (the user's identifier at a tied
   occurrence, the user's argument copied into a call) it is answered at once, without the model;
   only the holes (a call whose new argument no edit shows yet, the model-only path) are masked
   together on one canvas per window and refilled by the model, within ``modelBudgetMs``.
4. **Check** — edits that add parse errors are dropped; the rest are ranked by confidence.

Beside 1-2, rules that read the last edit(s) directly — the newest three edits of all the
documents (``examples``): ``repeat`` (repeated-edit synthesis, any language: edits read as token
rules by ``rules``, anchors generalised where two examples differ, offered at every matching
site), ``line_repeat`` (whole lines deleted or inserted again where the same lines stand),
``moved`` (a block written again elsewhere: its one old copy goes), ``supersede`` (a line written
again next to its old version: the old one goes), ``imports`` (an import whose last use the edit
rewrote goes; a name another document imports is imported), ``unimported`` (the uses of a name
whose import went: renamed to the paired new import, unwrapped, or their statement deleted),
``removed`` (statements still using a deleted field, variable or function go, and the name leaves
other documents' import lists), ``extract`` (a value the user just named: its other occurrences
become the name), ``whitespace`` (a dedent or stripped trailing whitespace continued below),
``dropped`` (a removed parameter or local leaves the calls passing it) and ``complete`` (the line
at the cursor: a name cut short, a half-typed line finished like the document's lines that start
the same way, or by the model).

Modules: ``detect`` (1), ``candidates`` (1-2 for renames and signatures; ``find_candidates``),
``locate`` (2: scopes, the model-only path), ``calls`` (1-2 for signature changes: the calls and
their arguments rebuilt), ``refill`` (3), ``pipeline`` (4, ``predict``
running it all, the model's time box, and ``to_result``) and the rules above; shared by them:
``query`` (inputs, outputs and the engine surface), ``text`` (diffs, identifiers), ``tree``
(tree-sitter helpers; lines, bytes and positions come from ``mercury_lsp.text``), ``scopes`` (the
enclosing function, how a name is bound), ``prose`` (comments and strings) and ``symbols``
(a query file per grammar in ``queries/``: definitions, parameters, calls, references, imports,
and the functions, receivers, defaults and variadic parameters of signatures).
Around the pipeline: ``service`` (``NextEditService``, one per connection: query, cache, checks
before applying), ``handlers`` (the LSP requests) and ``command`` (the ``mercury-lsp next-edit``
command's work). The tuning, ``NextEditOptions``, is the ``nextEdit`` part of the typed settings
(``mercury_lsp.config``).
"""

from __future__ import annotations

from mercury_lsp.config import NextEditOptions
from mercury_lsp.next_edit.detect import identifier_change
from mercury_lsp.next_edit.pipeline import predict, to_result
from mercury_lsp.next_edit.query import DocState, EngineEdits, NextEditQuery
from mercury_lsp.next_edit.text import apply_edits, diff_region

__all__ = [
    "DocState",
    "EngineEdits",
    "NextEditOptions",
    "NextEditQuery",
    "apply_edits",
    "diff_region",
    "identifier_change",
    "predict",
    "to_result",
]
