"""The bare occurrences of a module-level name in a document that binds it (the brace grammars'
``exports``): every identifier of the given node types spelling it, outside the functions that
bind the name themselves (``scopes.declaring_scopes``), outside another namespace's nodes
(``OTHER_NAMESPACES``: a derive's macro) and outside the nodes ``skip`` says are not it (a path's
last name, a selector's field: another module's)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from mercury_lsp.next_edit.scopes import OTHER_NAMESPACES, declaring_scopes
from mercury_lsp.next_edit.tree import ParsedDoc, enclosing, walk


def bare_occurrences(doc: ParsedDoc, name: str, kinds: Iterable[str],
                     skip: Callable[[object], bool] = lambda n: False) -> list:
    kinds = tuple(kinds)
    local = declaring_scopes(doc, name)
    out = []
    for n in walk(doc.tree.root_node):
        if n.type not in kinds or doc.b.node_text(n) != name or skip(n):
            continue
        if enclosing(n, OTHER_NAMESPACES) is not None:
            continue
        at = doc.b.char(n.start_byte)
        if any(lo <= at < hi for lo, hi in local):
            continue
        out.append(n)
    return out
