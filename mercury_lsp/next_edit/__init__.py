"""Next-edit suggestions: after the user's edit, the other places that must follow
(``docs/next-edit.md``).

The pipeline (``pipeline.predict``; on the engine worker, no LSP types here):

1. **What changed, and where** (``steps``) — each recently edited document comes with the texts
   before its last few edit records (newest first). ``steps.detect`` reads a *rename* (the
   smallest diff turns one identifier into another, or the identifier maps of the lines changed
   over the whole recent history) and a *signature change* (a function's parameters differ
   between the oldest text and now, in every grammar with a query file); ``steps.candidates``
   and ``steps.locate`` tie the occurrences tree-sitter scopes to the renamed binding,
   ``steps.calls`` the calls that no longer fit the signature, their argument lists rebuilt;
   ``steps.refill`` has the model write what the syntax cannot tell (the holes), within
   ``modelBudgetMs``.
2. **Rules** (``rules``) — one file per rule, each a ``Rule`` with a stable code (``NE101``...),
   run in the registry's priority order on one ``RuleContext`` built per query (the parsed
   documents, the newest edits of all documents as examples, the tied locations, the model
   session and its time box): the tied renames and calls (NE1xx, with the edits following a
   deleted or named thing), the user's change repeated (NE2xx) or its lines (NE3xx), the
   imports (NE4xx), the line at the cursor (NE5xx), the model alone (NE9xx, off by default).
3. **One answer** (``resolve``) — overlaps resolved (the earlier rule wins where spans meet),
   edits that add parse errors dropped, the rest ranked by confidence (``rules.confidence``:
   every confidence and penalty, with its reason); ``pipeline.to_result`` gives the shared
   ``NextEditResult``, each edit naming its rule.

Helpers shared by the steps and rules: ``query`` (inputs, outputs and the engine surface),
``examples`` (the newest edits across documents), ``text`` (tokens, lines, diffs), ``tree``
(tree-sitter helpers), ``scopes`` (the enclosing function, how a name is bound), ``prose``
(comments and strings), ``symbols`` (a query file per grammar in ``queries/``),
``import_lists`` (import statements as lists of names), ``statements`` (whole statements and
lines deleted), ``exports`` (a renamed definition followed through its language's export
machinery, and the notes where only a string names it). Around the pipeline: ``service`` (``NextEditService``, one per connection:
query, cache, checks before applying), ``handlers`` (the LSP requests) and ``command`` (the
``mercury-lsp next-edit`` command's work). The tuning, ``NextEditOptions``, is the ``nextEdit``
part of the typed settings (``mercury_lsp.config``).
"""

from __future__ import annotations

from mercury_lsp.config import NextEditOptions
from mercury_lsp.next_edit.pipeline import predict, to_result
from mercury_lsp.next_edit.query import DocState, EngineEdits, NextEditQuery
from mercury_lsp.next_edit.steps.detect import identifier_change
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
