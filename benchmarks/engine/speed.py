"""Engine speed, side by side in one run: the reference sampler, the fast sampler per preset,
and an autoregressive KV-cache baseline of the same architecture and size.

    python -m benchmarks.engine.speed [--model DIR] [--lengths 16,32,64] [--requests 24]
        [--quality-limit 100] [--out benchmarks/results/engine_speed.json]

For every infill length it runs the same prompts (HumanEval single-line prefixes/suffixes)
through each setting in two modes and reports tokens/s, per-request latency p50/p95 and
forwards per token:

* ``fixed`` — exactly n tokens (stop tokens disabled, ``allow_stop=False``): the same amount of
  decoding as the autoregressive baseline, which always decodes n tokens; the fair throughput
  comparison;
* ``natural`` — the span ends when the model commits padding (how completions really run);
  tokens/s counts the content tokens returned. Quality (HumanEval single-line pass@1 and exact match, executed
in the sandboxed harness) is measured for every diffusion setting. Prints a table, writes JSON
and a PNG (speed against quality), and ends with one JSON line of headline figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from benchmarks.common.report import pyplot, write_atomic
from benchmarks.engine.ar_baseline import ARDecoder
from benchmarks.humaneval import tasks as humaneval
from benchmarks.humaneval.quality import generate
from mercury_engine.options import InfillOptions

SETTINGS: dict[str, dict] = {
    "reference": {"sampler": "reference"},
    "fast": {"sampler": "fast", "preset": "fast"},
    "balanced": {"sampler": "fast", "preset": "balanced"},
    "quality": {"sampler": "fast", "preset": "quality"},
}
QUALITY_MAX_TOKENS = 48


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[idx]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.engine.speed", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=None, help="model directory (default: the embedded model)")
    p.add_argument("--lengths", default="16,32,64", help="infill lengths (max_tokens) to time")
    p.add_argument("--requests", type=int, default=24, help="timed requests per length and setting")
    p.add_argument("--quality-limit", type=int, default=100,
                   help="single-line tasks scored per setting (0: skip quality)")
    p.add_argument("--settings", default=",".join(SETTINGS), help="subset of " + ",".join(SETTINGS))
    p.add_argument("--device", default="auto")
    p.add_argument("--dtype", default="auto")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/engine_speed.json"))
    return p


def prompts(limit: int) -> list[tuple[str, str]]:
    problems = humaneval.take_subset(humaneval.load_benchmark("single-line"), limit)
    return [(p.prompt, p.suffix) for p in problems]


def time_setting(engine, pairs: list[tuple[str, str]], n: int, decode: dict) -> dict:
    """Latency and throughput of ``mercury_engine.infill`` with ``decode`` over ``pairs`` at ``max_tokens=n``."""
    for prefix, suffix in pairs[:2]:  # warm-up
        engine.infill(prefix, suffix, n, InfillOptions(**decode))
    lat, tokens, forwards = [], 0, 0
    for prefix, suffix in pairs:
        t0 = time.perf_counter()
        r = engine.infill(prefix, suffix, n, InfillOptions(**decode))
        lat.append((time.perf_counter() - t0) * 1000)
        tokens += len(r.token_ids)
        forwards += r.forwards
    total_s = sum(lat) / 1000
    return {"tokens_per_s": tokens / total_s, "p50_ms": percentile(lat, 50), "p95_ms": percentile(lat, 95),
            "mean_tokens": tokens / len(pairs), "forwards_per_token": forwards / max(1, tokens),
            "forwards_per_request": forwards / len(pairs)}


def time_ar(engine, pairs: list[tuple[str, str]], n: int) -> dict:
    ar = ARDecoder(engine.model)  # same weights, dtype and quantization as the diffusion rows
    tok = engine.tokenizer
    encoded = [(tok.encode(p) + tok.encode(s))[-(engine.context_tokens - n):] for p, s in pairs]
    for ids in encoded[:2]:
        ar.generate(ids, n)
    lat = [ar.generate(ids, n).latency_ms for ids in encoded]
    total_s = sum(lat) / 1000
    return {"tokens_per_s": n * len(encoded) / total_s, "p50_ms": percentile(lat, 50),
            "p95_ms": percentile(lat, 95), "mean_tokens": n, "forwards_per_token": 1.0,
            "forwards_per_request": n}


def quality(engine, limit: int, decode: dict, label: str) -> dict:
    problems = humaneval.take_subset(humaneval.load_benchmark("single-line"), limit)
    gen = generate(engine, problems, QUALITY_MAX_TOKENS, decode, label)
    outcomes = humaneval.run_tasks(problems, gen.completions)
    exact = [humaneval.exact_match(c, p.canonical_solution) for c, p in zip(gen.completions, problems, strict=True)]
    return {"tasks": len(problems), "pass@1": humaneval.pass_at_1(outcomes),
            "exact_match": sum(exact) / len(exact), "tokens_per_s": gen.stats.get("tokens_per_s"),
            "mean_forwards": gen.stats.get("mean_forwards")}


def plot(path: Path, rows: dict[str, dict], n: int) -> None:
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    ar = rows.get("autoregressive", {}).get("fixed", {}).get(str(n), {}).get("tokens_per_s")
    if ar:
        ax.axvline(ar, linestyle="--", color="gray", label="autoregressive (same model, KV cache)")
        ax.legend(loc="best", fontsize=8)
    for name, r in rows.items():
        q = r.get("quality")
        speed = r["fixed"].get(str(n), {}).get("tokens_per_s")
        if q is None or speed is None:
            continue
        ax.scatter([speed], [q["pass@1"] * 100], s=60)
        ax.annotate(name, (speed, q["pass@1"] * 100), textcoords="offset points", xytext=(5, 5))
    ax.set_xscale("log")
    ax.set_xlabel(f"tokens/s (fixed-length {n}-token infills)")
    ax.set_ylabel("HumanEval single-line pass@1 (%)")
    ax.set_title("engine_speed: speed against quality")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from mercury_engine import Engine

    if args.threads:
        torch.set_num_threads(args.threads)
    reason = humaneval.data_unavailable_reason()
    if reason:
        print(f"engine_speed: {reason}", file=sys.stderr)
        return 2
    lengths = [int(x) for x in args.lengths.split(",") if x]
    names = [s for s in args.settings.split(",") if s]
    engine = Engine.load(args.model, device=args.device, dtype=args.dtype)
    pairs = prompts(args.requests)
    rows: dict[str, dict] = {}
    for name in names:
        decode = SETTINGS[name]
        rows[name] = {"decode": decode, "speed": {}, "fixed": {}}
        for n in lengths:
            rows[name]["speed"][str(n)] = time_setting(engine, pairs, n, decode)
            rows[name]["fixed"][str(n)] = time_setting(engine, pairs, n, {**decode, "allow_stop": False})
            print(f"[engine_speed] {name} n={n}: natural {rows[name]['speed'][str(n)]}, "
                  f"fixed {rows[name]['fixed'][str(n)]}", file=sys.stderr, flush=True)
        if args.quality_limit:
            rows[name]["quality"] = quality(engine, args.quality_limit, decode, name)
    ar = {str(n): time_ar(engine, pairs, n) for n in lengths}
    rows["autoregressive"] = {"decode": {"baseline": "causal KV cache, the same model object (speed only)"},
                              "speed": ar, "fixed": ar}
    engine.close()

    for mode, title in (("fixed", "fixed length: exactly n tokens"), ("speed", "natural: stops at padding")):
        print(f"\n{title}")
        print(f"{'setting':<15}" + "".join(f"{'tok/s@' + str(n):>11}{'p50@' + str(n):>9}{'p95@' + str(n):>9}"
                                           f"{'fwd/tok':>8}" for n in lengths) + f"{'pass@1':>8}{'exact':>7}")
        for name, r in rows.items():
            line = f"{name:<15}"
            for n in lengths:
                m = r[mode][str(n)]
                line += (f"{m['tokens_per_s']:>11.1f}{m['p50_ms']:>9.1f}{m['p95_ms']:>9.1f}"
                         f"{m['forwards_per_token']:>8.2f}")
            q = r.get("quality")
            line += f"{q['pass@1'] * 100:>7.1f}%{q['exact_match'] * 100:>6.1f}%" if q else f"{'-':>8}{'-':>7}"
            print(line)

    def ratio(a: str, b: str, n: int, mode: str = "fixed") -> float | None:
        if a in rows and b in rows and str(n) in rows[a][mode]:
            return rows[a][mode][str(n)]["tokens_per_s"] / rows[b][mode][str(n)]["tokens_per_s"]
        return None

    head: dict[str, float | None] = {
        "balanced_vs_reference_tokens_per_s_32": ratio("balanced", "reference", 32),
        "balanced_vs_reference_natural_32": ratio("balanced", "reference", 32, "speed"),
    }
    for name in ("fast", "balanced", "quality"):
        for n in (32, 64):
            head[f"{name}_vs_autoregressive_{n}"] = ratio(name, "autoregressive", n)
    if "balanced" in rows and "32" in rows["balanced"]["speed"]:
        b32 = rows["balanced"]["speed"]["32"]
        head.update(balanced_p50_ms_32=b32["p50_ms"], balanced_p95_ms_32=b32["p95_ms"],
                    balanced_fixed_p50_ms_32=rows["balanced"]["fixed"]["32"]["p50_ms"],
                    forwards_per_token_balanced=rows["balanced"]["fixed"]["32"]["forwards_per_token"])
    for name in names:
        if rows[name].get("quality"):
            head[f"{name}_pass@1"] = rows[name]["quality"]["pass@1"]
    for k, v in head.items():
        if isinstance(v, float):
            head[k] = round(v, 4)
    out = {"model": str(engine.path), "dtype": str(engine.dtype), "threads": torch.get_num_threads(),
           "lengths": lengths, "requests": len(pairs), "rows": rows, "headline": head,
           "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(out, indent=2) + "\n")
    plot(args.out.with_suffix(".png"), rows, 32 if 32 in lengths else lengths[0])
    print(json.dumps(head))
    return 0


if __name__ == "__main__":
    sys.exit(main())
