"""The engine at two revisions, side by side in one run: latency, forwards and what it writes.

    nice -n 10 python -m benchmarks.engine.ab [--base main] [--tasks 200] [--threads 1]
        [--max-tokens 32] [--out benchmarks/results/engine_ab.json]

The request is the language server's line completion through the engine's product path:
``mercury_engine.infill(prompt, suffix, max_tokens, InfillOptions(single_line=True))`` (fast sampler,
balanced preset, the embedded model or ``--model`` as ``Engine.load`` loads it) on HumanEval single-line
tasks (``--tasks`` evenly spaced over the file).

``--base`` (a git revision) is exported with ``git archive`` into a temporary directory; the
other arm is this working tree. Each arm is a worker process of its own — the same Python, its
own tree first on ``sys.path`` — that loads the engine once, warms up, then answers one task at
a time. The driver alternates the arms task by task (A B, then B A), so both see the same
machine load: on a shared machine absolute times drift, their ratio does not.

Reported per arm: p50/p95/mean of the ``infill`` wall time and mean forwards per request; then
HumanEval pass@1, exact match and edit similarity to the canonical line
(``benchmarks.engine.context_reuse``) of both arms' completions (executed in the sandbox of
``benchmarks.humaneval.tasks``) and the share of tasks where both wrote the same text. Prints a table,
writes JSON and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]
RESULTS = REPO / "benchmarks" / "results" / "engine_ab.json"
WARMUP = 3  # untimed requests per worker before the first timed one (lazy init, allocator)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


# ---------------------------------------------------------------------------- worker
def worker(tree: str, threads: int, max_tokens: int, model: str | None) -> None:
    """Answer JSON lines ``{"prefix", "suffix"}`` on stdin with ``{"ms", "text", "forwards"}``."""
    import torch

    torch.set_num_threads(threads)
    sys.path.insert(0, str(REPO))
    from benchmarks.common.checkouts import import_engine

    engine, options = import_engine(tree)
    eng = engine.Engine.load(model)
    opts = options.InfillOptions(single_line=True)
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing but replies on the pipe
    print(json.dumps({"ready": True}), file=out, flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        t0 = time.perf_counter()
        r = eng.infill(req["prefix"], req["suffix"], max_tokens, opts)
        ms = (time.perf_counter() - t0) * 1000
        print(json.dumps({"ms": ms, "text": r.text, "forwards": r.forwards}), file=out, flush=True)
    eng.close()


class Arm:
    def __init__(self, name: str, tree: Path, args: argparse.Namespace) -> None:
        self.name, self.tree = name, tree
        env = {**os.environ, "PYTHONPATH": str(tree)}
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE), "--worker", str(tree), "--threads", str(args.threads),
             "--max-tokens", str(args.max_tokens)] + (["--model", str(args.model)] if args.model else []),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=tree)
        self.ms: list[float] = []
        self.forwards: list[int] = []
        self.texts: list[str] = []

    def ask(self, prefix: str, suffix: str) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"prefix": prefix, "suffix": suffix}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"arm {self.name}: worker exited (rc {self.proc.wait()})")
        return json.loads(line)

    def ready(self) -> None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line or not json.loads(line).get("ready"):
            raise RuntimeError(f"arm {self.name}: worker failed to start (rc {self.proc.wait()})")

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def export(rev: str, into: Path) -> Path:
    """``git archive rev`` of this repository, unpacked into ``into``."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


# ---------------------------------------------------------------------------- driver
def run(args: argparse.Namespace) -> dict:
    from benchmarks.engine.context_reuse import edit_similarity
    from benchmarks.humaneval import tasks as humaneval

    problems = humaneval.take_subset(humaneval.load_benchmark("single-line"), args.tasks)
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.base], check=True,
                         capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="engine_ab_") as tmp:
        arms = [Arm(f"base {sha}", export(args.base, Path(tmp)), args), Arm("head (this tree)", REPO, args)]
        try:
            for arm in arms:
                arm.ready()
            for arm in arms:
                for p in problems[:WARMUP]:
                    arm.ask(p.prompt, p.suffix)
            for i, p in enumerate(problems):
                for arm in (arms if i % 2 == 0 else arms[::-1]):
                    r = arm.ask(p.prompt, p.suffix)
                    arm.ms.append(r["ms"])
                    arm.forwards.append(r["forwards"])
                    arm.texts.append(r["text"])
                if (i + 1) % 50 == 0:
                    print(f"[engine_ab] {i + 1}/{len(problems)}", file=sys.stderr, flush=True)
        finally:
            for arm in arms:
                arm.close()
    rows = []
    for arm in arms:
        outcomes = humaneval.run_tasks(problems, arm.texts, workers=args.workers)
        exact = sum(humaneval.exact_match(t, p.canonical_solution) for t, p in zip(arm.texts, problems, strict=True))
        rows.append({"arm": arm.name, "requests": len(arm.ms), "p50_ms": round(statistics.median(arm.ms), 1),
                     "p95_ms": round(percentile(arm.ms, 0.95), 1), "mean_ms": round(statistics.mean(arm.ms), 1),
                     "mean_forwards": round(statistics.mean(arm.forwards), 2),
                     "pass@1": round(humaneval.pass_at_1(outcomes), 4), "exact_match": round(exact / len(problems), 4),
                     "edit_sim": round(statistics.mean(edit_similarity(t, p.canonical_solution)
                                                       for t, p in zip(arm.texts, problems, strict=True)), 4)})
    same = sum(a == b for a, b in zip(arms[0].texts, arms[1].texts, strict=True)) / len(problems)
    ratio = [h / b for b, h in zip(arms[0].ms, arms[1].ms, strict=True)]
    return {"base": args.base, "base_sha": sha, "model": args.model or "embedded", "tasks": len(problems), "threads": args.threads,
            "max_tokens": args.max_tokens, "loadavg_1m": round(os.getloadavg()[0], 2), "nproc": os.cpu_count(),
            "arms": rows, "same_text": round(same, 4), "head_over_base_median_ratio": round(statistics.median(ratio), 3)}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.engine.ab", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=None, help="model directory for both arms (default: each tree's embedded model)")
    p.add_argument("--base", default="main", help="git revision of the other arm (default: main)")
    p.add_argument("--tasks", type=int, default=200, help="HumanEval single-line tasks (evenly spaced)")
    p.add_argument("--threads", type=int, default=1, help="torch threads per worker (one core each: less noise)")
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--workers", type=int, default=None, help="sandbox processes for scoring")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.worker:
        worker(args.worker, args.threads, args.max_tokens, args.model)
        return 0
    result = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"mercury_engine.infill, single line, {result['tasks']} HumanEval tasks, {result['threads']} thread(s), "
          f"arms interleaved (load {result['loadavg_1m']} on {result['nproc']} cores)")
    print(f"  {'arm':<20}{'p50 ms':>9}{'p95 ms':>9}{'mean ms':>9}{'fwd/req':>9}{'pass@1':>9}{'exact':>9}{'edit sim':>9}")
    for a in result["arms"]:
        print(f"  {a['arm']:<20}{a['p50_ms']:>9}{a['p95_ms']:>9}{a['mean_ms']:>9}{a['mean_forwards']:>9}"
              f"{a['pass@1'] * 100:>8.1f}%{a['exact_match'] * 100:>8.1f}%{a['edit_sim'] * 100:>8.1f}%")
    print(f"  same text in both arms: {result['same_text'] * 100:.1f}%; head/base latency, median of per-task "
          f"ratios: {result['head_over_base_median_ratio']}")
    base, head = result["arms"]
    print(json.dumps({"base_p50_ms": base["p50_ms"], "head_p50_ms": head["p50_ms"], "base_p95_ms": base["p95_ms"],
                      "head_p95_ms": head["p95_ms"], "ratio": result["head_over_base_median_ratio"],
                      "base_pass@1": base["pass@1"], "head_pass@1": head["pass@1"], "base_edit_sim": base["edit_sim"],
                      "head_edit_sim": head["edit_sim"], "same_text": result["same_text"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
