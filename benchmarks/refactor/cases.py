"""A real multi-file Python project and the edits a refactor of it must make, known from ``ast``.

The project is the installed ``click`` package's source (a test dependency, pure Python, 17
modules), copied into a directory and committed to a fresh git repository. A case makes a first
edit and knows, from Python's own ``ast`` (independent of the tree-sitter analysis under test),
every location that must follow:

* ``rename`` — a module-level function renamed at its ``def``: every ``Name`` reading it in its
  module and in the modules that ``from ... import`` it, the imported names themselves (and an
  ``as`` alias of the same name); uses inside functions that bind the name themselves (a
  parameter or an assignment) are not it. And in the docstrings and comments of the package
  (``tokenize``), every mention written as a reference: ``click.name``, ``:func:`name```, a call
  ``name(`` (an example in a docstring) and the name on a doctest line (``>>> name``).
* ``add_parameter`` — a required parameter appended to a function, and one call in its module
  updated by the first edit (the example); every other call ``f(a)`` in every module must pass
  the same argument.

More kinds (removed and reordered parameters, tests and docs, analogous edits) are in
``refactor_kinds``.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import shutil
import subprocess
import tokenize
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "click"
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgsign=false"]


def make_project(dest: Path) -> Path:
    """``dest/click/*.py`` from the installed package, committed to a new git repository."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"the {PACKAGE} package is not installed (pip install -e '.[test]')")
    src = Path(spec.origin).parent
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dest / PACKAGE, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (dest / ".gitignore").write_text("__pycache__/\n*.pyc\n")
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    subprocess.run([*GIT, "-C", str(dest), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(dest), "commit", "-qm", "import"], check=True)
    return dest


def reset(proj: Path) -> None:
    subprocess.run(["git", "-C", str(proj), "checkout", "-q", "--", "."], check=True)


def py_files(proj: Path) -> list[Path]:
    return sorted((proj / PACKAGE).glob("*.py"))


Site = tuple[str, int, int]  # (path relative to the project, 0-based line, 0-based UTF-16 column)


@dataclass
class Case:
    kind: str
    module: str  # the edited module, relative to the project
    name: str
    expected: dict[Site, str]  # location -> the text that must be there
    old_text: str  # the edited file before / after the first edit
    new_text: str


def utf16_col(line: str, byte_col: int) -> int:
    prefix = line.encode("utf-8")[:byte_col].decode("utf-8")
    return len(prefix.encode("utf-16-le")) // 2


def _binds(fn: ast.AST, name: str) -> bool:
    a = fn.args  # type: ignore[attr-defined]
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs] + [x for x in (a.vararg, a.kwarg) if x is not None]
    if any(p.arg == name for p in params):
        return True
    body = fn.body if isinstance(fn.body, list) else [fn.body]  # type: ignore[attr-defined]
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
                return True
    return False


def _name_sites(text: str, name: str) -> list[tuple[int, int]]:
    """(line, byte col) of every ``Name`` reading module-level ``name`` and every imported alias."""
    tree = ast.parse(text)
    out: list[tuple[int, int]] = []
    lines = text.splitlines()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and _binds(node, name):
            return
        if isinstance(node, ast.Name) and node.id == name:
            out.append((node.lineno - 1, node.col_offset))
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                line = lines[alias.lineno - 1]
                raw = line.encode("utf-8")
                if alias.name == name:
                    out.append((alias.lineno - 1, alias.col_offset))
                if alias.asname == name:
                    at = raw.rfind(name.encode(), alias.col_offset, alias.end_col_offset)
                    out.append((alias.lineno - 1, at))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def _imports(text: str, name: str) -> bool:
    return any(isinstance(n, ast.ImportFrom) and any(a.name == name for a in n.names) for n in ast.walk(ast.parse(text)))


def _prose_mentions(text: str, name: str, package: str) -> list[int]:
    """Offsets of ``name`` in a module's strings and comments written as a reference to the
    function: ``package.name``, a Sphinx role ``:func:`name```, ``:meth:`name```, a call
    ``name(`` (not ``obj.name(``) or the name on a doctest line (``>>>`` or ``...`` first), these
    two in comments and docstrings (a string that is a statement alone) only."""
    out = []
    starts = [0]
    for ln in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(ln))
    notes = {(n.lineno, n.col_offset) for n in ast.walk(ast.parse(text))
             if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in (tokenize.STRING, tokenize.COMMENT):
            continue
        line_text = text.splitlines(keepends=True)[tok.start[0] - 1]
        note = tok.type == tokenize.COMMENT or (tok.start[0], len(line_text[:tok.start[1]].encode("utf-8"))) in notes
        base = starts[tok.start[0] - 1] + tok.start[1]
        k = tok.string.find(name)
        while k >= 0:
            end = k + len(name)
            whole = (k == 0 or not (tok.string[k - 1].isalnum() or tok.string[k - 1] == "_")) and (
                end == len(tok.string) or not (tok.string[end].isalnum() or tok.string[end] == "_"))
            before = tok.string[max(0, k - len(package) - 1):k]
            role = tok.string[:k].endswith(("`", "`~")) and tok.string[:k].rstrip("`~").endswith(":") \
                and tok.string[end:end + 1] == "`"
            call = tok.string[end:end + 1] == "(" and tok.string[k - 1:k] != "."
            line = tok.string[tok.string.rfind("\n", 0, k) + 1:k].lstrip(" \t")
            doctest = line.startswith((">>> ", "... ")) and tok.string[k - 1:k] != "."
            if whole and (before == package + "." or role or (note and (call or doctest))):
                out.append(base + k)
            k = tok.string.find(name, end)
    return out


def rename_case(proj: Path, module: str, name: str, new: str) -> Case:
    """Rename ``def name(`` in ``module`` (edits the file on disk) and return the known follow-ups."""
    path = proj / module
    old_text = path.read_text(encoding="utf-8")
    marker = f"\ndef {name}("
    assert old_text.count(marker) == 1, f"{module} defines {name} once"
    new_text = old_text.replace(marker, f"\ndef {new}(")
    path.write_text(new_text, encoding="utf-8")
    expected: dict[Site, str] = {}
    for f in py_files(proj):
        rel = f.relative_to(proj).as_posix()
        text = f.read_text(encoding="utf-8")
        lines = text.splitlines()
        if rel == module or _imports(text, name):
            for line, col in _name_sites(text, name):
                expected[(rel, line, utf16_col(lines[line], col))] = new
        starts = [0]
        for ln in text.splitlines(keepends=True):
            starts.append(starts[-1] + len(ln))
        for at in _prose_mentions(text, name, PACKAGE):
            line = max(k for k, s in enumerate(starts) if s <= at)
            expected[(rel, line, len(text[starts[line]:at].encode("utf-16-le")) // 2)] = new
    return Case("rename", module, name, expected, old_text, new_text)


def calls_of(text: str, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name) and n.func.id == name]


def add_parameter_case(proj: Path, module: str, name: str, param: str, arg: str) -> Case:
    """Append required ``param`` to ``def name(...)`` in ``module`` and ``arg`` to its first call
    there; every other one-argument-short call must get ``, arg``."""
    path = proj / module
    old_text = path.read_text(encoding="utf-8")
    tree = ast.parse(old_text)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    nparams = len(fn.args.args)
    lines = old_text.splitlines(keepends=True)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln))

    def at(line: int, byte_col: int) -> int:
        return offsets[line - 1] + len(lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8"))

    last = fn.args.args[-1]
    p_end = at(last.end_lineno, last.end_col_offset)
    first = next(c for c in calls_of(old_text, name) if len(c.args) == nparams and not c.keywords)
    c_end = at(first.end_lineno, first.end_col_offset) - 1  # before ")"
    new_text = old_text
    for at_, ins in sorted([(p_end, f", {param}"), (c_end, f", {arg}")], reverse=True):
        new_text = new_text[:at_] + ins + new_text[at_:]
    path.write_text(new_text, encoding="utf-8")
    expected: dict[Site, str] = {}
    for f in py_files(proj):
        rel = f.relative_to(proj).as_posix()
        text = f.read_text(encoding="utf-8")
        flines = text.splitlines()
        for c in calls_of(text, name):
            if len(c.args) != nparams or c.keywords:
                continue
            # the required new argument list: the old arguments plus ", arg"
            a0, a1 = c.args[0], c.args[-1]
            inner_start = (a0.lineno - 1, utf16_col(flines[a0.lineno - 1], a0.col_offset))
            old_args = ast.get_source_segment(text, c)
            assert old_args is not None
            inner = old_args[old_args.index("(") + 1:-1]
            expected[(rel, *inner_start)] = inner + f", {arg}"
            del a1
    return Case("add_parameter", module, name, expected, old_text, new_text)


def predicted_sites(result: dict, proj: Path) -> dict[Site, str]:
    """The edits of a ``--format json`` result, keyed like ``Case.expected``. A signature edit's
    range is the whole argument list; its key is where the list's first argument starts."""
    out: dict[Site, str] = {}
    root = proj.resolve()
    for e in result["edits"]:
        path = Path(e["uri"].removeprefix("file://"))
        rel = path.resolve().relative_to(root).as_posix()
        start = e["range"]["start"]
        line, col = start["line"], start["character"]
        text = e["newText"]
        if e.get("kind") == "signature":  # keyed where its first argument starts
            lead = text[:len(text) - len(text.lstrip())]
            line, col = (line + lead.count("\n"), len(lead.rsplit("\n", 1)[1])) if "\n" in lead else (line, col + len(lead))
            text = text.strip()
        out[(rel, line, col)] = text
    return out


def same_text(want: str | None, got: str) -> bool:
    """The same text, or the same argument list once parsed (layout and line breaks are free)."""
    if want is None or want == got:
        return want == got
    try:
        return ast.dump(ast.parse(f"f({want})")) == ast.dump(ast.parse(f"f({got})"))
    except SyntaxError:
        return False


def score(expected: dict[Site, str], predicted: dict[Site, str]) -> tuple[int, int, int]:
    """(correct: right place and text, predicted, expected)."""
    correct = sum(1 for k, v in predicted.items() if same_text(expected.get(k), v))
    return correct, len(predicted), len(expected)
