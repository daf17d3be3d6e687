"""The bare occurrences of a module-level name in a document that binds it (the brace grammars'
``exports``): every identifier of the given node types spelling it, outside the functions that
bind the name themselves (a parameter, a ``let``/``:=``/``const`` local, a loop's variable —
read from the syntax, so that ``fn f(x: Tuple)`` does not bind ``Tuple``), outside another
namespace's nodes (``OTHER_NAMESPACES``: a derive's macro) and outside the nodes ``skip`` says are
not it (a path's last name, a selector's field: another module's)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from mercury_lsp.next_edit.exports.base import spelled
from mercury_lsp.next_edit.scopes import FUNCTION_SCOPES, OTHER_NAMESPACES
from mercury_lsp.next_edit.tree import ParsedDoc, enclosing

# (parent type, field) of an identifier that declares a local (None: any child); Rust, Go,
# JavaScript/TypeScript.
BINDINGS = frozenset({
    ("parameter", "pattern"), ("let_declaration", "pattern"), ("closure_parameters", None),
    ("for_expression", "pattern"), ("match_pattern", None), ("if_let_expression", "pattern"),
    ("parameter_declaration", "name"), ("variadic_parameter_declaration", "name"),
    ("short_var_declaration", "left"), ("var_spec", "name"), ("const_spec", "name"), ("range_clause", "left"),
    ("required_parameter", "pattern"), ("optional_parameter", "pattern"), ("formal_parameters", None),
    ("variable_declarator", "name"), ("assignment_pattern", "left"), ("catch_clause", "parameter"),
    ("for_in_statement", "left"), ("arrow_function", "parameter"),
})
# Patterns a declared identifier may stand in, below its declaration.
PATTERNS = ("tuple_pattern", "slice_pattern", "mut_pattern", "ref_pattern", "reference_pattern",
            "tuple_struct_pattern", "struct_pattern", "field_pattern", "expression_list", "object_pattern",
            "array_pattern", "pair_pattern", "rest_pattern", "or_pattern")


def _declares(n) -> bool:
    child, parent = n, n.parent
    while parent is not None and parent.type in PATTERNS:
        child, parent = parent, parent.parent
    if parent is None:
        return False
    field = next((parent.field_name_for_child(i) for i, c in enumerate(parent.children) if c == child), None)
    return (parent.type, field) in BINDINGS or (parent.type, None) in BINDINGS


def local_scopes(doc: ParsedDoc, nodes: list) -> list[tuple[int, int]]:
    """Byte spans of the functions that declare the name of ``nodes`` (its places) themselves."""
    out = []
    for n in nodes:
        if n.type == "identifier" and _declares(n):
            scope = enclosing(n, FUNCTION_SCOPES)
            if scope is not None:
                out.append((scope.start_byte, scope.end_byte))
    return out


def bare_occurrences(doc: ParsedDoc, name: str, kinds: Iterable[str],
                     skip: Callable[[object], bool] = lambda n: False) -> list:
    kinds = tuple(kinds)
    nodes = [n for n in spelled(doc, name) if n.type in kinds]
    local = local_scopes(doc, nodes)
    return [n for n in nodes if not skip(n) and enclosing(n, OTHER_NAMESPACES) is None
            and not any(lo <= n.start_byte < hi for lo, hi in local)]
