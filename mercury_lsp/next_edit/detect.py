"""Step 1 of next-edit — **what changed**, read from the edit history.

Each recently edited document comes with the texts before its last few edit records (newest
first). The smallest diff between one of them and the current text that turns one identifier
into another is a *rename* (``foo`` -> ``bar``, ``identifier_change``); a function whose
parameter count differs between the oldest of them and now is a *signature change* (the
signatures of both texts, ``signatures``, compared by ``locate._signature_candidates``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mercury_lsp.next_edit.text import diff_region, is_ident_char, is_identifier
from mercury_lsp.next_edit.tree import enclosing, in_class_body, param_nodes, walk
from mercury_lsp.text import TextIndex

# Python statements that may hold a function definition in their blocks.
COMPOUND_STATEMENTS = ("if_statement", "for_statement", "while_statement", "try_statement", "with_statement",
                       "match_statement")


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


def _no_definitions(node) -> bool:
    """Statements that hold no function definition (their expressions are not walked)."""
    return node.type.endswith("_statement") and node.type not in COMPOUND_STATEMENTS


def signatures(tree, b: TextIndex) -> dict[tuple[str, str], Signature]:
    out: dict[tuple[str, str], Signature] = {}
    for n in walk(tree.root_node, prune=_no_definitions):
        if n.type != "function_definition":
            continue
        name_node, params = n.child_by_field_name("name"), n.child_by_field_name("parameters")
        if name_node is None or params is None:
            continue
        plist = param_nodes(params)
        cls = ""
        if in_class_body(n):
            klass = enclosing(n, ("class_definition",))
            cname = klass.child_by_field_name("name") if klass is not None else None
            cls = b.node_text(cname) if cname is not None else "?"
            decorators = n.parent.named_children if n.parent is not None and n.parent.type == "decorated_definition" else []
            if not any("staticmethod" in b.node_text(d) for d in decorators) and plist:
                plist = plist[1:]  # self / cls
        key = (cls, b.node_text(name_node))
        if key in out:  # redefined: ambiguous
            out[key] = Signature(key[1], cls, (), True)
            continue
        out[key] = Signature(key[1], cls, tuple((b.node_text(p), d) for p, d, _ in plist),
                        any(s for _, _, s in plist))
    return out


def inserted_index(old: Signature, new: Signature) -> int:
    a, c = [n for n, _ in old.params], [n for n, _ in new.params]
    i = 0
    while i < min(len(a), len(c)) and a[i] == c[i]:
        i += 1
    return i
