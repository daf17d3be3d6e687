"""A renamed definition followed through its language's own export machinery (``reach``).

A module-level definition is known to other modules by the name its module exports it under;
renaming it at its definition must also rename every place that spells that name — or the
package no longer imports (``from m import *`` naming a function that is gone). For each
grammar family, one module here reads the documents' import and export statements, works out
which documents reach the renamed definition (the module that defines it, and every module that
re-exports it, to a fixed point) and returns the places to rename there:

* ``python`` — ``__all__`` lists and tuples (``=``, ``+=``, ``.append``/``.extend``), ``from m
  import old`` / ``from .m import old as x`` (then only the imported name), ``from m import *``,
  package ``__init__`` re-exports, ``import pkg.m`` / ``from pkg import m`` and ``m.old``;
* ``rust`` — ``use`` trees (``pub use crate::m::{old, Other as O}``, globs, ``self``/``super``/
  ``crate``/the crate's own name), paths ``m::old(...)`` / ``crate::m::Old``;
* ``golang`` — the other files of the package, and in other packages of the module the
  package-qualified uses ``pkg.Old`` (an exported name is capitalised) under the import's name;
* ``ecmascript`` (JavaScript, TypeScript, TSX) — ``export { old }`` / ``export { old as x }``,
  ``export ... from``, ``export * from`` (an ``index.ts`` re-exporting), ``import { old }``,
  ``import * as ns`` and ``ns.old``, ``module.exports = { old }``, ``exports.old = ...``,
  ``require(...)`` destructured or dotted.

Where a module can be named only by a string the syntax cannot tie to the definition
(``getattr(module, "old")``, ``reflect`` lookups, ``ns["old"]``, a dotted path such as
``"pkg.m.old"`` in ``mock.patch``), the rename is not made there: a ``Note`` says where, and it
travels with the answer (``NextEditResult.notes``, the refactor's output).

Module paths come from the documents' ``file:`` URIs alone (the pipeline reads no files): a
relative import or specifier is resolved exactly; an absolute one is matched against the
documents' paths, nearest source root first. Where a statement names a package the request has
no document for, above the defining module (``from pkg import old`` with ``pkg/__init__.py``
not open), the package is taken to re-export it, since star imports in an ``__init__`` do not
mention the name.
"""

from __future__ import annotations

from mercury_lsp.next_edit.exports import ecmascript, golang, python, rust
from mercury_lsp.next_edit.exports.base import Reach, Site
from mercury_lsp.next_edit.tree import ParsedDoc
from mercury_lsp.syntax import Grammars

__all__ = ["Reach", "Site", "family", "reach"]

# The module of each grammar's export machinery.
FAMILIES = {"python": python, "rust": rust, "go": golang, "javascript": ecmascript, "typescript": ecmascript,
            "tsx": ecmascript}


def family(grammar: str | None) -> frozenset[str]:
    """The grammars whose documents import each other with ``grammar``'s (JavaScript, TypeScript
    and TSX are one family; another grammar is its own)."""
    module = FAMILIES.get(grammar or "")
    return frozenset(g for g, m in FAMILIES.items() if m is module) if module is not None else frozenset({grammar or ""})


def reach(parsed: list[ParsedDoc], home: ParsedDoc, node, old: str, new: str, grammars: Grammars) -> Reach:
    """The places beyond the defining document's own occurrences that renaming the definition
    ``old`` (now ``new``, at ``node`` of ``home``) reaches through the export machinery; empty
    when ``node`` does not name a module-level definition or the grammar has no module here."""
    family = FAMILIES.get(home.doc.grammar or "")
    if family is None or not family.defines(node):
        return Reach()
    docs = [p for p in parsed if family.handles(p.doc.grammar)]
    return family.reach(docs, home, node, old, new, grammars)
