"""HumanEval single-line infilling through the language server: what a user gets, not what the
engine can do.

    python -m benchmarks.humaneval.lsp_pipeline [--arm model_only --arm daemon] [--limit N]
        [--workers 2] [--out benchmarks/results/quality_lsp.json]

``benchmarks.humaneval.quality`` scores the engine's infill directly; this scores the whole
completion pipeline of ``mercury-lsp serve`` (memory, ranker, precision gate, identifier check),
so a default that hides right answers shows here. Per arm (``benchmarks/completion/arms.py``:
``model_only`` is the daemon as it was before the memory, ``daemon`` today's defaults), one
server over an empty workspace folder; per task, the document is the prompt, the missing line's
indentation (as an editor's auto-indent leaves it) and the suffix, opened with ``didOpen``; one
automatic ``textDocument/inlineCompletion`` at the end of the indentation; the first item is
applied and what stands between the prompt and the suffix is the completion the sandbox runs
(nothing shown: the indentation alone, as ``--empty`` scores it). A workspace of prompts has
nothing else to remember, so the memory can only echo the document.

Prints a table, writes the JSON, ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.completion.arms import resolve
from benchmarks.completion.session import REQUEST_TIMEOUT_S, Session, server_argv
from benchmarks.completion.text import apply_item
from benchmarks.humaneval.tasks import exact_match, load_benchmark, pass_at_1, run_tasks, take_subset

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "benchmarks" / "results" / "quality_lsp.json"
DEFAULT_ARMS = ("model_only", "daemon")
DOC = "task.py"  # the one document of the workspace (every task is opened under this name in turn)


def indentation(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


def document(p) -> tuple[str, int, int]:
    """(text, line, character) of a task as the editor holds it: the prompt, the missing line's
    indentation typed, the suffix; the cursor after the indentation."""
    indent = indentation(p.canonical_solution)
    return p.prompt + indent + "\n" + p.suffix, p.prompt.count("\n"), len(indent)


def completion_of(p, item: dict | None, encoding: str) -> tuple[str, bool]:
    """(the text between the prompt and the suffix once ``item`` is applied, whether it changed
    the document); an item that reaches into the prompt or the suffix leaves the line as typed."""
    text, _, character = document(p)
    new = text if item is None else apply_item(text, len(p.prompt) + character, item, encoding)
    ok = new.startswith(p.prompt) and new.endswith(p.suffix) and len(new) >= len(p.prompt) + len(p.suffix)
    typed = text[len(p.prompt):len(text) - len(p.suffix)]
    return (new[len(p.prompt):len(new) - len(p.suffix)] if ok else typed), new != text


def completions(arm_name: str, problems, log_dir: Path | None) -> tuple[list[str], list[float], int]:
    """(completion per problem, latency ms per request, items shown) through one server."""
    arm = resolve([arm_name])[0]
    with tempfile.TemporaryDirectory(prefix="humaneval-lsp-") as tmp:
        ws = Path(tmp)
        (ws / "README.md").write_text("# HumanEval prompts\n")
        session = Session(arm, ws.resolve(), server_argv(None, None, None),
                          None if log_dir is None else log_dir / f"{arm_name}.log")
        out, lat, shown = [], [], 0
        try:
            for p in problems:
                text, line, character = document(p)
                item, ms, _ = session.ask(DOC, text, line, character, REQUEST_TIMEOUT_S)
                lat.append(ms)
                completion, changed = completion_of(p, item, session.encoding)
                out.append(completion)
                shown += changed
        finally:
            session.close()
    return out, lat, shown


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arm", action="append", default=None, metavar="NAME",
                    help=f"arms of benchmarks/completion/arms.py (default: {', '.join(DEFAULT_ARMS)})")
    ap.add_argument("--limit", type=int, default=None, help="a stable subset of N tasks")
    ap.add_argument("--workers", type=int, default=None, help="parallel sandboxes")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--log-dir", type=Path, default=None, help="the servers' stderr")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    problems = take_subset(load_benchmark("single-line", args.data_dir), args.limit)
    rows = []
    load = [os.getloadavg()[0]]
    for name in args.arm or DEFAULT_ARMS:
        t0 = time.monotonic()
        texts, lat, shown = completions(name, problems, args.log_dir)
        outcomes = run_tasks(problems, texts, workers=args.workers)
        passed = [o.task_id for o in outcomes if o.passed]
        rows.append({"arm": name, "tasks": len(problems), "pass@1": round(100 * pass_at_1(outcomes), 2),
                     "passed": len(passed), "exact": round(100 * sum(
                         exact_match(t, p.canonical_solution) for t, p in zip(texts, problems, strict=True))
                                                             / max(1, len(problems)), 2),
                     "shown": round(100 * shown / max(1, len(problems)), 1),
                     "p50_ms": round(percentile(lat, 0.5), 1), "p95_ms": round(percentile(lat, 0.95), 1),
                     "seconds": round(time.monotonic() - t0, 1), "passed_tasks": passed})
        print(f"[lsp_pipeline] {name}: pass@1 {rows[-1]['pass@1']} % ({len(passed)} tasks), shown "
              f"{rows[-1]['shown']} %", file=sys.stderr, flush=True)
    load.append(os.getloadavg()[0])
    head = f"{'arm':<20}{'pass@1':>8}{'passed':>8}{'exact':>8}{'shown':>8}{'p50 ms':>8}{'p95 ms':>8}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['arm']:<20}{r['pass@1']:>7.2f}%{r['passed']:>8}{r['exact']:>7.2f}%{r['shown']:>7.1f}%"
              f"{r['p50_ms']:>8.0f}{r['p95_ms']:>8.0f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"benchmark": "humaneval_single_line_lsp", "load_avg": load,
                                    "cpus": os.cpu_count(), "rows": rows}, indent=1) + "\n")
    print(json.dumps({"humaneval_lsp": {r["arm"]: {"pass@1": r["pass@1"], "shown": r["shown"]} for r in rows}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
