"""Tree-sitter helpers shared by the next-edit steps: parsed documents (with their
``mercury_lsp.text.TextIndex``), tree walking, and the Python node shapes the location search
(scopes) reads.

Files on disk that join a query (next edit's workspace files, version ``None``) are parsed once
and kept (``DiskTrees``: a least-recently-used cache bounded by estimated bytes), not parsed again
by every request that reads them: the rules read every such file's tree (the export machinery
captures each one), so a request over 70 workspace files held 70 trees at once, about 20 bytes of
tree-sitter nodes per byte of source, and freed them all when it ended. Repeated at every
``mercury/nextEdit``, those bursts left the heap fragmented and the daemon's RSS creeping
(``benchmarks/lsp/soak.py``); a tree read from the cache is a shallow copy (``Tree.copy``: trees
are not thread-safe, their nodes are shared and immutable). Open documents change at every key
and are parsed per request, as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
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


# Heap per byte of source a cached file costs: its tree-sitter nodes (about 20 bytes), its text
# and its TextIndex (measured with tracemalloc over the soak's workspace, standard-library files).
CACHED_BYTES_PER_SOURCE_BYTE = 24
# What the cached trees of files on disk may take: about 2.7 MB of source (a few hundred files),
# more than one request reads (``nextEdit.maxWorkspaceFiles`` files that mention a changed name).
DISK_TREES_MAX_BYTES = 64 << 20


class DiskTrees:
    """Parsed files on disk by (URI, grammar), the least recently used dropped past ``max_bytes``
    (estimated: ``CACHED_BYTES_PER_SOURCE_BYTE``); a file whose text changed is parsed again."""

    def __init__(self, max_bytes: int = DISK_TREES_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self.parses = 0  # parses done (hits cost none)
        self._entries: OrderedDict[tuple[str, str], tuple[str, Any, TextIndex, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def parse(self, d: DocState, parser) -> ParsedDoc:
        key = (d.uri, d.grammar or "")
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and hit[0] == d.text:
                self._entries.move_to_end(key)
                return ParsedDoc(d, hit[1].copy(), hit[2])
        b = TextIndex(d.text)
        tree = parser.parse(b.data)
        cost = len(b.data) * CACHED_BYTES_PER_SOURCE_BYTE
        with self._lock:
            self.parses += 1
            old = self._entries.pop(key, None)
            if old is not None:
                self.bytes -= old[3]
            if cost <= self.max_bytes:
                self._entries[key] = (d.text, tree, b, cost)
                self.bytes += cost
                while self.bytes > self.max_bytes:
                    self.bytes -= self._entries.popitem(last=False)[1][3]
        return ParsedDoc(d, tree.copy(), b)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0


DISK_TREES = DiskTrees()  # the daemon's: files on disk, shared by its connections


def parse_all(docs: Sequence[DocState], grammars: Grammars, disk: DiskTrees | None = DISK_TREES) -> list[ParsedDoc]:
    """The documents of ``docs`` that have a grammar, parsed; files on disk (version None, no history) through
    ``disk`` (None: parsed here, kept by no one)."""
    out = []
    for d in docs:
        if d.grammar is None:
            continue
        parser = grammars.parser(d.grammar)
        if parser is None:
            continue
        if d.version is None and not d.history and disk is not None:
            out.append(disk.parse(d, parser))
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
