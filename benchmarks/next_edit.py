"""Next-edit benchmark: after a first edit, are the remaining required edits predicted?

    python -m benchmarks.next_edit [--model DIR] [--cases N] [--kinds rename_parameter,...]
        [--out benchmarks/results/next_edit.json] [--device auto] [--dtype auto] [--threads N]

Cases come from Python standard-library files of this interpreter
(``sysconfig.get_paths()["stdlib"]``): first the files the training corpus held out
(``engine.train.corpus.heldout("stdlib/<relpath>", 0.03)``), then, only if a kind still needs
cases, the other files in sha256(path) order. The ground truth comes from Python's ``ast``
(independent of the tree-sitter analysis under test). Kinds:

* ``rename_parameter`` / ``rename_local`` — a function's parameter / local variable renamed at its
  definition (``x`` -> ``new_x``); required: every other use of it in the function. Names that
  nested scopes (functions, lambdas, classes, comprehensions) mention are skipped.
* ``rename_attribute`` — ``self.a = ...`` renamed at its first assignment; required: every
  ``.a`` in the file (attribute names used in only one class, never as a plain name).
* ``rename_method`` — ``def m(self, ...)`` renamed; required: every ``.m`` in the file.
* ``add_parameter`` — ``extra_flag`` appended to a module-level function's parameters and
  ``None`` to its first call; required: every other call gets ``None`` appended.

Per kind: location recall and precision (a predicted range overlapping a required one counts;
micro-averaged over locations), exact match (the predicted text at a required location is the
required text), "model refill" exact (the model's own refill was the required text: no user text
scored), the share of edits whose text was the user's, scored ("scored"), and latency per case.
Prints a table, writes ``--out``, and ends with one JSON line of headline figures.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import hashlib
import json
import platform
import sys
import sysconfig
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from engine.train.corpus import SKIP_STDLIB, heldout
from mercury_lsp.documents import PositionEncoding
from mercury_lsp.next_edit import DocState, EngineEdits, NextEditQuery, apply_edits, predict
from mercury_lsp.syntax import Grammars

KINDS = ("rename_parameter", "rename_local", "rename_attribute", "rename_method", "add_parameter")
RENAMES = KINDS[:4]
DEFAULT_OUT = Path(__file__).parent / "results" / "next_edit.json"
HELDOUT_FRACTION = 0.03
MAX_PER_FILE = 3  # cases of one kind from one file
MAX_FILE_CHARS = 200_000
NEW_PARAM, NEW_ARG = "extra_flag", "None"
URI = "file:///bench/case.py"


@dataclass
class Case:
    kind: str
    path: str
    heldout: bool
    before: str
    after: str  # with the first edit
    cursor: int
    expected: list[tuple[int, int, str]]  # (start, end, new text) in ``after``


@dataclass
class KindStats:
    cases: int = 0
    required: int = 0
    found: int = 0
    predicted: int = 0
    correct_locations: int = 0
    exact: int = 0
    model_exact: int = 0
    scored: int = 0
    syntax_only: int = 0
    latencies: list[float] = field(default_factory=list)

    def summary(self) -> dict:
        lat = sorted(self.latencies)

        def pct(q: float) -> float | None:
            return round(lat[min(len(lat) - 1, int(len(lat) * q))], 1) if lat else None

        return {
            "cases": self.cases, "required_locations": self.required, "predicted_edits": self.predicted,
            "location_recall": _ratio(self.found, self.required),
            "location_precision": _ratio(self.correct_locations, self.predicted),
            "exact_match": _ratio(self.exact, self.required),
            "model_refill_exact": _ratio(self.model_exact, self.required),
            "scored_share": _ratio(self.scored, self.predicted),
            "unchecked_share": _ratio(self.syntax_only, self.predicted),
            "latency_ms_p50": pct(0.5), "latency_ms_p95": pct(0.95),
        }


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


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


# ---------------------------------------------------------------------------- scoring
def score_case(case: Case, preds, stats: KindStats) -> dict:
    stats.cases += 1
    stats.required += len(case.expected)
    stats.predicted += len(preds)
    stats.scored += sum(1 for p in preds if p.source == "scored")
    stats.syntax_only += sum(1 for p in preds if p.source == "syntax")
    found = exact = model_exact = 0
    for s, e, new in case.expected:
        hits = [p for p in preds if p.start < e and s < p.end or (p.start == p.end == s)]
        if not hits:
            continue
        found += 1
        best = hits[0]
        region = apply_edits(case.after[s:e], [(best.start - s, best.end - s, best.new_text)]) \
            if s <= best.start and best.end <= e else None
        if region == new:
            exact += 1
        if best.model_text.strip() == new.strip() or (
                s <= best.start and best.end <= e and
                apply_edits(case.after[s:e], [(best.start - s, best.end - s, best.model_text)]) == new):
            model_exact += 1
    correct = sum(1 for p in preds if any(p.start < e and s < p.end for s, e, _ in case.expected))
    stats.found += found
    stats.exact += exact
    stats.model_exact += model_exact
    stats.correct_locations += correct
    return {"kind": case.kind, "path": case.path, "heldout": case.heldout, "required": len(case.expected),
            "predicted": len(preds), "found": found, "correct": correct, "exact": exact,
            "model_exact": model_exact}


def format_table(summary: dict[str, dict]) -> str:
    cols = ["cases", "location_recall", "location_precision", "exact_match", "model_refill_exact",
            "scored_share", "unchecked_share", "latency_ms_p50", "latency_ms_p95"]
    head = ["kind", "cases", "recall", "precision", "exact", "model exact", "scored", "unchecked", "p50 ms",
            "p95 ms"]
    rows = [head]
    for kind, s in summary.items():
        rows.append([kind] + ["-" if s[c] is None else (f"{s[c]:.1%}" if isinstance(s[c], float) and c not in (
            "latency_ms_p50", "latency_ms_p95") else str(s[c])) for c in cols])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.next_edit", description=__doc__.split("\n")[0])
    p.add_argument("--model", default=None, help="model directory or hub id (default: the embedded model)")
    p.add_argument("--cases", type=int, default=250, help="total cases, split evenly over the kinds")
    p.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated subset of {','.join(KINDS)}")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--device", default="auto")
    p.add_argument("--dtype", default="auto")
    p.add_argument("--threads", type=int, default=None)
    return p


def run(args: argparse.Namespace) -> int:
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        print(f"error: unknown kind(s) {', '.join(bad) or '(none)'}; choose from {', '.join(KINDS)}", file=sys.stderr)
        return 2
    if args.cases < len(kinds):
        print(f"error: --cases must be at least {len(kinds)}", file=sys.stderr)
        return 2
    from engine import Engine

    t0 = time.perf_counter()
    cases = build_cases(kinds, -(-args.cases // len(kinds)))
    print(f"[next_edit] {len(cases)} cases ({sum(c.heldout for c in cases)} from held-out files) "
          f"in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    engine = Engine.load(args.model, device=args.device, dtype=args.dtype, threads=args.threads)
    model = EngineEdits(engine)
    grammars = Grammars()
    # one untimed warm-up
    warm = cases[0]
    predict(NextEditQuery((DocState(URI, warm.after, "python", None, (warm.before,), 1.0),), URI, warm.cursor),
            model, grammars)
    stats = {k: KindStats() for k in kinds}
    per_case = []
    for i, case in enumerate(cases):
        query = NextEditQuery((DocState(URI, case.after, "python", None, (case.before,), 1.0),), URI,
                              case.cursor, PositionEncoding.UTF16)
        t = time.perf_counter()
        outcome = predict(query, model, grammars)
        stats[case.kind].latencies.append((time.perf_counter() - t) * 1000)
        per_case.append(score_case(case, outcome.predictions, stats[case.kind]))
        if (i + 1) % 25 == 0:
            print(f"[next_edit] {i + 1}/{len(cases)}", file=sys.stderr, flush=True)
    summary = {k: stats[k].summary() for k in kinds}
    renames = KindStats()
    for k in kinds:
        if k in RENAMES:
            s = stats[k]
            for f in ("cases", "required", "found", "predicted", "correct_locations", "exact", "model_exact",
                      "scored", "syntax_only"):
                setattr(renames, f, getattr(renames, f) + getattr(s, f))
            renames.latencies += s.latencies
    if renames.cases:
        summary["all_renames"] = renames.summary()
    result = {
        "benchmark": "next_edit", "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "model": str(engine.path or args.model or "embedded"), "device": str(engine.device),
        "dtype": str(engine.dtype).removeprefix("torch."), "python": platform.python_version(),
        "cases": len(cases), "heldout_cases": sum(c.heldout for c in cases), "kinds": summary,
        "per_case": per_case,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(format_table(summary))
    print(f"\nwrote {args.out}")
    head = {"model": result["model"], "cases": len(cases)}
    for k, s in summary.items():
        head[f"{k}_recall"] = s["location_recall"]
        head[f"{k}_precision"] = s["location_precision"]
        head[f"{k}_exact"] = s["exact_match"]
        head[f"{k}_model_exact"] = s["model_refill_exact"]
    print(json.dumps(head))
    return 0


def main(argv: list[str] | None = None) -> int:
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
