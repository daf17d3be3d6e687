"""Tree-sitter helpers shared by the next-edit steps: parsed documents with byte <-> code-point
offsets, tree walking, and the Python node shapes both the change detection (signatures) and
the location search (scopes) read."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from mercury_lsp.next_edit.query import DocState
from mercury_lsp.next_edit.text import LineIndex
from mercury_lsp.syntax import Grammars

NON_ASCII = re.compile(r"[^\x00-\x7f]")
PY_PARAM_WRAPPERS = ("default_parameter", "typed_parameter", "typed_default_parameter",
                     "list_splat_pattern", "dictionary_splat_pattern")


class _Bytes:
    """Byte <-> code-point offsets of one text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8")
        self.ascii = len(self.data) == len(text)
        if not self.ascii:  # the non-ASCII characters: where they are and their extra bytes
            self._wide = [m.start() for m in NON_ASCII.finditer(text)]
            self._extra = [len(text[i].encode("utf-8")) - 1 for i in self._wide]
            self._extra_before = [0, *accumulate(self._extra)]
            self._wide_byte = [i + self._extra_before[j] for j, i in enumerate(self._wide)]

    def char(self, b: int) -> int:
        if self.ascii:
            return b
        j = bisect_right(self._wide_byte, b)
        if j and b <= self._wide_byte[j - 1] + self._extra[j - 1]:
            return self._wide[j - 1]  # inside (or at) a multi-byte character
        return b - self._extra_before[j]

    def byte(self, c: int) -> int:
        if self.ascii:
            return c
        return c + self._extra_before[bisect_left(self._wide, c)]

    def node_text(self, node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


@dataclass
class _Parsed:
    doc: DocState
    tree: Any
    b: _Bytes
    lines: LineIndex


def _parse_all(docs: Sequence[DocState], grammars: Grammars) -> list[_Parsed]:
    out = []
    for d in docs:
        if d.grammar is None:
            continue
        parser = grammars.parser(d.grammar)
        if parser is None:
            continue
        b = _Bytes(d.text)
        out.append(_Parsed(d, parser.parse(b.data), b, LineIndex(d.text)))
    return out


def _walk(node, prune=None) -> Iterable:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if prune is not None and n is not node and prune(n):
            continue
        stack.extend(reversed(n.children))


def _field_is(parent, name: str, node) -> bool:
    child = parent.child_by_field_name(name)
    return child is not None and child.start_byte == node.start_byte and child.end_byte == node.end_byte


def _param_nodes(params) -> list[tuple[Any, bool, bool]]:
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


def _in_class_body(funcdef) -> bool:
    p = funcdef.parent
    if p is not None and p.type == "decorated_definition":
        p = p.parent
    return p is not None and p.type == "block" and p.parent is not None and p.parent.type == "class_definition"


def _enclosing(node, types: tuple[str, ...]):
    n = node.parent
    while n is not None and n.type not in types:
        n = n.parent
    return n
