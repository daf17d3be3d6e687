"""The incremental context cache, measured: quality and engine-only latency of single-line
infills with the cache off and on, side by side in one run.

    python -m benchmarks.engine.context_reuse [--model DIR] [--limit 200] [--typed-chars 24]
        [--every 3] [--max-tokens 32] [--variant NAME:key=value,...] [--out benchmarks/results/context_reuse.json]

Each HumanEval single-line task is reached the way an editor reaches it: the user types the
last ``--typed-chars`` characters of the prompt, and a completion request goes out every
``--every`` characters (the suffix stays in place, as it does while typing). Only the last
request — the full prompt — is scored (executed in the sandboxed harness) and timed. With the
cache on, that request reuses keys/values computed for earlier, shorter prefixes (and, within
the request, for earlier blocks): the approximation whose quality this benchmark checks; with
it off (``context_reuse=False``) every full step recomputes the whole canvas. Both arms run in
the same process on the same tasks, interleaved task by task (the arm that goes first
alternates), with the balanced preset and ``single_line=True`` (the daemon's line spans).

``--variant NAME:refresh_every=2,margin=32`` adds an arm with the cache on under another policy
(fields of ``mercury_engine.context_cache.CachePolicy``); every arm has a cache of its own.

Prints a table, writes JSON and ends with one JSON line of headline figures.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.engine.speed import percentile
from benchmarks.humaneval import tasks as humaneval
from benchmarks.humaneval.quality import write_atomic
from mercury_engine.context_cache import CachePolicy, ContextCache
from mercury_engine.options import InfillOptions

DEFAULT_OUT = Path("benchmarks/results/context_reuse.json")
QUALITY_TOLERANCE_POINTS = 1.0  # the bound: pass@1 within 1 point of the uncached path


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.engine.context_reuse", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=None, help="model directory (default: the embedded model)")
    p.add_argument("--limit", type=int, default=200, help="single-line tasks, evenly spaced (of 1,033)")
    p.add_argument("--typed-chars", type=int, default=24, help="characters typed before the scored request")
    p.add_argument("--every", type=int, default=3, help="a request every this many typed characters")
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--workers", type=int, default=None, help="parallel sandboxes")
    p.add_argument("--variant", action="append", default=[], metavar="NAME:key=value,...",
                   help="an extra arm: the cache on with these CachePolicy fields")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    return p


def policies(variants: list[str]) -> dict[str, CachePolicy | None]:
    """Arm -> cache policy (None: the cache off)."""
    out: dict[str, CachePolicy | None] = {"off": None, "on": CachePolicy()}
    for spec in variants:
        name, _, fields = spec.partition(":")
        pairs = dict(kv.split("=", 1) for kv in fields.split(",") if kv)
        out[name] = replace(CachePolicy(), **{k: int(v) for k, v in pairs.items()})
    return out


def typing_prefixes(prompt: str, typed: int, every: int) -> list[str]:
    """The prefixes the editor asked about before the full prompt (shortest first)."""
    cut = min(typed, len(prompt))
    return [prompt[: len(prompt) - j] for j in range(cut, 0, -every)]


def edit_similarity(completion: str, canonical: str) -> float:
    """Character similarity of the completion's and the canonical solution's first line (0..1):
    finer than pass@1, which a small model rarely earns."""
    a, b = completion.strip().splitlines()[:1], canonical.strip().splitlines()[:1]
    return difflib.SequenceMatcher(None, a[0] if a else "", b[0] if b else "").ratio()


def run(args: argparse.Namespace) -> dict:
    from mercury_engine import Engine

    engine = Engine.load(args.model, threads=args.threads)
    problems = humaneval.take_subset(humaneval.load_benchmark("single-line", args.data_dir), args.limit)
    decoder = engine.scheduler.decoder
    pols = policies(args.variant)
    caches = {name: ContextCache(p) for name, p in pols.items() if p is not None}
    arms = {name: {"completions": [], "ms": [], "forwards": 0} for name in pols}
    engine.infill("def f(x):\n    return ", "\n", args.max_tokens, InfillOptions(single_line=True))  # warm-up
    t_start = time.perf_counter()
    for i, prob in enumerate(problems):
        order = list(pols) if i % 2 == 0 else list(reversed(pols))
        for name in order:
            opts = InfillOptions(single_line=True, context_reuse=pols[name] is not None)
            if name in caches:  # between requests: no step in flight uses the decoder's cache
                decoder.context_cache = caches[name]
            for prefix in typing_prefixes(prob.prompt, args.typed_chars, args.every):
                engine.infill(prefix, prob.suffix, args.max_tokens, opts)
            t0 = time.perf_counter()
            r = engine.infill(prob.prompt, prob.suffix, args.max_tokens, opts)
            arms[name]["ms"].append((time.perf_counter() - t0) * 1000)
            arms[name]["completions"].append(r.text)
            arms[name]["forwards"] += r.forwards
        if (i + 1) % 25 == 0:
            print(f"[context_reuse] {i + 1}/{len(problems)} tasks", file=sys.stderr, flush=True)
    gen_s = time.perf_counter() - t_start
    out_arms = []
    for name, a in arms.items():
        outcomes = humaneval.run_tasks(problems, a["completions"], workers=args.workers)
        exact = [humaneval.exact_match(c, p.canonical_solution) for c, p in zip(a["completions"], problems,
                                                                               strict=True)]
        out_arms.append({
            "arm": name, "policy": None if pols[name] is None else pols[name].__dict__,
            "cache": caches[name].stats.as_dict() if name in caches else None, "tasks": len(problems),
            "pass@1": round(humaneval.pass_at_1(outcomes), 4),
            "exact": round(sum(exact) / len(exact), 4),
            "p50_ms": round(percentile(a["ms"], 50), 1), "p95_ms": round(percentile(a["ms"], 95), 1),
            "mean_forwards": round(a["forwards"] / len(problems), 2),
            "edit_sim": round(sum(edit_similarity(c, p.canonical_solution)
                                  for c, p in zip(a["completions"], problems, strict=True)) / len(problems), 4),
            "same_as_off": round(sum(c == o for c, o in zip(a["completions"], arms["off"]["completions"],
                                                          strict=True)) / len(problems), 4),
        })
    delta = round(100 * (out_arms[1]["pass@1"] - out_arms[0]["pass@1"]), 2)
    decoder.context_cache = caches["on"]
    return {
        "benchmark": "single-line", "limit": args.limit, "typed_chars": args.typed_chars, "every": args.every,
        "max_tokens": args.max_tokens, "preset": "balanced", "threads": engine_threads(),
        "loadavg_1m": round(os.getloadavg()[0], 2), "nproc": os.cpu_count(),
        "generation_s": round(gen_s, 1),
        "arms": out_arms, "pass_delta_points": delta,
        "within_tolerance": abs(delta) <= QUALITY_TOLERANCE_POINTS,
    }


def engine_threads() -> int:
    import torch

    return torch.get_num_threads()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result = run(args)
    write_atomic(args.out, json.dumps(result, indent=2) + "\n")
    print(f"context reuse, HumanEval single-line ({result['limit']} tasks, typing the last "
          f"{result['typed_chars']} chars, a request every {result['every']}); load {result['loadavg_1m']}")
    keys = ("pass@1", "exact", "edit_sim", "same_as_off", "p50_ms", "p95_ms", "mean_forwards")
    print(f"  {'':<16}" + "".join(f"{k:>14}" for k in keys))
    for a in result["arms"]:
        print(f"  {a['arm']:<16}" + "".join(f"{a[k]:>14}" for k in keys))
    print(json.dumps({"pass_off": result["arms"][0]["pass@1"], "pass_on": result["arms"][1]["pass@1"],
                      "delta_points": result["pass_delta_points"],
                      "edit_sim_off": result["arms"][0]["edit_sim"], "edit_sim_on": result["arms"][1]["edit_sim"],
                      "same_as_off": result["arms"][1]["same_as_off"], "p50_off_ms": result["arms"][0]["p50_ms"],
                      "p50_on_ms": result["arms"][1]["p50_ms"], "p95_off_ms": result["arms"][0]["p95_ms"],
                      "p95_on_ms": result["arms"][1]["p95_ms"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
