"""Next-edit suggestions: after the user's edit, the other places that must follow.

Pipeline (runs on the engine worker; no LSP types here):

1. **What changed** — each recently edited document comes with the texts before its last few
   edit records (newest first). The smallest diff between one of them and the current text that
   turns one identifier into another is a *rename* (``foo`` -> ``bar``); a function whose
   parameter count differs between the oldest of them and now is a *signature change*.
2. **Where** (tree-sitter decides) — for a rename, the remaining occurrences of the old name tied
   to the edited one: scope-aware for parameters and locals (nested scopes that rebind the name
   are skipped; attribute names and keyword-argument names are not variables), module-wide plus
   importing documents for module-level functions and classes, every ``x.name`` across the open
   documents for attributes and methods. For a signature change, the calls whose argument count
   matched the old signature and no longer matches the new one. When syntax ties nothing, the
   model-only path scores every token around the edit before and after it (batched masked
   passes) and takes the identifiers whose likelihood dropped.
3. **What** (the model decides) — the candidate spans are masked together on one canvas per
   window (the user's edit in view) and refilled jointly. For a rename, when the model's refill
   is not the identifier the user typed, the user's identifier is *scored* at that location (its
   tokens masked) and that score ranks it: the model never invents a third name. For a call, the
   refill is kept when it parses with the right argument count and the model is confident;
   otherwise the argument the user added at the call site they edited is inserted and scored.
4. **Check** — edits that add parse errors are dropped; the rest are ranked by confidence.

Modules: ``detect`` (1), ``locate`` (2), ``refill`` (3), ``pipeline`` (4, ``predict`` running
1-4 and ``to_result``); shared by them: ``query`` (inputs, outputs and the engine surface),
``text`` (diffs, identifiers) and ``tree`` (tree-sitter helpers; lines, bytes and positions come
from ``mercury_lsp.text``). Around the pipeline: ``service`` (``NextEditService``, one per
connection: query, cache, checks before applying), ``handlers`` (the LSP requests) and
``command`` (the ``mercury-lsp next-edit`` command's work). The tuning, ``NextEditOptions``, is
the ``nextEdit`` part of the typed settings (``mercury_lsp.config``).
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
