"""Batch-refactor benchmark: ``mercury-lsp refactor propagate`` and ``fill`` on a real project.

    nice -n 10 python -m benchmarks.refactor.batch [--modes syntax,model] [--renames N] [--params N]
        [--signatures N] [--exports N] [--mirrors DIR] [--fill-stubs N] [--model DIR] [--threads N]
        [--out benchmarks/results/refactor.json]

The project is the installed ``click`` package's source in a fresh git repository
(``benchmarks.refactor.cases``). Every command runs as a separate ``mercury-lsp`` process (a
client sharing no code with the tool: arguments in, JSON out) from the project's directory,
each with a time limit (``CASE_TIMEOUT_S``), so a run is bounded.

* **propagate** — one case per follow-up kind of the issue, ground truth from ``ast`` and
  ``tokenize`` (``refactor_cases``, ``refactor_kinds``): functions renamed at their ``def`` (the
  ones used in at least two other modules); required parameters appended (one call updated by
  the first edit), parameters removed and reordered; a parameter renamed; a rename with a
  user's tests and docs in the project; the analogous edit at similar sites. Per mode
  (``syntax`` = ``--no-model``, ``model`` = the model checks the locations) and per kind:
  precision and recall of the predicted locations and texts, files/s and edits/s (whole
  command, start-up and model load included; and in-process, from ``timings.total_ms``).
* **exports** — real repositories in Python, Rust, Go, TypeScript and JavaScript
  (``exports.json``: pinned, built from the fetch tool's mirrors under ``--mirrors``), a
  definition renamed at its definition and every place the export machinery spells its name
  (``benchmarks.refactor.exports``: ``__all__``, re-exports, ``pub use``, ``pkg.Old``, export
  lists, ``module.exports``...), ``--exports`` cases per form: site precision and recall of the
  code edits, the cases left complete, and the recall per export form (edits in comments and
  strings are counted apart, as prose).
* **fill** — function bodies of click replaced by ``...`` (docstrings kept); ``refactor fill``
  completes them: the share of non-empty completions that pass the syntax guard, the share
  kept, stubs/s.

Prints a table, writes ``--out`` and ends with one JSON line of headline figures.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks import REPO
from benchmarks import RESULTS as RESULTS_DIR
from benchmarks.refactor import exports
from benchmarks.refactor.cases import (
    add_parameter_case,
    make_project,
    predicted_sites,
    py_files,
    rename_case,
    reset,
    score,
)
from benchmarks.refactor.kinds import (
    docs_case,
    parameter_rename_case,
    predicted_lines,
    repeat_case,
    signature_case,
)

DEFAULT_OUT = RESULTS_DIR / "refactor.json"
MIN_OTHER_MODULES = 2  # a rename case: the function is used in at least this many other modules
NEW_NAME_SUFFIX = "_renamed"
NEW_PARAM, NEW_ARG = "extra_flag", "None"
REPEAT_TUPLES = ("(tuple, list)", "(bytes, bytearray)")  # isinstance tuples written as unions
CASE_TIMEOUT_S = 900  # one command; a case never takes this long, a hung one ends the run
FILL_NOTE = re.compile(r"(\d+) stub\(s\); (\d+) non-empty fill\(s\), (\d+) passed the syntax guard, (\d+) kept")


def _cli(proj: Path, args: list[str]) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-P", "-m", "mercury_lsp.cli", *args], cwd=proj, capture_output=True,
                         text=True, timeout=CASE_TIMEOUT_S, env={**os.environ, "PYTHONPATH": str(REPO)})
    return out, time.perf_counter() - t0


def _index(proj: Path) -> tuple[dict[str, ast.Module], dict[str, list[tuple[str, ast.Call]]]]:
    """Each module of the project parsed once, and the calls ``name(...)`` by name."""
    trees = {f.relative_to(proj).as_posix(): ast.parse(f.read_text(encoding="utf-8")) for f in py_files(proj)}
    calls: dict[str, list[tuple[str, ast.Call]]] = {}
    for rel, tree in trees.items():
        for c in ast.walk(tree):
            if isinstance(c, ast.Call) and isinstance(c.func, ast.Name):
                calls.setdefault(c.func.id, []).append((rel, c))
    return trees, calls


def rename_targets(proj: Path, limit: int) -> list[tuple[str, str]]:
    trees, _ = _index(proj)
    defs: dict[str, list[str]] = {}
    imported: dict[str, set[str]] = {}
    for rel, tree in trees.items():
        for n in tree.body:
            if isinstance(n, ast.FunctionDef) and not n.decorator_list:
                defs.setdefault(n.name, []).append(rel)
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom):
                for a in n.names:
                    imported.setdefault(a.name, set()).add(rel)
    out = []
    for name, where in sorted(defs.items()):
        if len(where) != 1 or name.startswith("__"):
            continue
        users = imported.get(name, set()) - {where[0]}
        text = (proj / where[0]).read_text(encoding="utf-8")
        if len(users) >= MIN_OTHER_MODULES and text.count(f"\ndef {name}(") == 1:
            out.append((where[0], name))
    return out[:limit]


def _plain_functions(trees: dict[str, ast.Module], min_params: int):
    """(module, def) of undecorated module-level functions with only plain parameters."""
    for rel, tree in trees.items():
        for n in tree.body:
            if not isinstance(n, ast.FunctionDef) or n.decorator_list:
                continue
            a = n.args
            if len(a.args) >= min_params and not (a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs):
                yield rel, n


def param_targets(proj: Path, limit: int) -> list[tuple[str, str]]:
    trees, calls = _index(proj)
    out = []
    for rel, n in _plain_functions(trees, 1):
        k = len(n.args.args)
        full = [r for r, c in calls.get(n.name, []) if len(c.args) == k and not c.keywords]
        if len(full) >= 3 and rel in full:
            out.append((rel, n.name))
    return sorted(out)[:limit]


def signature_targets(proj: Path, limit: int) -> list[tuple[str, str, int]]:
    """Functions with at least two plain parameters, called with all of them positionally at
    least twice: (module, name, parameter count)."""
    trees, calls = _index(proj)
    out = []
    for rel, n in _plain_functions(trees, 2):
        k = len(n.args.args)
        if sum(1 for _, c in calls.get(n.name, []) if len(c.args) == k and not c.keywords) >= 2:
            out.append((rel, n.name, k))
    return sorted(out)[:limit]


def build_cases(proj: Path, renames: int, params: int, signatures: int) -> list[tuple[str, str, Callable]]:
    """(kind, label, make) per case; ``make(project)`` makes the first edit and returns
    (expected, scored per "site" or per "line")."""
    def site(case):
        return case.expected, "site"

    cases: list[tuple[str, str, Callable]] = []
    for m, n in rename_targets(proj, renames):
        cases.append(("rename", f"{m}:{n}", lambda p, m=m, n=n: site(rename_case(p, m, n, n + NEW_NAME_SUFFIX))))
    for m, n in param_targets(proj, params):
        cases.append(("add_parameter", f"{m}:{n}",
                      lambda p, m=m, n=n: site(add_parameter_case(p, m, n, NEW_PARAM, NEW_ARG))))
    for m, n, k in signature_targets(proj, signatures):
        cases.append(("remove_parameter", f"{m}:{n}", lambda p, m=m, n=n, k=k: site(
            signature_case(p, m, n, list(range(k - 1))))))
        cases.append(("reorder_parameters", f"{m}:{n}", lambda p, m=m, n=n, k=k: site(
            signature_case(p, m, n, list(range(k))[::-1]))))
    cases.append(("rename_parameter", "click/utils.py:echo(nl)", lambda p: (
        parameter_rename_case(p, "click/utils.py", "echo", "nl", "new_line")[1], "line")))
    cases.append(("docs", "click/utils.py:echo + tests, docs, README", lambda p: (docs_case(p)[1], "line")))
    for elts in REPEAT_TUPLES:
        cases.append(("repeat", f"isinstance(_, {elts})", lambda p, elts=elts: (repeat_case(p, elts)[1], "line")))
    return cases


def _totals(rows: list[dict]) -> dict:
    t = {k: sum(r[k] for r in rows) for k in ("correct", "predicted", "expected", "edits", "files")}
    forms: dict[str, list[int]] = {}
    for r in rows:
        for form, (c, e) in r.get("forms", {}).items():
            forms.setdefault(form, [0, 0])
            forms[form][0] += c
            forms[form][1] += e
    extra = {"complete": sum(1 for r in rows if r.get("complete")), "prose_edits": sum(r.get("prose_edits", 0) for r in rows),
             "forms": {f: {"recall": c / max(1, e), "correct": c, "expected": e} for f, (c, e) in forms.items()}} \
        if forms else {}
    wall = sum(r["wall_s"] for r in rows)
    inproc = sum(r["in_process_s"] for r in rows)
    return {"cases": len(rows), "precision": t["correct"] / max(1, t["predicted"]),
            "recall": t["correct"] / max(1, t["expected"]),
            "files_per_s": t["files"] / max(1e-9, wall), "edits_per_s": t["edits"] / max(1e-9, wall),
            "files_per_s_in_process": t["files"] / max(1e-9, inproc),
            "edits_per_s_in_process": t["edits"] / max(1e-9, inproc),
            "expected_edits": t["expected"], "predicted_edits": t["predicted"], **extra}


def export_cases(root: Path, per_form: int, mirrors: Path) -> list[tuple[exports.Target, Path, str]]:
    """(target, its project, its repository) for every export case (``exports.choose``)."""
    out = []
    for repo in exports.repos() if per_form > 0 else ():
        proj = exports.checkout(repo, root / "exports", mirrors)
        out += [(t, proj, repo.name) for t in exports.choose(exports.targets(proj, repo.language), per_form)]
    return out


def run_exports(cases: list[tuple[exports.Target, Path, str]], flags: list[str], mode: str) -> list[dict]:
    per_case = []
    for t, proj, repo in cases:
        reset(proj)
        exports.rename(proj, t)
        out, wall = _cli(proj, ["refactor", "propagate", "--git", "--format", "json", *flags])
        if out.returncode != 0:
            raise RuntimeError(f"exports {repo} {t.name}: exit {out.returncode}: {out.stderr.strip()[-300:]}")
        result = json.loads(out.stdout)
        got = exports.score(t, predicted_sites(result, proj), proj)
        reset(proj)
        label = f"{repo}:{t.file}:{t.name}"
        per_case.append({"kind": "exports", "case": label, "language": t.language, "scored_per": "site",
                         **got, "edits": len(result["edits"]), "notes": len(result.get("notes", [])),
                         "files": len(exports.source_files(proj, t.language)), "wall_s": round(wall, 3),
                         "in_process_s": round(result["timings"]["total_ms"] / 1000, 3)})
        print(f"  {mode:6} {'exports':18} {label[-45:]:45} {got['correct']:>3}/{got['predicted']:<3} of "
              f"{got['expected']:<3} {wall:6.1f} s", file=sys.stderr)
    return per_case


def run_propagate(root: Path, modes: list[str], model_args: list[str], renames: int, params: int,
                  signatures: int, per_form: int = 0, mirrors: Path = exports.DEFAULT_MIRRORS) -> dict:
    proj = make_project(root / "proj")
    cases = build_cases(proj, renames, params, signatures)
    exported = export_cases(root, per_form, mirrors)
    rows = {}
    for mode in modes:
        flags = ["--no-model"] if mode == "syntax" else model_args
        per_case = []
        for n, (kind, label, make) in enumerate(cases):
            # each case on a fresh copy: the docs case commits the user's tests and docs
            here = proj if kind != "docs" else make_project(root / f"{mode}-{n}")
            reset(here)
            expected, unit = make(here)
            out, wall = _cli(here, ["refactor", "propagate", "--git", "--format", "json", *flags])
            if out.returncode != 0:
                raise RuntimeError(f"{kind} {label}: exit {out.returncode}: {out.stderr.strip()[-300:]}")
            result = json.loads(out.stdout)
            if unit == "site":
                c, p, e = score(expected, predicted_sites(result, here))
            else:
                got = predicted_lines(result, here)
                c, p, e = sum(1 for k, v in got.items() if expected.get(k) == v), len(got), len(expected)
            files = len(subprocess.run(["git", "-C", str(here), "ls-files"], capture_output=True, text=True,
                                       check=True).stdout.split())
            per_case.append({"kind": kind, "case": label, "scored_per": unit, "correct": c, "predicted": p,
                             "expected": e, "edits": len(result["edits"]), "files": files,
                             "wall_s": round(wall, 3), "in_process_s": round(result["timings"]["total_ms"] / 1000, 3)})
            print(f"  {mode:6} {kind:18} {label:45} {c:>3}/{p:<3} of {e:<3} {wall:6.1f} s", file=sys.stderr)
        reset(proj)
        per_case += run_exports(exported, flags, mode)
        kinds = {k: _totals([r for r in per_case if r["kind"] == k]) for k in dict.fromkeys(r["kind"] for r in per_case)}
        rows[mode] = {**_totals(per_case), "kinds": kinds, "per_case": per_case}
    return rows


def make_stubs(proj: Path, limit: int) -> int:
    """Replace the bodies of up to ``limit`` plain functions (spread over the modules) by ``...``."""
    made = 0
    files = py_files(proj)
    per_file = max(1, -(-limit // len(files)))
    for f in files:
        text = f.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        targets = []
        for n in ast.walk(ast.parse(text)):
            if not isinstance(n, ast.FunctionDef) or n.decorator_list or n.body[0].lineno == n.lineno:
                continue
            body = n.body[1:] if isinstance(n.body[0], ast.Expr) and isinstance(
                getattr(n.body[0], "value", None), ast.Constant) and isinstance(n.body[0].value.value, str) else n.body
            if not body or any(isinstance(x, ast.FunctionDef | ast.ClassDef) for x in body):
                continue
            targets.append((body[0].lineno, body[-1].end_lineno, body[0].col_offset))
        targets = sorted(targets)[:per_file]
        for start, end, col in sorted(targets, reverse=True):
            if made >= limit:
                break
            lines[start - 1:end] = [" " * col + "...\n"]
            made += 1
        f.write_text("".join(lines), encoding="utf-8")
    return made


def run_fill(proj: Path, model_args: list[str], stubs: int) -> dict:
    reset(proj)
    made = make_stubs(proj, stubs)
    out, wall = _cli(proj, ["refactor", "fill", "click", "--format", "json", *model_args])
    reset(proj)
    if out.returncode != 0:
        raise RuntimeError(f"fill: exit {out.returncode}: {out.stderr.strip()[-300:]}")
    m = FILL_NOTE.search(out.stderr)
    assert m is not None, out.stderr
    found, nonempty, passed, kept = map(int, m.groups())
    edits = json.loads(out.stdout)["edits"]
    return {"stubs_made": made, "stubs_found": found, "non_empty": nonempty, "passed_guard": passed, "kept": kept,
            "guard_pass_share": passed / max(1, nonempty), "edits": len(edits),
            "stubs_per_s": found / max(1e-9, wall), "wall_s": round(wall, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modes", default="syntax,model")
    ap.add_argument("--renames", type=int, default=6)
    ap.add_argument("--params", type=int, default=3)
    ap.add_argument("--signatures", type=int, default=2, help="functions whose parameter is removed / reordered")
    ap.add_argument("--exports", type=int, default=2,
                    help="export-machinery cases per export form and repository (0: none; needs the mirrors)")
    ap.add_argument("--mirrors", type=Path, default=exports.DEFAULT_MIRRORS, help="where the fetch tool's mirrors are")
    ap.add_argument("--fill-stubs", type=int, default=24)
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    model_args = (["--model", args.model] if args.model else []) + (
        ["--threads", str(args.threads)] if args.threads else [])
    modes = [m for m in args.modes.split(",") if m]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        prop = run_propagate(Path(tmp), modes, model_args, args.renames, args.params, args.signatures,
                             args.exports, args.mirrors)
        fill = run_fill(make_project(Path(tmp) / "fill"), model_args, args.fill_stubs) if args.fill_stubs > 0 else None
        total = time.perf_counter() - t0
    print(f"{'mode':8} {'cases':>5} {'precision':>9} {'recall':>7} {'files/s':>8} {'edits/s':>8} "
          f"{'files/s (in-proc)':>17} {'edits/s (in-proc)':>17}")
    for mode, r in prop.items():
        print(f"{mode:8} {r['cases']:>5} {r['precision']:>9.1%} {r['recall']:>7.1%} {r['files_per_s']:>8.1f} "
              f"{r['edits_per_s']:>8.1f} {r['files_per_s_in_process']:>17.1f} {r['edits_per_s_in_process']:>17.1f}")
        for kind, k in r["kinds"].items():
            print(f"  {kind:18} {k['cases']:>3} case(s)  precision {k['precision']:6.1%}  recall {k['recall']:6.1%}  "
                  f"({k['predicted_edits']} predicted, {k['expected_edits']} expected)")
            if "forms" in k:
                print(f"    {k['complete']} of {k['cases']} case(s) complete; {k['prose_edits']} edit(s) in prose")
                for form in exports.FORM_ORDER:
                    if form in k["forms"]:
                        f = k["forms"][form]
                        print(f"    {form:28} recall {f['recall']:6.1%}  ({f['correct']} of {f['expected']} sites)")
    if fill is not None:
        print(f"fill: {fill['stubs_found']} stubs, {fill['non_empty']} non-empty completions, "
              f"{fill['passed_guard']} passed the syntax guard ({fill['guard_pass_share']:.1%}), "
              f"{fill['kept']} kept; {fill['stubs_per_s']:.2f} stubs/s")
    doc = {"benchmark": "refactor", "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
           "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
           "command": "python -m benchmarks.refactor.batch " + " ".join(argv if argv is not None else sys.argv[1:]),
           "project": "click (installed package source), git repository; exports: benchmarks/refactor/exports.json",
           "propagate": prop, "fill": fill,
           "seconds": round(total, 1)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    head = {"benchmark": "refactor"}
    for mode, r in prop.items():
        head |= {f"{mode}_precision": round(r["precision"], 4), f"{mode}_recall": round(r["recall"], 4),
                 f"{mode}_files_per_s": round(r["files_per_s"], 2), f"{mode}_edits_per_s": round(r["edits_per_s"], 2)}
        if "exports" in r["kinds"]:
            k = r["kinds"]["exports"]
            head |= {f"{mode}_exports_precision": round(k["precision"], 4), f"{mode}_exports_recall": round(k["recall"], 4),
                     f"{mode}_exports_complete": k["complete"], f"{mode}_exports_cases": k["cases"]}
    if fill is not None:
        head |= {"fill_guard_pass_share": round(fill["guard_pass_share"], 4), "fill_kept": fill["kept"]}
    print(json.dumps(head))
    return 0


if __name__ == "__main__":
    sys.exit(main())
