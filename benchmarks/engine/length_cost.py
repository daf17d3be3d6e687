"""What the length policy costs in latency: the language server's single-line case, A/B in one run.

    python -m benchmarks.engine.length_cost [--requests 40] [--max-tokens 24] [--preset balanced]
        [--variant NAME=off|prior|search[:N1,N2,...] ...] [--out benchmarks/results/length_cost.json]

Every request is a HumanEval single-line prefix/suffix decoded as the language server decodes a
line span (``single_line=True``, the line budget of ``max_tokens``, the given preset). Each
variant is one ``mercury_engine.infill`` setting: ``off`` (one span that padding/EOS may end),
``prior`` (the length prior sizes the span, mercury_engine/length.py), ``search`` (mercury_engine/length.py's
candidate lengths) or ``search:4,8,14`` (those candidates). Every request starts cold: the
context cache (mercury_engine/context_cache.py) is cleared before it, so that no variant reuses the
prefix keys/values the variant before it computed for the same prompt. The
variants run interleaved, prompt by prompt (A, B, C, A, B, C, ...), so that the load of a shared
machine falls on all of them alike; one untimed warm-up round first. Prints a table (latency
p50/p95/mean, forwards per request, mean candidates), writes ``--out`` and ends with one JSON
line of headline figures (each variant's p50 and its p50 relative to the first variant).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchmarks.common.report import git_state, write_atomic
from benchmarks.engine.speed import percentile
from benchmarks.humaneval import tasks as humaneval

LINE_SPAN_TOKENS = 24  # the language server's span budget for a line (mercury_lsp SpanTokens.line)
DEFAULT_VARIANTS = ("off=off", "prior=prior", "search=search", "search3=search:4,8,14")


def parse_variant(spec: str) -> tuple[str, dict]:
    """``name=off`` / ``name=prior`` / ``name=search`` / ``name=search:4,8,14`` -> (name, InfillOptions fields)."""
    name, sep, value = spec.partition("=")
    policy, _, cands = value.partition(":")
    if not sep or not name.isidentifier() or policy not in ("off", "prior", "search") or (cands and policy != "search"):
        raise SystemExit(f"length_cost: --variant expects NAME=off|prior|search[:N1,N2,...], got {spec!r}")
    fields: dict = {"length": policy}
    if cands:
        try:
            fields["length_candidates"] = tuple(int(n) for n in cands.split(","))
        except ValueError:
            raise SystemExit(f"length_cost: candidate lengths must be integers, got {cands!r}") from None
    return name, fields


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.engine.length_cost", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=None, help="model directory (default: the embedded model)")
    p.add_argument("--requests", type=int, default=40, help="prompts (HumanEval single-line, evenly spaced)")
    p.add_argument("--max-tokens", type=int, default=LINE_SPAN_TOKENS)
    p.add_argument("--preset", default="balanced")
    p.add_argument("--variant", action="append", default=None, metavar="NAME=POLICY",
                   help=f"repeatable (default: {' '.join(DEFAULT_VARIANTS)})")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/length_cost.json"))
    args = p.parse_args(argv)
    reason = humaneval.data_unavailable_reason()
    if reason:
        print(f"length_cost: {reason}", file=sys.stderr)
        return 2
    from mercury_engine import Engine
    from mercury_engine.options import InfillOptions

    variants = dict(parse_variant(v) for v in (args.variant or DEFAULT_VARIANTS))
    options = {name: InfillOptions(preset=args.preset, single_line=True, **f) for name, f in variants.items()}
    for o in options.values():
        o.validate()
    problems = humaneval.take_subset(humaneval.load_benchmark("single-line"), args.requests)
    engine = Engine.load(args.model)
    for o in options.values():  # warm-up: one-time costs stay out of the figures
        engine.infill(problems[0].prompt, problems[0].suffix, args.max_tokens, o)
    lat: dict[str, list[float]] = {n: [] for n in options}
    forwards: dict[str, int] = dict.fromkeys(options, 0)
    for prob in problems:
        for name, o in options.items():
            engine.scheduler.decoder.context_cache.clear()
            t0 = time.perf_counter()
            r = engine.infill(prob.prompt, prob.suffix, args.max_tokens, o)
            lat[name].append((time.perf_counter() - t0) * 1000)
            forwards[name] += r.forwards
    engine.close()

    rows = {}
    for name, fields in variants.items():
        ms = lat[name]
        rows[name] = {"options": {k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()},
                      "p50_ms": round(percentile(ms, 50), 2), "p95_ms": round(percentile(ms, 95), 2),
                      "mean_ms": round(sum(ms) / len(ms), 2),
                      "forwards_per_request": round(forwards[name] / len(ms), 2)}
    first = next(iter(rows))
    print(f"length policy latency, single-line spans (max_tokens={args.max_tokens}, preset {args.preset}, "
          f"{len(problems)} prompts, interleaved)")
    print(f"{'variant':<12}{'policy':<22}{'p50 ms':>9}{'p95 ms':>9}{'mean ms':>9}{'fwd/req':>9}{'x p50':>7}")
    for name, r in rows.items():
        policy = r["options"]["length"] + (f" {r['options']['length_candidates']}"
                                           if "length_candidates" in r["options"] else "")
        print(f"{name:<12}{policy:<22}{r['p50_ms']:>9.1f}{r['p95_ms']:>9.1f}{r['mean_ms']:>9.1f}"
              f"{r['forwards_per_request']:>9.1f}{r['p50_ms'] / rows[first]['p50_ms']:>7.2f}")
    head = {f"{n}_p50_ms": r["p50_ms"] for n, r in rows.items()}
    head.update({f"{n}_p50_vs_{first}": round(r["p50_ms"] / rows[first]["p50_ms"], 3)
                 for n, r in rows.items() if n != first})
    out = {"benchmark": "length_cost", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "git": git_state(), "command": ["python", "-m", "benchmarks.engine.length_cost", *(argv or sys.argv[1:])],
           "model": str(engine.path), "max_tokens": args.max_tokens, "preset": args.preset,
           "requests": len(problems), "rows": rows, "headline": head}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(out, indent=2) + "\n")
    print(json.dumps(head))
    return 0


if __name__ == "__main__":
    sys.exit(main())
