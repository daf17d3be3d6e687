"""The matching changes in tests and docs of a rename (for ``propagate``), beyond the code that
next-edit ties to the binding:

* uses through a module — ``click.echo(...)`` after ``import click``, ``utils.echo`` after
  ``from click import utils`` — where the dotted name reaches the renamed symbol: the module
  that defines it, or a package whose ``__init__`` re-exports it (as tests and examples use it);
  and in a function that imports the symbol itself (against a circular import), its uses there;
* references in docstrings and comments: qualified names (``click.echo``) anywhere; Sphinx
  roles (``:func:`echo```) and literals (````echo()````) in the symbol's own package or in a
  module that imports it; there too, with a lower confidence, call-shaped mentions in Python
  strings and comments (``assert echo() is ctx`` in an example) and the name on a doctest line
  (``>>> echo``);
* documentation files (.rst, .md, .txt): qualified names, and roles, literals and autodoc
  directives under a ``.. currentmodule::`` / ``.. module::`` that reaches the symbol;
* a renamed parameter: its ``:param:`` / ``:type:`` fields and literals in the function's own
  docstring (the keyword arguments at its calls are next-edit's signature step).

Plain words are never renamed: "echo the input" keeps its "echo". Python is read with the
standard library's ``ast`` and ``tokenize`` (positions exact to the character).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mercury_lsp.next_edit import identifier_change
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.confidence import SIGNATURE_CALL, TIED_RENAME
from mercury_lsp.next_edit.steps.candidates import line_renames

DOC_SUFFIXES = (".rst", ".md", ".markdown", ".txt")
MODULE_DIRECTIVE = re.compile(r"^\s*\.\.\s+(?:py:)?(?:currentmodule|module|automodule)::\s*([\w.]+)", re.M)
# Confidence of these edits: the syntax ties them to the renamed binding, the model does not check
# them; they rank as next-edit's syntax-determined renames.
MENTION_CONFIDENCE = TIED_RENAME.value
# Call-shaped mentions and doctest lines in prose (``get_current_context()`` in an example, not
# in backticks): the name's shape, not a role or a literal, says it is the symbol, so they rank
# below, with the edits the syntax guesses (next-edit's signature calls). Not measured.
LOOSE_MENTION_CONFIDENCE = SIGNATURE_CALL.value


@dataclass(frozen=True)
class Renamed:
    old: str
    new: str
    parameter_of: str | None  # a parameter: its function's name; None: a module-level symbol
    qualified: frozenset[str]  # dotted names reaching the symbol ("click.utils.echo", "click.echo")
    package: str  # the top-level package ("click"): its modules may refer to the name unqualified
    home: Path


def module_name(path: Path) -> str | None:
    """``a/b/c.py`` -> ``a.b.c`` when ``a`` and ``b`` are packages (``__init__.py``)."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    d = path.parent
    while (d / "__init__.py").is_file():
        parts.insert(0, d.name)
        d = d.parent
    return ".".join(parts) if parts and (path.parent / "__init__.py").is_file() else None


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


class _Lines:
    """Code-point offsets of ``ast`` positions (1-based line, UTF-8 byte column)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True) or [""]
        self.starts = [0]
        for ln in self.lines:
            self.starts.append(self.starts[-1] + len(ln))

    def at(self, line: int, byte_col: int) -> int:
        return self.starts[line - 1] + len(self.lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def _reexports(init: Path, module: str, name: str) -> bool:
    """Does package ``init`` import ``name`` from ``module`` under the same name (or ``*``)?"""
    try:
        tree = _parse(init.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return False
    package = module_name(init) or ""
    for n in ast.walk(tree) if tree is not None else ():
        if isinstance(n, ast.ImportFrom) and _absolute(n, package, is_package=True) == module:
            if any(a.name == "*" or (a.name == name and a.asname in (None, name)) for a in n.names):
                return True
    return False


def _absolute(n: ast.ImportFrom, package: str, is_package: bool) -> str:
    if not n.level:
        return n.module or ""
    base = package.split(".") if is_package else package.split(".")[:-1]
    base = base[: len(base) - (n.level - 1)] if n.level > 1 else base
    return ".".join(base + ([n.module] if n.module else []))


def renamed_symbol(before: str, after: str, path: Path) -> Renamed | None:
    """The module-level function/class or the parameter the edit renamed, with its dotted names.
    One identifier changed, or (a function and its ``@overload`` stubs renamed together) the
    lines read as renames (next-edit's ``line_renames``) with one of them a definition."""
    change = identifier_change(before, after)
    module = module_name(path)
    tree = _parse(after) if module is not None else None
    if tree is None or module is None:
        return None
    changes = [change] if change is not None else line_renames(before, after)[0]
    if not changes:
        return None
    starts = {after.count("\n", 0, at) + 1: (old, new) for at, old, new in changes}
    at, old, new = changes[0]
    lines = _Lines(after)
    parts = module.split(".")
    for n in tree.body:
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and starts.get(n.lineno, ("", ""))[1] == n.name:
            old, new = starts[n.lineno]
            qualified, source, d = {f"{module}.{old}"}, module, path.parent
            for k in range(len(parts) - 1, 0, -1):  # the packages above that re-export it
                if not _reexports(d / "__init__.py", source, old):
                    break
                source, d = ".".join(parts[:k]), d.parent
                qualified.add(f"{source}.{old}")
            return Renamed(old, new, None, frozenset(qualified), parts[0], path)
    if change is None:  # a parameter: one identifier changed
        return None
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
            a = n.args
            if any(arg.arg == new and lines.at(arg.lineno, arg.col_offset) == at
                   for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs)):
                return Renamed(old, new, n.name, frozenset(), parts[0], path)
    return None


def _aliases(tree: ast.Module, module: str) -> dict[str, str]:
    """Local name -> the dotted module (or module member) it stands for."""
    out: dict[str, str] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(n, ast.ImportFrom):
            base = _absolute(n, module, is_package=False)
            for a in n.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{base}.{a.name}"
    return out


def _dotted(node: ast.expr) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *parts]


def _local_import_sites(tree: ast.Module, lines: _Lines, r: Renamed, module: str) -> Iterable[int]:
    """A function that imports the symbol itself (``from .decorators import help_option`` inside
    it, as modules do against circular imports): the imported name and its uses there."""
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for n in ast.walk(fn):
            if not (isinstance(n, ast.ImportFrom) and f"{_absolute(n, module, is_package=False)}.{r.old}" in r.qualified):
                continue
            for a in n.names:
                if a.name == r.old and a.asname is None:
                    yield lines.at(a.lineno, a.col_offset)
                    yield from (lines.at(u.lineno, u.col_offset) for u in ast.walk(fn)
                                if isinstance(u, ast.Name) and u.id == r.old)


def _code_sites(tree: ast.Module, lines: _Lines, r: Renamed, module: str) -> Iterable[int]:
    yield from _local_import_sites(tree, lines, r, module)
    aliases = _aliases(tree, module)
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and n.attr == r.old and n.end_lineno is not None:
            chain = _dotted(n.value)
            if chain is not None and chain[0] in aliases:
                if ".".join([aliases[chain[0]], *chain[1:], r.old]) in r.qualified:
                    yield lines.at(n.end_lineno, n.end_col_offset or 0) - len(r.old)


DOCTEST_LINE = re.compile(r"^[ \t]*(?:>>>|\.\.\.)[ \t].*$", re.M)


def _loose_sites(text: str, r: Renamed) -> Iterable[int]:
    """Offsets of ``r.old`` in a Python string or comment shaped as code, not as a word: called
    (``old(``) or on a doctest line. Not after a dot (another object's member)."""
    word = re.compile(rf"(?<![\w.]){re.escape(r.old)}(?!\w)")
    for m in word.finditer(text):
        if text.startswith("(", m.end()):
            yield m.start()
    for line in DOCTEST_LINE.finditer(text):
        for m in word.finditer(text, line.start(), line.end()):
            if not text.startswith("(", m.end()):
                yield m.start()


def _text_sites(text: str, r: Renamed, unqualified: bool) -> Iterable[int]:
    """Offsets of ``r.old`` in prose (a docstring, a comment, a doc file) that name the symbol."""
    word = re.escape(r.old)
    for q in r.qualified:
        prefix = re.escape(q[: -len(r.old)])
        for m in re.finditer(rf"(?<![\w.]){prefix}({word})(?!\w)", text):
            yield m.start(1)
    if unqualified:
        for m in re.finditer(rf"(?::[\w:]+:`~?|``)({word})(?=(?:\(\))?(?:``|`))", text):
            yield m.start(1)
        for m in re.finditer(rf"^\s*\.\.\s+(?:py:)?(?:auto)?(?:function|class|exception|data)::\s*({word})\b",
                             text, re.M):
            yield m.start(1)


def _param_sites(tree: ast.Module, text: str, lines: _Lines, r: Renamed) -> Iterable[int]:
    word = re.escape(r.old)
    fields = re.compile(rf"(?::param(?:\s+[\w\[\], .|]+?)?\s+|:type\s+|``|(?<![\w*])\*)({word})(?=:|``|\*(?!\w))")
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == r.parameter_of and n.body:
            doc = n.body[0]
            if isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str):
                start = lines.at(doc.lineno, doc.col_offset)
                end = lines.at(doc.end_lineno or doc.lineno, doc.end_col_offset or 0)
                for m in fields.finditer(text[start:end]):
                    yield start + m.start(1)


def python_mentions(text: str, path: Path, r: Renamed) -> tuple[list[int], list[int]]:
    """Offsets in a Python file where ``r.old`` must become ``r.new`` (module docstring): the
    sure ones, and the call-shaped mentions in prose (``_loose_sites``)."""
    tree = _parse(text)
    module = module_name(path) or path.stem
    if tree is None:
        return [], []
    lines = _Lines(text)
    if r.parameter_of is not None:
        return (list(_param_sites(tree, text, lines, r)) if path.resolve() == r.home.resolve() else []), []
    out = list(_code_sites(tree, lines, r, module))
    unqualified = module.split(".")[0] == r.package or any(
        isinstance(n, ast.ImportFrom) and any(a.name == r.old for a in n.names) for n in ast.walk(tree))
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return out, []
    loose: list[int] = []
    # statements that are a string alone (docstrings, and the strings written as notes): the
    # loose shapes are read there and in comments, not in the strings the code uses
    notes = {(n.lineno, n.col_offset) for n in ast.walk(tree) if isinstance(n, ast.Expr)
             and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}
    for t in tokens:
        if t.type in (tokenize.STRING, tokenize.COMMENT):
            at = lines.starts[t.start[0] - 1] + t.start[1]  # tokenize counts characters
            out.extend(at + k for k in _text_sites(t.string, r, unqualified))
            col = len(lines.lines[t.start[0] - 1][:t.start[1]].encode("utf-8"))  # ast counts bytes
            if unqualified and (t.type == tokenize.COMMENT or (t.start[0], col) in notes):
                loose.extend(at + k for k in _loose_sites(t.string, r))
    return out, [s for s in loose if s not in out]


def doc_mentions(text: str, r: Renamed) -> list[int]:
    if r.parameter_of is not None:
        return []
    current = {m.group(1) for m in MODULE_DIRECTIVE.finditer(text)}
    return list(_text_sites(text, r, any(f"{c}.{r.old}" in r.qualified for c in current)))


def mention_edits(uri: str, text: str, path: Path, r: Renamed) -> list[Prediction]:
    found, loose = python_mentions(text, path, r) if path.suffix in (".py", ".pyi") else (doc_mentions(text, r), [])
    what = f"parameter '{r.old}' of {r.parameter_of}()" if r.parameter_of else f"'{sorted(r.qualified)[0]}'"
    where = "docs" if path.suffix in DOC_SUFFIXES else "code"
    sure = [Prediction(uri, s, s + len(r.old), r.new, MENTION_CONFIDENCE,
                       f"{what} was renamed to '{r.new}' (a mention in {where})", "rename", "syntax", r.old)
            for s in sorted(set(found)) if text.startswith(r.old, s)]
    return sure + [Prediction(uri, s, s + len(r.old), r.new, LOOSE_MENTION_CONFIDENCE,
                              f"{what} was renamed to '{r.new}' (a call-shaped mention in a docstring or comment)",
                              "rename", "syntax", r.old)
                   for s in sorted(set(loose)) if text.startswith(r.old, s)]
