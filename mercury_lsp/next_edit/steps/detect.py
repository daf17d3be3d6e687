"""Step 1 of next-edit — **what changed**, read from the edit history.

Each recently edited document comes with the texts before its last few edit records (newest
first). The smallest diff between one of them and the current text that turns one identifier
into another is a *rename* (``foo`` -> ``bar``, ``identifier_change``); a function whose
parameters differ between the oldest of them and now is a *signature change* (the signatures of
both texts, ``signatures``, compared by ``locate.signature_candidates``). Signatures are read in
every grammar with a query file (``symbols``): its ``@function`` captures and their parameter
lists, Go's grouped ``a, b int`` as two parameters, receivers (Rust's ``self``, a Python
method's first) left out since a call does not pass them in its parentheses.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

from mercury_lsp.next_edit.scopes import FUNCTION_SCOPES
from mercury_lsp.next_edit.symbols import captures
from mercury_lsp.next_edit.text import diff_region, is_ident_char, is_identifier
from mercury_lsp.next_edit.tree import ParsedDoc, field_is, walk
from mercury_lsp.syntax import Grammars
from mercury_lsp.text import TextIndex

# Fields through which a definition holds its parameter list: C's declarators (``int f(int a)``,
# ``int *f(int a)``), a variable or a member assigned a function (``const f = (a) => ...``,
# ``Command.prototype.help = function (cb) {...}``).
PARAMETER_HOLDERS = ("declarator", "value", "right")
# Fields leading from a definition to its name: ``name``, C's declarator chain, an assigned member.
NAME_FIELDS = ("name", "declarator", "left", "property")
MAX_HOLDER_DEPTH = 3  # declarators nest (pointer, function): a few levels reach the name
NAME_NODES = ("identifier", "field_identifier", "property_identifier")  # a function's name
# Entries of a parameter list that are no parameter: Python's ``*`` and ``/`` markers, comments.
NOT_PASSED = ("keyword_separator", "positional_separator", "comment")
# Nodes whose functions are methods (owned by the type: ``(owner, name)`` keys a signature).
CLASS_NODES = ("class_definition", "class_declaration", "class", "impl_item", "trait_item",
               "interface_declaration", "class_specifier", "struct_specifier")


def identifier_change(before: str, after: str) -> tuple[int, str, str] | None:
    """(start in ``after``, old identifier, new identifier) when the diff renames one identifier."""
    p, eb, ea = diff_region(before, after)
    if p == eb == ea:
        return None
    lo = p
    while lo > 0 and is_ident_char(after[lo - 1]):
        lo -= 1
    hb, ha = eb, ea
    while ha < len(after) and is_ident_char(after[ha]):
        ha += 1
        hb += 1
    old, new = before[lo:hb], after[lo:ha]
    if old != new and is_identifier(old) and is_identifier(new):
        return lo, old, new
    return None


@dataclass(frozen=True)
class Signature:
    name: str
    cls: str
    params: tuple[tuple[str, bool], ...]  # (name, has default)
    splat: bool

    @property
    def required(self) -> int:
        return sum(1 for _, d in self.params if not d)

    def accepts(self, positional: int, keywords: Sequence[str]) -> bool:
        names = [n for n, _ in self.params]
        if positional > len(names) or any(k not in names[positional:] for k in keywords):
            return False
        bound = set(names[:positional]) | set(keywords)
        return all(n in bound for n, d in self.params if not d)


def _span(node) -> tuple[int, int]:
    return node.start_byte, node.end_byte


def _parameter_list(func):
    """The node listing ``func``'s parameters: its ``parameters`` field, or one reached through
    ``PARAMETER_HOLDERS`` (C's declarators, a variable's arrow function)."""
    node = func
    for _ in range(MAX_HOLDER_DEPTH + 1):
        params = node.child_by_field_name("parameters")
        if params is not None:
            return params
        node = next((c for f in PARAMETER_HOLDERS if (c := node.child_by_field_name(f)) is not None), None)
        if node is None:
            return None
    return None


def _function_name(func, b: TextIndex) -> str | None:
    node = func
    for _ in range(MAX_HOLDER_DEPTH + 1):
        node = next((c for f in NAME_FIELDS if (c := node.child_by_field_name(f)) is not None), None)
        if node is None:
            return None
        if node.type in NAME_NODES:
            return b.node_text(node)
    return None


def _owner(func, b: TextIndex) -> str:
    """The type a method belongs to ("" for a free function): a Go receiver's type, else the
    class, impl or trait the function sits in directly (no function in between)."""
    receiver = func.child_by_field_name("receiver")
    if receiver is not None:
        return next((b.node_text(n) for n in walk(receiver) if n.type == "type_identifier"), "?")
    target = func.child_by_field_name("left")  # ``Command.prototype.help = function (cb) {...}``
    if target is not None and target.child_by_field_name("object") is not None:
        return b.node_text(target.child_by_field_name("object"))
    node = func.parent
    while node is not None and node.type not in FUNCTION_SCOPES and node.type not in CLASS_NODES:
        node = node.parent
    if node is None or node.type in FUNCTION_SCOPES:
        return ""
    name = node.child_by_field_name("name") or node.child_by_field_name("type")
    return b.node_text(name) if name is not None else "?"


def _own_parameter(node, item) -> bool:
    """``node`` (inside parameter ``item``) names ``item`` itself, not a parameter of a function
    type or a lambda written inside it (``cb: (x: number) => void``, ``next func(h Handler)``)."""
    while node is not None and node.start_byte >= item.start_byte and _span(node) != _span(item):
        parent = node.parent
        if parent is not None and field_is(parent, "parameters", node):
            return False
        node = parent
    return True


def signatures(doc: ParsedDoc, grammars: Grammars) -> dict[tuple[str, str], Signature]:
    """(owner type, name) -> signature of every function the query file of ``doc``'s grammar
    captures (``@function``); a name defined twice with one owner is ambiguous (``splat``)."""
    return {key: sig for key, (sig, _) in functions(doc, grammars).items()}


def functions(doc: ParsedDoc, grammars: Grammars) -> dict[tuple[str, str], tuple[Signature, object]]:
    """``signatures``, each with its definition's node (the last one of an ambiguous name)."""
    got, b = captures(grammars, doc), doc.b
    receivers = {_span(n) for n in got["receiver"]}
    static = {_span(n) for n in got["static"]}
    optional = {_span(n) for n in got["optional"]}
    # a variadic item (``...r``), or a variadic mark directly in an item or in the list (C's ``...``)
    variadic = {_span(n) for n in got["variadic"]} | {_span(n.parent) for n in got["variadic"] if n.parent is not None}
    names = got["parameter"]  # in document order
    starts = [n.start_byte for n in names]
    out: dict[tuple[str, str], tuple[Signature, object]] = {}
    for func in got["function"]:
        name, plist = _function_name(func, b), _parameter_list(func)
        if name is None or plist is None:
            continue
        items = [c for c in plist.named_children if c.type not in NOT_PASSED]
        if items and _span(items[0]) in receivers and _span(func) not in static:
            items = items[1:]
        params: list[tuple[str, bool]] = []
        for item in items:
            lo, hi = _span(item)
            own = [n for n in names[bisect_left(starts, lo):bisect_left(starts, hi)]
                   if n.end_byte <= hi and _own_parameter(n, item)]
            default = _span(item) in optional
            params += [(b.node_text(n), default) for n in own] or [(b.node_text(item), default)]
        splat = bool(variadic & ({_span(plist)} | {_span(i) for i in items}))
        key = (_owner(func, b), name)
        sig = Signature(name, key[0], (), True) if key in out else Signature(name, key[0], tuple(params), splat)
        out[key] = (sig, func)
    return out


def inserted_index(old: Signature, new: Signature) -> int:
    a, c = [n for n, _ in old.params], [n for n, _ in new.params]
    i = 0
    while i < min(len(a), len(c)) and a[i] == c[i]:
        i += 1
    return i
