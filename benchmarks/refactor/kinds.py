"""More edits a refactor of the real project must follow (see ``refactor_cases``), known from
``ast`` and ``tokenize``:

* ``remove_parameter`` / ``reorder_parameters`` — a parameter dropped from a function's ``def``,
  or its parameters reversed; every call passing them positionally must drop that argument, or
  pass its arguments in the new order (compared as parsed argument lists, so layout is free).
* ``docs`` — a rename, with a user's tests and docs added to the project (a test module using
  ``click.echo`` and ``from click.utils import echo``, a Sphinx page, click's own README): also
  every mention that names the function — ``click.echo`` and Sphinx roles in docstrings and
  comments, the page's roles and autodoc directive, the README's example — and no plain word.
* ``rename_parameter`` — a parameter renamed in a ``def``: its uses in the body, ``name=`` at
  every call, its ``:param:`` field.
* ``repeat`` — the first ``isinstance(x, (A, B))`` of a tuple written ``A | B`` (ruff's UP038):
  every other ``isinstance`` call with that same tuple is the analogous edit.

All but the first are scored per line (``changed_lines``: the line's text after the edits).
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

from benchmarks.refactor.cases import GIT, PACKAGE, Case, Site, calls_of, py_files, rename_case, utf16_col


def _offsets(text: str) -> list[int]:
    out = [0]
    for ln in text.splitlines(keepends=True):
        out.append(out[-1] + len(ln))
    return out


def _at(text: str, starts: list[int], line: int, byte_col: int) -> int:
    """Code-point offset of an ``ast`` position (1-based line, UTF-8 byte column)."""
    row = text[starts[line - 1]:starts[line] if line < len(starts) else len(text)]
    return starts[line - 1] + len(row.encode("utf-8")[:byte_col].decode("utf-8"))


def signature_case(proj: Path, module: str, name: str, order: list[int]) -> Case:
    """Give ``def name`` in ``module`` the parameters ``order`` (indices of the old ones: fewer is a
    removal, a permutation a reorder); every call passing all of them positionally must pass
    ``[args[i] for i in order]``."""
    path = proj / module
    old_text = path.read_text(encoding="utf-8")
    fn = next(n for n in ast.parse(old_text).body if isinstance(n, ast.FunctionDef) and n.name == name)
    params = fn.args.args
    starts = _offsets(old_text)
    spans = [(_at(old_text, starts, a.lineno, a.col_offset), _at(old_text, starts, a.end_lineno, a.end_col_offset))
             for a in params]
    texts = [old_text[s:e] for s, e in spans]
    new_text = old_text
    if len(order) == len(params):  # a permutation: each slot gets its new parameter
        for (s, e), i in sorted(zip(spans, order, strict=True), reverse=True):
            new_text = new_text[:s] + texts[i] + new_text[e:]
    else:
        (gone,) = set(range(len(params))) - set(order)
        s = spans[gone - 1][1] if gone else spans[0][0]
        e = spans[gone][1] if gone else spans[1][0]
        new_text = new_text[:s] + new_text[e:]
    path.write_text(new_text, encoding="utf-8")
    kind = "reorder_parameters" if len(order) == len(params) else "remove_parameter"
    expected: dict[Site, str] = {}
    for f in py_files(proj):
        rel = f.relative_to(proj).as_posix()
        text = f.read_text(encoding="utf-8")
        flines = text.splitlines()
        for c in calls_of(text, name):
            if len(c.args) != len(params) or c.keywords or any(isinstance(a, ast.Starred) for a in c.args):
                continue
            a0 = c.args[0]
            args = [ast.get_source_segment(text, a) or "" for a in c.args]
            expected[(rel, a0.lineno - 1, utf16_col(flines[a0.lineno - 1], a0.col_offset))] = \
                ", ".join(args[i] for i in order)
    return Case(kind, module, name, expected, old_text, new_text)


LineSite = tuple[str, int]  # (path relative to the project, 0-based line)


def _isinstance_tuples(text: str, elts: str) -> list[ast.Tuple]:
    return [n.args[1] for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            and n.func.id == "isinstance" and len(n.args) == 2 and isinstance(n.args[1], ast.Tuple)
            and ast.unparse(n.args[1]) == elts]


def repeat_case(proj: Path, elts: str) -> tuple[Case, dict[LineSite, str]]:
    """Write the first ``isinstance(_, ELTS)`` of the project as a union; the other ones must follow.
    Returns the case and the expected lines ((path, line) -> the line's new text)."""
    union = " | ".join(e.strip() for e in elts.strip("()").split(","))
    expected: dict[LineSite, str] = {}
    first: tuple[Path, str, str] | None = None
    for f in py_files(proj):
        rel = f.relative_to(proj).as_posix()
        text = f.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in sorted(_isinstance_tuples(text, elts), key=lambda n: (n.lineno, n.col_offset)):
            line = lines[node.lineno - 1].encode("utf-8")
            new = (line[:node.col_offset] + union.encode() + line[node.end_col_offset:]).decode("utf-8")
            if first is None:
                lines[node.lineno - 1] = new
                first = (f, text, "\n".join(lines) + ("\n" if text.endswith("\n") else ""))
            else:
                expected[(rel, node.lineno - 1)] = new
    assert first is not None, f"no isinstance(_, {elts}) in the project"
    first[0].write_text(first[2], encoding="utf-8")
    case = Case("repeat", first[0].relative_to(proj).as_posix(), elts, {}, first[1], first[2])
    return case, expected


TextEdit = tuple[int, int, str]  # replace [start, end) (code points) by the text


def changed_lines(rel: str, text: str, edits: list[TextEdit]) -> dict[LineSite, str]:
    """(path, line) -> the line's new text, for every line ``edits`` change (a block whose line
    count changes is one entry at its first line, its lines joined)."""
    starts = [0]
    for ln in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(ln))
    out: dict[LineSite, str] = {}
    new = text
    for s, e, t in sorted(edits, reverse=True):
        new = new[:s] + t + new[e:]
    old_lines, new_lines = text.splitlines(), new.splitlines()
    shift = 0
    for s, e, t in sorted(edits):
        first = text.count("\n", 0, s)
        last = text.count("\n", 0, e)
        delta = t.count("\n") - text.count("\n", s, e)
        block = new_lines[first + shift:last + shift + delta + 1]
        if delta == 0:
            out.update({(rel, first + k): b for k, b in enumerate(block) if b != old_lines[first + k]})
        else:
            out[(rel, first)] = "\n".join(block)
        shift += delta
    return out


def predicted_lines(result: dict, proj: Path) -> dict[LineSite, str]:
    """The lines a ``--format json`` result changes, as ``changed_lines`` (UTF-16 positions are
    read here, not by the tool)."""
    root = proj.resolve()
    by_file: dict[str, list[dict]] = {}
    for e in result["edits"]:
        rel = Path(e["uri"].removeprefix("file://")).resolve().relative_to(root).as_posix()
        by_file.setdefault(rel, []).append(e)
    out: dict[LineSite, str] = {}
    for rel, edits in by_file.items():
        text = (proj / rel).read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        starts = [0]
        for ln in lines:
            starts.append(starts[-1] + len(ln))

        def offset(pos: dict, lines: list[str] = lines, starts: list[int] = starts) -> int:
            units = lines[pos["line"]].encode("utf-16-le")[: 2 * pos["character"]]
            return starts[pos["line"]] + len(units.decode("utf-16-le"))

        out.update(changed_lines(rel, text, [(offset(e["range"]["start"]), offset(e["range"]["end"]), e["newText"])
                                             for e in edits]))
    return out


# A user's tests and docs for the ``docs`` case: ``{echo}`` marks a mention that names click's
# ``echo`` (it must be renamed), a bare ``echo`` does not.
USER_FILES = {
    "tests/test_utils.py": """import click
from click import utils as click_utils
from click.utils import {echo}


def test_echo_writes_lines(capsys):
    click.{echo}("hello")
    {echo}("again")
    click_utils.{echo}("third")
    assert capsys.readouterr().out == "hello\\nagain\\nthird\\n"


def test_another_echo_is_left_alone():
    class Shell:
        def echo(self, text):
            return text

    assert Shell().echo("echo") == "echo"  # echo the word back
""",
    "docs/api.rst": """API
===

.. currentmodule:: click

.. autofunction:: {echo}

Use :func:`{echo}` rather than ``print()``: the examples call :func:`click.{echo}`, and
``{echo}()`` strips colors when the output is not a terminal. To echo the input back, see
:func:`secho`.
""",
}
MARK = "{echo}"


def docs_case(proj: Path) -> tuple[Case, dict[LineSite, str]]:
    """The user's tests and docs plus click's README (from its installed metadata) committed to
    the project, then ``echo`` renamed ``print_out``: the expected lines of every file."""
    import importlib.metadata

    expected_edits: dict[str, list[TextEdit]] = {}
    for rel, template in USER_FILES.items():
        text, marks = "", []
        for k, part in enumerate(template.split(MARK)):
            if k:
                marks.append(len(text))
                text += "echo"
            text += part
        (proj / rel).parent.mkdir(parents=True, exist_ok=True)
        (proj / rel).write_text(text, encoding="utf-8")
        expected_edits[rel] = [(m, m + len("echo"), "print_out") for m in marks]
    readme = importlib.metadata.metadata(PACKAGE).get_payload() or ""
    (proj / "README.md").write_text(readme, encoding="utf-8")
    expected_edits["README.md"] = [(m.start() + len(PACKAGE) + 1, m.end(), "print_out")
                                   for m in re.finditer(rf"(?<![\w.]){PACKAGE}\.echo(?!\w)", readme)]
    subprocess.run([*GIT, "-C", str(proj), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(proj), "commit", "-qm", "tests and docs"], check=True)
    case = rename_case(proj, "click/utils.py", "echo", "print_out")  # code and docstrings of click
    for (rel, line, col), new in case.expected.items():
        text = (proj / rel).read_text(encoding="utf-8")
        at = _line_offset(text, line, col)
        expected_edits.setdefault(rel, []).append((at, at + len("echo"), new))
    lines: dict[LineSite, str] = {}
    for rel, edits in expected_edits.items():
        lines.update(changed_lines(rel, (proj / rel).read_text(encoding="utf-8"), sorted(set(edits))))
    return Case("docs", case.module, "echo", {}, case.old_text, case.new_text), lines


def _line_offset(text: str, line: int, utf16_col: int) -> int:
    row = text.splitlines(keepends=True)[line]
    return sum(len(x) for x in text.splitlines(keepends=True)[:line]) + len(
        row.encode("utf-16-le")[: 2 * utf16_col].decode("utf-16-le"))


def parameter_rename_case(proj: Path, module: str, name: str, old: str, new: str) -> tuple[Case, dict[LineSite, str]]:
    """Rename parameter ``old`` of ``def name`` in ``module``: its uses in the body (``ast`` names
    not rebound by a nested function), ``old=`` at every call of ``name`` (or ``x.name``), and
    ``:param old:`` in its docstring must follow."""
    path = proj / module
    old_text = path.read_text(encoding="utf-8")
    tree = ast.parse(old_text)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    arg = next(a for a in (*fn.args.args, *fn.args.kwonlyargs) if a.arg == old)
    starts = _offsets(old_text)
    at = _at(old_text, starts, arg.lineno, arg.col_offset)
    new_text = old_text[:at] + new + old_text[at + len(old):]
    body: list[TextEdit] = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id == old:
            s = _at(old_text, starts, n.lineno, n.col_offset)
            body.append((s, s + len(old), new))
    doc = ast.get_docstring(fn, clean=False) or ""
    field = f":param {old}:"
    if field in doc:
        s = old_text.index(field, _at(old_text, starts, fn.body[0].lineno, fn.body[0].col_offset)) + len(":param ")
        body.append((s, s + len(old), new))
    expected = changed_lines(module, old_text, body)  # body lines: the same in the edited text
    path.write_text(new_text, encoding="utf-8")
    for f in py_files(proj):
        rel = f.relative_to(proj).as_posix()
        text = f.read_text(encoding="utf-8")
        fstarts = _offsets(text)
        calls = [c for c in ast.walk(ast.parse(text)) if isinstance(c, ast.Call) and (
            (isinstance(c.func, ast.Name) and c.func.id == name)
            or (isinstance(c.func, ast.Attribute) and c.func.attr == name))]
        kws = [(_at(text, fstarts, k.lineno, k.col_offset), new) for c in calls for k in c.keywords if k.arg == old]
        expected.update(changed_lines(rel, text, [(s, s + len(old), t) for s, t in kws]))
    return Case("rename_parameter", module, f"{name}({old})", {}, old_text, new_text), expected
