"""Batch-refactor benchmark: ``mercury-lsp refactor propagate`` and ``fill`` on a real project.

    python -m benchmarks.refactor [--modes syntax,model] [--renames N] [--params N] [--fill-stubs N]
        [--model DIR] [--threads N] [--out benchmarks/results/refactor.json]

The project is the installed ``click`` package's source in a fresh git repository
(``benchmarks.refactor_cases``). Every command runs as a separate ``mercury-lsp`` process (a
client sharing no code with the tool: arguments in, JSON out) from the project's directory.

* **propagate** — cases: module-level functions of click renamed at their ``def`` (the ones used
  in at least two other modules), and required parameters appended to functions whose calls
  pass positional arguments (one call updated by the first edit). Ground truth from ``ast``.
  Per mode (``syntax`` = ``--no-model``, ``model`` = the model checks the locations):
  precision and recall of (location, text), files/s and edits/s (whole command, start-up and
  model load included; and in-process, from the result's ``timings.total_ms``).
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
from pathlib import Path

from benchmarks.refactor_cases import (
    add_parameter_case,
    make_project,
    predicted_sites,
    py_files,
    rename_case,
    reset,
    score,
)

DEFAULT_OUT = Path(__file__).parent / "results" / "refactor.json"
MIN_OTHER_MODULES = 2  # a rename case: the function is used in at least this many other modules
NEW_NAME_SUFFIX = "_renamed"
NEW_PARAM, NEW_ARG = "extra_flag", "None"
FILL_NOTE = re.compile(r"(\d+) stub\(s\); (\d+) non-empty fill\(s\), (\d+) passed the syntax guard, (\d+) kept")


def _cli(proj: Path, args: list[str]) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-P", "-m", "mercury_lsp.cli", *args], cwd=proj, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
    return out, time.perf_counter() - t0


def rename_targets(proj: Path, limit: int) -> list[tuple[str, str]]:
    texts = {f.relative_to(proj).as_posix(): f.read_text(encoding="utf-8") for f in py_files(proj)}
    defs: dict[str, list[str]] = {}
    for rel, text in texts.items():
        for n in ast.parse(text).body:
            if isinstance(n, ast.FunctionDef) and not n.decorator_list:
                defs.setdefault(n.name, []).append(rel)
    out = []
    for name, where in sorted(defs.items()):
        if len(where) != 1 or name.startswith("__"):
            continue
        users = [r for r, t in texts.items() if r != where[0]
                 and any(isinstance(n, ast.ImportFrom) and any(a.name == name for a in n.names)
                         for n in ast.walk(ast.parse(t)))]
        if len(users) >= MIN_OTHER_MODULES and texts[where[0]].count(f"\ndef {name}(") == 1:
            out.append((where[0], name))
    return out[:limit]


def param_targets(proj: Path, limit: int) -> list[tuple[str, str]]:
    out = []
    texts = {f.relative_to(proj).as_posix(): f.read_text(encoding="utf-8") for f in py_files(proj)}
    for rel, text in texts.items():
        for n in ast.parse(text).body:
            if not isinstance(n, ast.FunctionDef) or n.decorator_list or not n.args.args:
                continue
            a = n.args
            if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
                continue
            k = len(a.args)
            calls = [(r, c) for r, t in texts.items() for c in ast.walk(ast.parse(t)) if isinstance(c, ast.Call)
                     and isinstance(c.func, ast.Name) and c.func.id == n.name and len(c.args) == k and not c.keywords]
            if len(calls) >= 3 and any(r == rel for r, _ in calls):
                out.append((rel, n.name))
    return sorted(out)[:limit]


def run_propagate(proj: Path, modes: list[str], model_args: list[str], renames: int, params: int) -> dict:
    cases = [("rename", m, n) for m, n in rename_targets(proj, renames)]
    cases += [("add_parameter", m, n) for m, n in param_targets(proj, params)]
    nfiles = len(py_files(proj))
    rows = {}
    for mode in modes:
        flags = ["--no-model"] if mode == "syntax" else model_args
        tot = {"correct": 0, "predicted": 0, "expected": 0, "wall_s": 0.0, "inproc_s": 0.0, "files": 0, "edits": 0}
        per_case = []
        for kind, module, name in cases:
            reset(proj)
            case = (rename_case(proj, module, name, name + NEW_NAME_SUFFIX) if kind == "rename"
                    else add_parameter_case(proj, module, name, NEW_PARAM, NEW_ARG))
            out, wall = _cli(proj, ["refactor", "propagate", "--git", "--format", "json", *flags])
            if out.returncode != 0:
                raise RuntimeError(f"{kind} {module}:{name}: exit {out.returncode}: {out.stderr.strip()[-300:]}")
            result = json.loads(out.stdout)
            got = predicted_sites(result, proj)
            c, p, e = score(case.expected, got)
            inproc = result["timings"]["total_ms"] / 1000
            per_case.append({"kind": kind, "module": module, "name": name, "correct": c, "predicted": p,
                             "expected": e, "wall_s": round(wall, 3), "in_process_s": round(inproc, 3)})
            for k, v in (("correct", c), ("predicted", p), ("expected", e), ("wall_s", wall),
                         ("inproc_s", inproc), ("files", nfiles), ("edits", p)):
                tot[k] += v
        reset(proj)
        rows[mode] = {
            "cases": len(cases),
            "precision": tot["correct"] / max(1, tot["predicted"]),
            "recall": tot["correct"] / max(1, tot["expected"]),
            "files_per_s": tot["files"] / max(1e-9, tot["wall_s"]),
            "edits_per_s": tot["edits"] / max(1e-9, tot["wall_s"]),
            "files_per_s_in_process": tot["files"] / max(1e-9, tot["inproc_s"]),
            "edits_per_s_in_process": tot["edits"] / max(1e-9, tot["inproc_s"]),
            "expected_edits": tot["expected"], "predicted_edits": tot["predicted"],
            "per_case": per_case,
        }
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
    ap.add_argument("--renames", type=int, default=8)
    ap.add_argument("--params", type=int, default=4)
    ap.add_argument("--fill-stubs", type=int, default=32)
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    model_args = (["--model", args.model] if args.model else []) + (
        ["--threads", str(args.threads)] if args.threads else [])
    modes = [m for m in args.modes.split(",") if m]
    with tempfile.TemporaryDirectory() as tmp:
        proj = make_project(Path(tmp) / "proj")
        t0 = time.perf_counter()
        prop = run_propagate(proj, modes, model_args, args.renames, args.params)
        fill = run_fill(proj, model_args, args.fill_stubs) if args.fill_stubs > 0 else None
        total = time.perf_counter() - t0
    print(f"{'mode':8} {'cases':>5} {'precision':>9} {'recall':>7} {'files/s':>8} {'edits/s':>8} "
          f"{'files/s (in-proc)':>17} {'edits/s (in-proc)':>17}")
    for mode, r in prop.items():
        print(f"{mode:8} {r['cases']:>5} {r['precision']:>9.1%} {r['recall']:>7.1%} {r['files_per_s']:>8.1f} "
              f"{r['edits_per_s']:>8.1f} {r['files_per_s_in_process']:>17.1f} {r['edits_per_s_in_process']:>17.1f}")
    if fill is not None:
        print(f"fill: {fill['stubs_found']} stubs, {fill['non_empty']} non-empty completions, "
              f"{fill['passed_guard']} passed the syntax guard ({fill['guard_pass_share']:.1%}), "
              f"{fill['kept']} kept; {fill['stubs_per_s']:.2f} stubs/s")
    doc = {"benchmark": "refactor", "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
           "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
           "command": "python -m benchmarks.refactor " + " ".join(argv if argv is not None else sys.argv[1:]),
           "project": "click (installed package source), git repository", "propagate": prop, "fill": fill,
           "seconds": round(total, 1)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    head = {"benchmark": "refactor"}
    for mode, r in prop.items():
        head |= {f"{mode}_precision": round(r["precision"], 4), f"{mode}_recall": round(r["recall"], 4),
                 f"{mode}_files_per_s": round(r["files_per_s"], 2), f"{mode}_edits_per_s": round(r["edits_per_s"], 2)}
    if fill is not None:
        head |= {"fill_guard_pass_share": round(fill["guard_pass_share"], 4), "fill_kept": fill["kept"]}
    print(json.dumps(head))
    return 0


if __name__ == "__main__":
    sys.exit(main())
