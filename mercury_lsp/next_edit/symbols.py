"""Per-language tree-sitter queries (``queries/<grammar>.scm``, one for every grammar the project
has): the names a document defines, its parameters, calls, references and import statements.

Each query file captures ``@definition``, ``@parameter``, ``@call``, ``@reference`` and
``@import``, and for signatures (``detect.signatures``) ``@function`` (a function with its
parameters), ``@receiver`` (a parameter a call does not pass in its parentheses: Rust's
``self``, a Python method's first), ``@static`` (a Python staticmethod: no receiver),
``@optional`` (a parameter with a default) and ``@variadic``; for the export machinery
(``exports``) ``@export.list`` (Python's ``__all__`` lists), ``@export.object`` and
``@export.name`` (CommonJS's ``module.exports = {...}``, ``exports.name = ...``) and
``@note.string`` (a string naming an attribute or method to look up: ``getattr(m, "name")``)
and ``@import.dynamic`` (a module bound by a call naming it: ``m = importlib.import_module("a.b")``).
Captures whose name starts with ``_`` only serve predicates. ``captures`` runs the document's
query once and groups the nodes by capture. The compiled queries are cached per grammar
(compiling is the costly part); a grammar without a query file gets empty groups. A query file
whose first line after its title is ``; inherits: OTHER`` starts with OTHER's patterns (as
Neovim's query files do): TSX is TypeScript's, C++ adds to C's. The captures of the last few texts, and the parses of the texts
before an edit (``parsed_before``), are kept: the steps of one request share them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from mercury_lsp.next_edit.query import DocState
from mercury_lsp.next_edit.tree import ParsedDoc
from mercury_lsp.syntax import Grammars
from mercury_lsp.text import TextIndex

QUERY_DIR = Path(__file__).parent / "queries"
CAPTURES = ("definition", "parameter", "call", "reference", "import")
SIGNATURE_CAPTURES = ("function", "receiver", "static", "optional", "variadic")
EXPORT_CAPTURES = ("export.list", "export.object", "export.name", "note.string", "import.dynamic")

CACHED_TEXTS = 8  # captures and parses kept (a request reads a few documents and their past)

_lock = threading.Lock()
_compiled: dict[str, object | None] = {}
_captured: OrderedDict[tuple[str, str], dict[str, list]] = OrderedDict()
_parsed: OrderedDict[tuple[str, str], ParsedDoc] = OrderedDict()


def _remember(cache: OrderedDict, key, value):
    with _lock:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > CACHED_TEXTS:
            cache.popitem(last=False)
    return value


def parsed_before(grammars: Grammars, doc: DocState, text: str) -> ParsedDoc | None:
    """``text`` (a past text of ``doc``) parsed with ``doc``'s grammar; None without a parser."""
    key = (doc.grammar or "", text)
    hit = _parsed.get(key)
    if hit is not None:
        return hit
    parser = grammars.parser(doc.grammar) if doc.grammar else None
    if parser is None:
        return None
    b = TextIndex(text)
    past = DocState(doc.uri, text, doc.grammar, None)
    return _remember(_parsed, key, ParsedDoc(past, parser.parse(b.data), b))


INHERITS = "; inherits:"


def query_source(grammar: str) -> str | None:
    path = QUERY_DIR / f"{grammar}.scm"
    if not path.is_file():
        return None
    source = path.read_text(encoding="utf-8")
    for line in source.splitlines():
        if line.startswith(INHERITS):
            base = query_source(line[len(INHERITS):].strip())
            if base is None:
                raise FileNotFoundError(f"{path.name}: {line}: no such query file")
            return base + "\n" + source
        if not line.startswith(";"):
            break
    return source


def _query(grammars: Grammars, grammar: str):
    with _lock:
        if grammar not in _compiled:
            from tree_sitter import Query

            source, language = query_source(grammar), grammars.language(grammar)
            _compiled[grammar] = Query(language, source) if source and language is not None else None
        return _compiled[grammar]


def captures(grammars: Grammars, doc: ParsedDoc) -> dict[str, list]:
    """Nodes per capture name (``CAPTURES``, ``SIGNATURE_CAPTURES``, ``EXPORT_CAPTURES``), in
    document order."""
    key = (doc.doc.grammar or "", doc.doc.text)
    hit = _captured.get(key)
    if hit is not None:
        return hit
    out: dict[str, list] = {name: [] for name in CAPTURES + SIGNATURE_CAPTURES + EXPORT_CAPTURES}
    query = _query(grammars, doc.doc.grammar) if doc.doc.grammar else None
    if query is None:
        return out
    from tree_sitter import QueryCursor

    for name, nodes in QueryCursor(query).captures(doc.tree.root_node).items():
        if name in out:
            out[name] = sorted(nodes, key=lambda n: n.start_byte)
    return _remember(_captured, key, out)
