"""Synthetic cases of the next-edit benchmark (``benchmarks/next_edit/synthetic.py``): one first edit in a
Python standard-library file and the edits it requires, found with Python's ``ast`` (independent
of the tree-sitter analysis under test). The kinds are described in ``benchmarks.next_edit.synthetic``.
"""

from __future__ import annotations

import ast
import hashlib
import sysconfig
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from mercury_lsp.next_edit import apply_edits
from mercury_train.corpus import SKIP_STDLIB, heldout

KINDS = ("rename_parameter", "rename_local", "rename_attribute", "rename_method", "add_parameter")
RENAMES = KINDS[:4]
HELDOUT_FRACTION = 0.03
MAX_PER_FILE = 3  # cases of one kind from one file
MAX_FILE_CHARS = 200_000
NEW_PARAM, NEW_ARG = "extra_flag", "None"


@dataclass
class Case:
    kind: str
    path: str
    heldout: bool
    before: str
    after: str  # with the first edit
    cursor: int
    expected: list[tuple[int, int, str]]  # (start, end, new text) in ``after``


# ---------------------------------------------------------------------------- positions
class Offsets:
    """ast (line, UTF-8 byte column) -> code-point offset."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for ln in self.lines:
            self.starts.append(self.starts[-1] + len(ln))

    def at(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", errors="ignore"))


def _names_in(node: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
    return out


NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
          ast.DictComp, ast.GeneratorExp)


def _own_nodes(func: ast.AST):
    """Nodes of ``func``'s body outside nested scopes; and the set of names nested scopes mention."""
    own, nested_names = [], set()
    stack = list(func.body)
    while stack:
        n = stack.pop()
        if isinstance(n, NESTED):
            nested_names |= _names_in(n)
            continue
        if isinstance(n, ast.Global | ast.Nonlocal):
            nested_names |= set(n.names)
        own.append(n)
        stack.extend(ast.iter_child_nodes(n))
    return own, nested_names


def _params(func) -> list[ast.arg]:
    a = func.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs]


def _new_name(old: str, taken: set[str]) -> str | None:
    new = "new_" + old.lstrip("_")
    if old.startswith("_"):
        new = "_" + new
    return None if new in taken else new


# ---------------------------------------------------------------------------- case builders
def _rename_case(kind: str, path: str, held: bool, text: str, name: str, start: int, uses: list[int],
                 taken: set[str]) -> Case | None:
    """The user renames ``name`` at ``start``; its other occurrences (``uses``, sorted) must follow.

    None when ``name`` is not at ``start`` and at every use, when there is no other use, or when
    the new name is already ``taken``.
    """
    if text[start:start + len(name)] != name:
        return None
    uses = [u for u in uses if u != start]
    if not uses or any(text[u:u + len(name)] != name for u in uses):
        return None
    new = _new_name(name, taken)
    if new is None:
        return None
    after = text[:start] + new + text[start + len(name):]
    d = len(new) - len(name)
    expected = [(u + (d if u > start else 0), u + (d if u > start else 0) + len(name), new) for u in uses]
    return Case(kind, path, held, text, after, start + len(new), expected)


def _name_cases(kind: str, path: str, held: bool, text: str, tree: ast.Module, off: Offsets) -> list[Case]:
    cases = []
    all_names = _names_in(tree)
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        own, nested = _own_nodes(func)
        params = _params(func)
        if kind == "rename_parameter":
            skip_first = bool(params) and params[0].arg in ("self", "cls")
            choices = [(p.arg, off.at(p.lineno, p.col_offset)) for p in params[1 if skip_first else 0:]]
            if func.args.vararg:
                choices.append((func.args.vararg.arg, off.at(func.args.vararg.lineno, func.args.vararg.col_offset)))
        else:
            pnames = {p.arg for p in params} | {a.arg for a in (func.args.vararg, func.args.kwarg) if a}
            stores = [n for n in own if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                      and n.id not in pnames]
            first: dict[str, ast.Name] = {}
            for n in sorted(stores, key=lambda n: (n.lineno, n.col_offset)):
                first.setdefault(n.id, n)
            choices = [(name, off.at(n.lineno, n.col_offset)) for name, n in first.items()]
        for name, start in choices:
            if len(name) < 2 or name in nested:
                continue
            uses = sorted(off.at(n.lineno, n.col_offset) for n in own if isinstance(n, ast.Name) and n.id == name)
            case = _rename_case(kind, path, held, text, name, start, uses, all_names)
            if case is not None:
                cases.append(case)
                break  # one case per function
    return cases


def _attr_cases(kind: str, path: str, held: bool, text: str, tree: ast.Module, off: Offsets) -> list[Case]:
    attrs = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
    plain = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
        {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg | ast.keyword) and getattr(n, "arg", None)}
    defs: dict[str, list] = defaultdict(list)
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for item in cls.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                defs[item.name].append((cls, item))
    all_names = _names_in(tree) | set(defs)
    cases = []
    if kind == "rename_method":
        targets = []
        for name, where in defs.items():
            if len(where) != 1 or name.startswith("__") or len(name) < 3 or name in plain:
                continue
            _, fn = where[0]
            if fn.decorator_list:
                continue
            line = off.lines[fn.lineno - 1]
            col = line.find("def " + name)
            if col < 0:
                continue
            start = off.starts[fn.lineno - 1] + col + 4
            targets.append((name, start))
    else:
        self_sets: dict[str, list[tuple[ast.ClassDef, ast.Attribute]]] = defaultdict(list)
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for n in ast.walk(cls):
                if (isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)
                        and n.value.id == "self"):
                    self_sets[n.attr].append((cls, n))
        targets = []
        for name, sets in self_sets.items():
            if len({id(c) for c, _ in sets}) != 1 or len(name) < 3 or name in plain or name in defs:
                continue
            first = min((n for _, n in sets), key=lambda n: (n.end_lineno, n.end_col_offset))
            start = off.at(first.end_lineno, first.end_col_offset) - len(name)
            targets.append((name, start))
    for name, start in sorted(targets, key=lambda t: t[1]):
        uses = sorted(off.at(n.end_lineno, n.end_col_offset) - len(n.attr) for n in attrs if n.attr == name)
        case = _rename_case(kind, path, held, text, name, start, uses, all_names)
        if case is not None:
            cases.append(case)
    return cases


def _add_param_cases(path: str, held: bool, text: str, tree: ast.Module, off: Offsets) -> list[Case]:
    cases = []
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or fn.decorator_list:
            continue
        a = fn.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs or not a.args:
            continue
        if NEW_PARAM in _names_in(tree):
            continue
        mine = [c for c in calls if c.func.id == fn.name]
        if any(c.keywords or any(isinstance(x, ast.Starred) for x in c.args) or len(c.args) != len(a.args)
               for c in mine) or len(mine) < 2:
            continue
        sites = []
        for c in sorted(mine, key=lambda c: (c.lineno, c.col_offset)):
            end = off.at(c.end_lineno, c.end_col_offset)
            last = off.at(c.args[-1].end_lineno, c.args[-1].end_col_offset)
            open_paren = text.find("(", off.at(c.func.end_lineno, c.func.end_col_offset))
            if text[end - 1] != ")" or open_paren < 0:
                break
            sites.append((open_paren + 1, end - 1, last))
        else:
            last_param = a.args[-1]
            pend = off.at(last_param.end_lineno, last_param.end_col_offset)
            edits = [(pend, pend, ", " + NEW_PARAM), (sites[0][2], sites[0][2], ", " + NEW_ARG)]
            after = apply_edits(text, edits)
            shift = len(", " + NEW_PARAM) + len(", " + NEW_ARG)
            expected = []
            for s, e, last in sites[1:]:
                if s <= pend:  # a call before the definition: not a case we build
                    break
                inner = text[s:e]
                rel = last - s
                expected.append((s + shift, e + shift, inner[:rel] + ", " + NEW_ARG + inner[rel:]))
            else:
                if expected:
                    cases.append(Case("add_parameter", path, held, text, after, sites[0][2] + shift, expected))
    return cases


def stdlib_files() -> list[tuple[str, bool, Path]]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = []
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        if any(s in rel for s in SKIP_STDLIB):
            continue
        files.append((rel, heldout(f"stdlib/{rel}", HELDOUT_FRACTION), p))
    files.sort(key=lambda f: (not f[1], hashlib.sha256(f[0].encode()).hexdigest()))
    return files


def build_cases(kinds: list[str], per_kind: int) -> list[Case]:
    out: dict[str, list[Case]] = {k: [] for k in kinds}
    for rel, held, path in stdlib_files():
        if all(len(v) >= per_kind for v in out.values()):
            break
        try:
            text = path.read_text(encoding="utf-8")
            if len(text) > MAX_FILE_CHARS or "\r" in text:
                continue
            tree = ast.parse(text)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        off = Offsets(text)
        for kind in kinds:
            if len(out[kind]) >= per_kind:
                continue
            if kind in ("rename_parameter", "rename_local"):
                got = _name_cases(kind, rel, held, text, tree, off)
            elif kind in ("rename_attribute", "rename_method"):
                got = _attr_cases(kind, rel, held, text, tree, off)
            else:
                got = _add_param_cases(rel, held, text, tree, off)
            out[kind].extend(got[:MAX_PER_FILE][: per_kind - len(out[kind])])
    return [c for k in kinds for c in out[k]]
