"""Tree-sitter grammars (offline wheels), incremental re-parse, and the syntax guard.

Parsing happens on the engine's worker thread (see ``completion``), never on the event loop:
a ``Parser`` per grammar per thread, trees handed back to the document by the loop.
"""

from __future__ import annotations

import importlib
import logging
import threading
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import urlparse

from mercury_lsp.documents import DocumentSnapshot
from mercury_lsp.text import TextIndex, end_point

log = logging.getLogger(__name__)

# grammar name -> (module, function returning the language pointer)
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
}

# LSP language ids -> grammar
LANGUAGE_IDS: dict[str, str] = {
    "python": "python", "javascript": "javascript", "javascriptreact": "javascript",
    "typescript": "typescript", "typescriptreact": "tsx", "go": "go", "rust": "rust",
    "java": "java", "c": "c", "cpp": "cpp", "cuda": "cpp", "objective-c": "c",
}

# Grammars whose files a project mixes and reads together (a TypeScript library's JavaScript
# tests, C headers included from C++): the documents a request on one of them may read.
FAMILIES: dict[str, str] = {"javascript": "ecmascript", "typescript": "ecmascript", "tsx": "ecmascript",
                            "c": "c", "cpp": "c"}


def family(grammar: str | None) -> str | None:
    """The family of ``grammar`` (``FAMILIES``; a grammar of no family is its own)."""
    return FAMILIES.get(grammar, grammar) if grammar is not None else None


# file extensions, for clients that send a generic language id
EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "javascript", ".ts": "typescript", ".mts": "typescript",
    ".cts": "typescript", ".tsx": "tsx", ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
    ".hh": "cpp", ".hxx": "cpp", ".cu": "cpp",
}

# Named node types (across the grammars above) that hold text the model completes as prose:
# comments and strings (``template_string`` included; not C++'s ``template_declaration``, nor
# TypeScript's anonymous type keyword ``string``).
TEXTUAL_NODE_PARTS = ("comment", "string")
# Node types that open a body ending in ':' (Python) or '{' (brace languages).
BLOCK_OPENERS = ("{", ":")
# Errors counted in a region at most: the guard only compares before/after, a cap bounds the walk.
MAX_ERRORS_COUNTED = 64
IMPORT_NODE_PARTS = ("import", "include", "package", "use_declaration", "preproc")

# The words of the grammars above that are never a name (Python, Go, Rust, Java, JavaScript,
# TypeScript). KEYWORDS give code its shape (``lambda``, ``func``, ``pub``); VALUE_WORDS are the
# literals and the receivers (``None``, ``nil``, ``self``): never a name either, but values, which
# a copy of another line may rightly swap (``True`` there, ``False`` here).
KEYWORDS = frozenset("""
    abstract and as assert async await break case catch class const continue crate def default defer
    del do elif else enum except export extends final finally fn for from func function global go if
    impl implements import in instanceof interface is lambda let loop match mod mut new nonlocal not
    or package pass private protected pub public raise range return select static struct switch throw
    throws trait try type typeof use var void where while with yield
""".split())
VALUE_WORDS = frozenset("None True False true false null nil undefined self this super".split())


def grammar_for(language_id: str, uri: str) -> str | None:
    name = LANGUAGE_IDS.get(language_id)
    if name is None:
        suffix = PurePosixPath(urlparse(uri).path).suffix.lower()
        name = EXTENSIONS.get(suffix)
    return name


class Grammars:
    """Loads tree-sitter languages lazily; one ``Parser`` per grammar per thread."""

    def __init__(self) -> None:
        self._languages: dict[str, object] = {}
        self._lock = threading.Lock()
        self._local = threading.local()

    def language(self, name: str):
        with self._lock:
            lang = self._languages.get(name)
            if lang is None and name in GRAMMARS:
                import tree_sitter

                module, attr = GRAMMARS[name]
                try:
                    ptr = getattr(importlib.import_module(module), attr)()
                    lang = tree_sitter.Language(ptr)
                except (ImportError, AttributeError, ValueError) as exc:
                    log.warning("tree-sitter grammar %s unavailable (%s): line-based windows", name, exc)
                    lang = False
                self._languages[name] = lang
            return lang or None

    def parser(self, name: str):
        parsers = getattr(self._local, "parsers", None)
        if parsers is None:
            parsers = self._local.parsers = {}
        parser = parsers.get(name)
        if parser is None:
            lang = self.language(name)
            if lang is None:
                return None
            import tree_sitter

            parser = parsers[name] = tree_sitter.Parser(lang)
        return parser

    def parse(self, snap: DocumentSnapshot, data: bytes | None = None):
        """Bring the snapshot's tree up to date (incrementally when it has one)."""
        syn = snap.syntax
        if syn is None:
            return None
        parser = self.parser(syn.grammar)
        if parser is None:
            return None
        data = data if data is not None else snap.text.encode("utf-8")
        old = None
        if syn.tree is not None:
            old = syn.tree.copy()
            for e in syn.edits:
                old.edit(start_byte=e.start_byte, old_end_byte=e.old_end_byte, new_end_byte=e.new_end_byte,
                         start_point=e.start_point, old_end_point=e.old_end_point,
                         new_end_point=e.new_end_point)
        return parser.parse(data, old) if old is not None else parser.parse(data)


# ---------------------------------------------------------------------------- queries
def count_errors(root, start_byte: int, end_byte: int, limit: int = MAX_ERRORS_COUNTED) -> int:
    """ERROR and MISSING nodes that intersect ``[start_byte, end_byte]``."""
    count = 0
    stack = [root]
    while stack and count < limit:
        node = stack.pop()
        if node.end_byte < start_byte or node.start_byte > end_byte:
            continue
        if node.is_error or node.is_missing:
            count += 1
            continue
        if node.has_error:
            stack.extend(node.children)
    return count


def is_textual(node) -> bool:
    """True inside a comment or string literal (any grammar)."""
    while node is not None:
        if node.is_named and any(part in node.type for part in TEXTUAL_NODE_PARTS):
            return True
        node = node.parent
    return False


@dataclass(frozen=True)
class Replacement:
    """Replace ``text[start:end]`` with ``new`` (code-point offsets into the snapshot text)."""
    start: int
    end: int
    new: str


class SyntaxGuard:
    """Does a candidate edit introduce parse errors in its region? (compare before/after)."""

    def __init__(self, grammars: Grammars) -> None:
        self.grammars = grammars

    def errors(self, snap: DocumentSnapshot, tree, data: bytes, rep: Replacement) -> tuple[int, int]:
        """(errors before, errors after) in the lines the replacement touches."""
        idx = TextIndex(snap.text, snap.line_starts, data)
        line = snap.line_of(rep.start)
        region_start = snap.line_start(line)
        region_end = snap.line_end(snap.line_of(rep.end))
        rs, re_before = idx.byte(region_start), idx.byte(region_end)
        before = count_errors(tree.root_node, rs, re_before)
        start_b, end_b = idx.byte(rep.start), idx.byte(rep.end)
        new_b = rep.new.encode("utf-8")
        after_data = data[:start_b] + new_b + data[end_b:]
        edited = tree.copy()
        start_pt = idx.point(rep.start)
        edited.edit(start_byte=start_b, old_end_byte=end_b, new_end_byte=start_b + len(new_b),
                    start_point=start_pt, old_end_point=idx.point(rep.end),
                    new_end_point=end_point(start_pt, rep.new))
        parser = self.grammars.parser(snap.syntax.grammar)
        after_tree = parser.parse(after_data, edited)
        delta = len(new_b) - (end_b - start_b)
        after = count_errors(after_tree.root_node, rs, re_before + delta)
        return before, after

    def accepts(self, snap: DocumentSnapshot, tree, data: bytes, rep: Replacement) -> bool:
        before, after = self.errors(snap, tree, data, rep)
        return after <= before
