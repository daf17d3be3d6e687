"""Where one engine-only line completion's time goes, forward by forward.

    nice -n 10 python -m benchmarks.engine.profile [--tasks 100] [--base REV]
        [--out benchmarks/results/engine_profile.json]

The request is ``benchmarks.engine.ab``'s: ``mercury_engine.infill(prompt, suffix, 32,
InfillOptions(single_line=True))`` on HumanEval single-line tasks (``--tasks`` evenly spaced),
the embedded model (or ``--model``) as ``Engine.load`` loads it, one torch thread. Every ``forward_hidden`` call
is timed with its shape: the positions it runs, the cached context positions it attends to, and
the rows its last layer keeps; the LM head is timed apart. Reported per request: total,
tokenize, each forward by its index in the request (a full step runs the canvas; a block step a
block's rows on cached context), the LM heads, and the rest (commit rule, bookkeeping).

``--base REV`` profiles that revision instead (exported with ``git archive``, its engine first
on ``sys.path``), so two revisions are profiled by the same code. Prints a table, writes JSON
and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from benchmarks import REPO

RESULTS = REPO / "benchmarks" / "results" / "engine_profile.json"
WARMUP = 3


def profile(tree: Path, tasks: int, max_tokens: int, model_dir: str | None = None) -> dict:
    import torch

    torch.set_num_threads(1)
    from benchmarks.common.checkouts import import_engine
    from benchmarks.humaneval import tasks as humaneval

    engine, options = import_engine(tree)
    Engine, InfillOptions = engine.Engine, options.InfillOptions
    eng = Engine.load(model_dir)
    opts = InfillOptions(single_line=True)
    model = eng.model
    forwards: list[tuple[int, int, int, float]] = []  # (positions, context positions, rows, ms)
    heads: list[float] = []
    forward_hidden, lm_head = model.forward_hidden, model.lm_head.forward

    def timed_forward(idx, pos=None, key_mask=None, ctx_kv=None, ctx_key_mask=None, return_kv=False, rows=None,
                      lengths=None):
        t0 = time.perf_counter()
        out = forward_hidden(idx, pos, key_mask, ctx_kv, ctx_key_mask, return_kv, rows, lengths)
        forwards.append((int(idx.shape[1]), 0 if ctx_kv is None else int(ctx_kv[0][0].shape[2]),
                         int(idx.shape[1] if rows is None else rows.shape[1]), (time.perf_counter() - t0) * 1000))
        return out

    def timed_head(x):
        t0 = time.perf_counter()
        out = lm_head(x)
        heads.append((time.perf_counter() - t0) * 1000)
        return out

    model.forward_hidden, model.lm_head.forward = timed_forward, timed_head
    problems = humaneval.take_subset(humaneval.load_benchmark("single-line"), tasks)
    for p in problems[:WARMUP]:
        eng.infill(p.prompt, p.suffix, max_tokens, opts)
    total, tokenize, head, count = [], [], [], []
    by_index: dict[int, list[tuple[int, int, int, float]]] = defaultdict(list)
    for p in problems:
        forwards.clear()
        heads.clear()
        t0 = time.perf_counter()
        r = eng.infill(p.prompt, p.suffix, max_tokens, opts)
        total.append((time.perf_counter() - t0) * 1000)
        tokenize.append(r.timings["tokenize_ms"])
        head.append(sum(heads))
        count.append(len(forwards))
        for i, f in enumerate(forwards):
            by_index[i].append(f)
    eng.close()
    mean = statistics.mean
    rows = [{"forward": i, "requests": len(fs), "positions": round(mean(f[0] for f in fs), 1),
             "context": round(mean(f[1] for f in fs), 1), "last_layer_rows": round(mean(f[2] for f in fs), 1),
             "ms": round(mean(f[3] for f in fs), 2)} for i, fs in sorted(by_index.items())]
    forward_ms = sum(r["ms"] * r["requests"] for r in rows) / len(problems)
    return {"tasks": len(problems), "p50_ms": round(statistics.median(total), 1), "mean_ms": round(mean(total), 1),
            "tokenize_ms": round(mean(tokenize), 2), "forward_ms": round(forward_ms, 1),
            "lm_head_ms": round(mean(head), 2),
            "rest_ms": round(mean(total) - forward_ms - mean(head) - mean(tokenize), 1),
            "forwards_per_request": round(mean(count), 2), "forwards": rows}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.engine.profile", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=None, help="model directory (default: the embedded model)")
    p.add_argument("--tasks", type=int, default=100, help="HumanEval single-line tasks (evenly spaced)")
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--base", default=None, help="profile this git revision instead of the working tree")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="engine_profile_") as tmp:
        tree = REPO
        if args.base:
            from benchmarks.engine.ab import export

            tree = export(args.base, Path(tmp))
        rev = args.base or "working tree"
        result = {"revision": rev, "loadavg_1m": round(os.getloadavg()[0], 2), "nproc": os.cpu_count(),
                  **profile(tree, args.tasks, args.max_tokens, args.model)}
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.base or "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    result["sha"] = sha + ("" if args.base else "+tree")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"mercury_engine.infill, single line, {result['tasks']} HumanEval tasks, one thread, {rev} "
          f"(load {result['loadavg_1m']} on {result['nproc']} cores)")
    print(f"  total p50 / mean {result['p50_ms']} / {result['mean_ms']} ms; tokenize {result['tokenize_ms']}, "
          f"forwards {result['forward_ms']}, LM heads {result['lm_head_ms']}, rest {result['rest_ms']} ms; "
          f"{result['forwards_per_request']} forwards per request")
    print(f"  {'forward':<9}{'requests':>9}{'positions':>10}{'context':>9}{'rows':>7}{'ms':>8}")
    for r in result["forwards"]:
        print(f"  {r['forward']:<9}{r['requests']:>9}{r['positions']:>10}{r['context']:>9}{r['last_layer_rows']:>7}"
              f"{r['ms']:>8}")
    print(json.dumps({k: result[k] for k in ("sha", "p50_ms", "mean_ms", "tokenize_ms", "forward_ms", "lm_head_ms",
                                             "rest_ms", "forwards_per_request")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
