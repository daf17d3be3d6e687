"""What the embedded model's learning curve predicts for 10x more training compute.

    python -m benchmarks.train.scaling [--point TOKENS=HELDOUT.json ...] [--factor 10]
        [--out benchmarks/results/scaling.json]

The metric is the held-out left-to-right span cross-entropy of ``benchmarks.train.heldout --ce``
(nats/token on masked lines and rests of lines of held-out standard-library files; the probe a
left-to-right decode rests on; pass@1 sits at the empty-completion floor and has no curve to
fit). Each ``--point`` is that command's JSON for a checkpoint trained on TOKENS tokens. The
default points are the embedded model's two training stages (mercury_engine/models/mercury-coder-tiny/
MODEL_CARD.md), measured with

    python -m benchmarks.train.heldout --model DIR --spans 100 --ce --decode sampler=fast \\
        --out benchmarks/results/scaling_stage{1,2}_heldout.json

(stage 1: the weights of commit 7fbf4ca, 25.0 M tokens; stage 2: the shipped weights, 51.2 M).

Per span kind it fits a power law in training tokens, CE = a * N^-b (least squares in log-log),
and evaluates it at ``factor`` x the last point's tokens: at a fixed shape, training compute
(about 6 x parameters x tokens) is proportional to tokens. With two points the fit is exact and
says nothing about its own error; a pure power law has no irreducible loss, so it is the
optimistic reading (a curve that flattens toward a floor predicts less gain). Prints a table,
writes ``--out`` (JSON) and ``<stem>.png``, and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from benchmarks import RESULTS
from benchmarks.common.report import git_state, pyplot, write_atomic

# The embedded model's stages (tokens seen, from the model card's training table) and the
# held-out probe of each checkpoint.
DEFAULT_POINTS = (f"25.0e6={RESULTS / 'scaling_stage1_heldout.json'}",
                  f"51.2e6={RESULTS / 'scaling_stage2_heldout.json'}")


def fit_power_law(tokens: list[float], values: list[float]) -> tuple[float, float]:
    """(a, b) of value = a * tokens^-b, least squares on the logarithms (at least two points)."""
    xs, ys = [math.log(t) for t in tokens], [math.log(v) for v in values]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    return math.exp(my - slope * mx), -slope


def load_points(specs: list[str]) -> list[dict]:
    points = []
    for spec in specs:
        tokens, _, path = spec.partition("=")
        raw = json.loads(Path(path).read_text())
        points.append({"tokens": float(tokens), "file": Path(path).name, "model": raw["model"],
                       "ce": {kind: r["l2r_ce"] for kind, r in raw["results"].items() if "l2r_ce" in r}})
    return sorted(points, key=lambda p: p["tokens"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.train.scaling", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--point", action="append", default=None, help="TOKENS=HELDOUT.json (repeat; at least two)")
    p.add_argument("--factor", type=float, default=10.0, help="compute multiple to extrapolate to")
    p.add_argument("--out", type=Path, default=RESULTS / "scaling.json")
    args = p.parse_args(argv)
    points = load_points(args.point or list(DEFAULT_POINTS))
    if len(points) < 2:
        print("scaling: at least two points are needed", file=sys.stderr)
        return 2
    kinds = sorted(set.intersection(*(set(pt["ce"]) for pt in points)))
    target = points[-1]["tokens"] * args.factor
    fits = {}
    for kind in kinds:
        a, b = fit_power_law([pt["tokens"] for pt in points], [pt["ce"][kind] for pt in points])
        fits[kind] = {"a": a, "b": round(b, 4), "last": round(points[-1]["ce"][kind], 4),
                      "predicted": round(a * target ** -b, 4)}
    print(f"{'span kind':<14}" + "".join(f"{pt['tokens'] / 1e6:>9.1f}M" for pt in points)
          + f"{'exponent b':>12}{f'{target / 1e6:.0f}M (x{args.factor:g})':>16}")
    for kind in kinds:
        print(f"{kind:<14}" + "".join(f"{pt['ce'][kind]:>10.3f}" for pt in points)
              + f"{fits[kind]['b']:>12.3f}{fits[kind]['predicted']:>16.3f}")
    out = {"metric": "held-out left-to-right span cross-entropy (benchmarks.train.heldout --ce), nats/token",
           "law": "ce = a * tokens^-b (fixed shape: compute proportional to tokens)", "factor": args.factor,
           "target_tokens": target, "points": points, "fits": fits, "git": git_state(),
           "caveat": f"{len(points)} points: an exact fit with no error estimate; no irreducible loss "
                     "(optimistic); the stages also changed the recipe (tail-masked rows, padding weight)"}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(out, indent=1) + "\n")
    plt = pyplot()
    if plt is not None:
        fig, ax = plt.subplots(figsize=(6, 4))
        grid = [points[0]["tokens"] * (target / points[0]["tokens"]) ** (i / 40) for i in range(41)]
        for kind in kinds:
            f = fits[kind]
            line, = ax.plot([pt["tokens"] / 1e6 for pt in points], [pt["ce"][kind] for pt in points], "o",
                            label=f"{kind} (b = {f['b']:.3f})")
            ax.plot([g / 1e6 for g in grid], [f["a"] * g ** -f["b"] for g in grid], "--", color=line.get_color())
        ax.set(xscale="log", xlabel="training tokens (M), log scale; fixed 6.8 M-parameter shape",
               ylabel="held-out span CE (nats/token)", title=f"power-law extrapolation to x{args.factor:g} compute")
        ticks = [pt["tokens"] / 1e6 for pt in points] + [target / 1e6]
        ax.set_xticks(ticks, [f"{t:.0f}" for t in ticks])
        ax.set_xticks([], minor=True)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.out.with_suffix(".png"), dpi=100)
    print(json.dumps({"metric": "heldout_l2r_span_ce", "target_tokens": target,
                      **{f"{k}_last": v["last"] for k, v in fits.items()},
                      **{f"{k}_predicted": v["predicted"] for k, v in fits.items()},
                      **{f"{k}_b": v["b"] for k, v in fits.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
