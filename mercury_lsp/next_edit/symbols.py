"""Per-language tree-sitter queries (``queries/<grammar>.scm``, one for every grammar the project
has): the names a document defines, its parameters, calls, references and import statements.

Each query file captures ``@definition``, ``@parameter``, ``@call``, ``@reference`` and
``@import``; ``captures`` runs the document's query once and groups the nodes by capture. The
compiled queries are cached per grammar (compiling is the costly part); a grammar without a
query file gets empty groups.
"""

from __future__ import annotations

import threading
from pathlib import Path

from mercury_lsp.next_edit.tree import ParsedDoc
from mercury_lsp.syntax import Grammars

QUERY_DIR = Path(__file__).parent / "queries"
CAPTURES = ("definition", "parameter", "call", "reference", "import")

_lock = threading.Lock()
_compiled: dict[str, object | None] = {}


def query_source(grammar: str) -> str | None:
    path = QUERY_DIR / f"{grammar}.scm"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _query(grammars: Grammars, grammar: str):
    with _lock:
        if grammar not in _compiled:
            from tree_sitter import Query

            source, language = query_source(grammar), grammars.language(grammar)
            _compiled[grammar] = Query(language, source) if source and language is not None else None
        return _compiled[grammar]


def captures(grammars: Grammars, doc: ParsedDoc) -> dict[str, list]:
    """Nodes per capture name (``CAPTURES``), in document order."""
    out: dict[str, list] = {name: [] for name in CAPTURES}
    query = _query(grammars, doc.doc.grammar) if doc.doc.grammar else None
    if query is None:
        return out
    from tree_sitter import QueryCursor

    for name, nodes in QueryCursor(query).captures(doc.tree.root_node).items():
        if name in out:
            out[name] = sorted(nodes, key=lambda n: n.start_byte)
    return out
