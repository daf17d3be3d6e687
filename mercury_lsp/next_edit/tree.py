"""Tree-sitter helpers shared by the next-edit steps: parsed documents (with their
``mercury_lsp.text.TextIndex``), tree walking, and the Python node shapes the location search
(scopes) reads."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mercury_lsp.next_edit.query import DocState
from mercury_lsp.syntax import Grammars
from mercury_lsp.text import TextIndex

PY_PARAM_WRAPPERS = ("default_parameter", "typed_parameter", "typed_default_parameter",
                     "list_splat_pattern", "dictionary_splat_pattern")


@dataclass
class ParsedDoc:
    doc: DocState
    tree: Any
    b: TextIndex  # lines, bytes and code points of ``doc.text``


def parse_all(docs: Sequence[DocState], grammars: Grammars) -> list[ParsedDoc]:
    out = []
    for d in docs:
        if d.grammar is None:
            continue
        parser = grammars.parser(d.grammar)
        if parser is None:
            continue
        b = TextIndex(d.text)
        out.append(ParsedDoc(d, parser.parse(b.data), b))
    return out


def newest_edited(parsed: Sequence[ParsedDoc]) -> list[ParsedDoc]:
    """The documents with an edit history, the most recently edited first."""
    return sorted((p for p in parsed if p.doc.history), key=lambda p: -p.doc.edited_at)


def walk(node, prune=None) -> Iterable:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if prune is not None and n is not node and prune(n):
            continue
        stack.extend(reversed(n.children))


def field_is(parent, name: str, node) -> bool:
    child = parent.child_by_field_name(name)
    return child is not None and child.start_byte == node.start_byte and child.end_byte == node.end_byte


def param_nodes(params) -> list[tuple[Any, bool, bool]]:
    """(identifier node, has default, is splat) per parameter of a parameters node."""
    out = []
    for ch in params.named_children:
        if ch.type == "identifier":
            out.append((ch, False, False))
        elif ch.type in PY_PARAM_WRAPPERS:
            ident = ch.child_by_field_name("name")
            if ident is None:
                ident = next((c for c in ch.named_children if c.type == "identifier"), None)
            if ident is not None:
                out.append((ident, "default" in ch.type, "splat" in ch.type))
        elif ch.type in ("keyword_separator", "positional_separator"):
            continue
    return out


def in_class_body(funcdef) -> bool:
    p = funcdef.parent
    if p is not None and p.type == "decorated_definition":
        p = p.parent
    return p is not None and p.type == "block" and p.parent is not None and p.parent.type == "class_definition"


def enclosing(node, types: tuple[str, ...]):
    n = node.parent
    while n is not None and n.type not in types:
        n = n.parent
    return n
