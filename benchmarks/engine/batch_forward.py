"""What batching can buy on this machine: the cost of one batched forward, and of decoding B
requests together, against B = 1 (the ceiling of benchmarks/http_api/load's throughput ratio).

    nice -n 10 python -m benchmarks.engine.batch_forward                  # embedded model, int8 and fp32
    python -m benchmarks.engine.batch_forward --batches 1,8 --requests 8 --repeats 2   # smoke

Two tables, per quantization mode (``int8``: the CPU default; ``none``: float32):

* **forward** — the two forwards a denoising step runs, on B canvases of the same length (real
  HumanEval single-line token ids, cut to the median canvas length, so no padding is
  measured): a *full* step (the whole canvas, keys/values kept) and a *block* step (a 16-position
  block attending to the cached context). Per B: milliseconds for the batch, per request, and
  the ceiling ``B x t(1) / t(B)`` — how many times more requests per second batching that
  forward can serve.
* **decode** — ``--requests`` real requests decoded B at a time through the fast sampler (the
  scheduler's path; each request in its own context scope, as an HTTP request without a
  ``user``), per request: milliseconds, forwards, and how many results differ from decoding the
  same request alone (batch invariance: 0 expected).

Times are the process's CPU time (``time.process_time``), with ``--threads`` torch threads
(default 1): on a shared machine, wall time measures the neighbours. Medians over
``--repeats``. Writes benchmarks/results/batch_forward.{json,png}; ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

from benchmarks import RESULTS as RESULTS_DIR
from benchmarks.common.report import pyplot
from benchmarks.humaneval import tasks as humaneval
from mercury_engine import Engine
from mercury_engine.canvas import build_canvas
from mercury_engine.fast_sampler import FastDecoder
from mercury_engine.options import PRIVATE_SCOPE, InfillOptions

RESULTS = RESULTS_DIR / "batch_forward.json"
BLOCK = 16  # the balanced preset's block: the query width of a block step
MAX_TOKENS = 32  # http_load's completion budget
WARMUP = 2


def cpu_ms(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(median CPU ms, median wall ms) of ``fn()`` over ``repeats`` runs after a warm-up."""
    for _ in range(WARMUP):
        fn()
    cpu, wall = [], []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
    return statistics.median(cpu), statistics.median(wall)


@torch.inference_mode()
def forward_curve(engine: Engine, rows: list[list[int]], batches: list[int], repeats: int) -> list[dict]:
    model = engine.model
    length = len(rows[0])
    out, base = [], {}
    for b in batches:
        ids = torch.tensor([rows[i % len(rows)] for i in range(b)])  # [B, L]
        _, kv = model.forward_hidden(ids, return_kv=True)
        ctx = [(k[:, :, : length - BLOCK], v[:, :, : length - BLOCK]) for k, v in kv]  # [B, K, L-16, E]
        q, pos = ids[:, length - BLOCK:], torch.arange(length - BLOCK, length).expand(b, BLOCK)  # [B, 16]
        row = {"batch": b}
        calls = {"full": lambda ids=ids: model.forward_hidden(ids, return_kv=True),
                 "block": lambda q=q, pos=pos, ctx=ctx: model.forward_hidden(q, pos, ctx_kv=ctx)}
        for kind, fn in calls.items():
            c, w = cpu_ms(fn, repeats)
            base.setdefault(kind, c)
            row[f"{kind}_ms"], row[f"{kind}_wall_ms"] = round(c, 2), round(w, 2)
            row[f"{kind}_per_request_ms"] = round(c / b, 2)
            row[f"{kind}_ceiling"] = round(b * base[kind] / c, 2)
        out.append(row)
    return out


@torch.inference_mode()
def decode_curve(engine: Engine, pairs: list[tuple[str, str]], batches: list[int], repeats: int) -> list[dict]:
    opts = InfillOptions(context_scope=PRIVATE_SCOPE)  # as an HTTP request: no context from other requests
    canvases = [build_canvas(engine.tokenizer, p, s, MAX_TOKENS, engine.context_tokens) for p, s in pairs]
    alone: list[list[int]] = []
    out = []
    for b in batches:
        results: list = []

        def run(b: int = b, results: list = results) -> None:
            results.clear()
            dec = FastDecoder(engine.model, engine.tokenizer)  # fresh: no context cached by earlier runs
            for i in range(0, len(canvases), b):
                results.extend(dec.run([dec.start(c, opts) for c in canvases[i:i + b]]))

        c, w = cpu_ms(run, repeats)
        ids = [r.token_ids for r in results]
        if not alone:
            alone = ids
        row = {"batch": b, "ms_per_request": round(c / len(canvases), 1),
               "wall_ms_per_request": round(w / len(canvases), 1),
               "forwards_per_request": round(sum(r.forwards for r in results) / len(results), 2),
               "tokens": sum(len(t) for t in ids),
               "differ_from_alone": sum(a != x for a, x in zip(alone, ids, strict=True))}
        row["ceiling"] = round(out[0]["ms_per_request"] / row["ms_per_request"], 2) if out else 1.0
        out.append(row)
    return out


def plot(report: dict, path: Path) -> None:
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for mode in report["modes"]:
        xs = [r["batch"] for r in mode["forward"]]
        for kind in ("full", "block"):
            ax.plot(xs, [r[f"{kind}_ceiling"] for r in mode["forward"]], marker="o",
                    label=f"{kind} forward ({mode['quantize']})")
        ax.plot([r["batch"] for r in mode["decode"]], [r["ceiling"] for r in mode["decode"]], marker="s",
                linestyle="--", label=f"whole decode ({mode['quantize']})")
    ax.plot(xs, xs, color="grey", linewidth=0.5, label="linear (launch-bound)")
    ax.set(xscale="log", yscale="log", xlabel="batch", ylabel="throughput x over batch 1 (CPU time)",
           title="batching ceiling on this CPU")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="model directory (default: embedded)")
    ap.add_argument("--batches", default="1,2,4,8,16,32")
    ap.add_argument("--decode-batches", default="1,4,8,16")
    ap.add_argument("--requests", type=int, default=16, help="requests decoded per batch size")
    ap.add_argument("--quantize", default="int8,none")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    batches = [int(b) for b in args.batches.split(",")]
    decode_batches = [int(b) for b in args.decode_batches.split(",")]
    problems = humaneval.load_benchmark("single-line")
    pairs = [(p.prompt, p.suffix) for p in problems[: args.requests]]
    modes = []
    for quantize in args.quantize.split(","):
        engine = Engine.load(args.model, device="cpu", dtype="float32", threads=args.threads, quantize=quantize)
        canvases = [build_canvas(engine.tokenizer, p.prompt, p.suffix, MAX_TOKENS, engine.context_tokens)
                    for p in problems[:64]]
        length = int(statistics.median(c.length for c in canvases))
        rows = [c.ids(engine.tokenizer.mask_id)[:length] for c in canvases if c.length >= length]
        modes.append({"quantize": quantize, "length": length,
                      "forward": forward_curve(engine, rows, batches, args.repeats),
                      "decode": decode_curve(engine, pairs, decode_batches, max(1, args.repeats // 2))})
        engine.close()
    report = {"benchmark": "batch_forward", "model": args.model or "embedded", "threads": args.threads,
              "cpu": torch.backends.cpu.get_cpu_capability(), "modes": modes}
    for m in modes:
        print(f"\n{m['quantize']}: forward on {m['length']}-token canvases (CPU ms)\n"
              "| batch | full ms | full / request | full ceiling | block ms | block / request | block ceiling |\n"
              "|---|---|---|---|---|---|---|")
        for r in m["forward"]:
            print(f"| {r['batch']} | {r['full_ms']} | {r['full_per_request_ms']} | {r['full_ceiling']} | "
                  f"{r['block_ms']} | {r['block_per_request_ms']} | {r['block_ceiling']} |")
        print(f"\n{m['quantize']}: decode {args.requests} requests, B at a time\n"
              "| batch | CPU ms / request | forwards / request | ceiling | tokens | differ from alone |\n"
              "|---|---|---|---|---|---|")
        for r in m["decode"]:
            print(f"| {r['batch']} | {r['ms_per_request']} | {r['forwards_per_request']} | {r['ceiling']} | "
                  f"{r['tokens']} | {r['differ_from_alone']} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    plot(report, args.out.with_suffix(".png"))
    print(json.dumps({"benchmark": "batch_forward", **{
        f"{m['quantize']}_decode_ceiling_at_{r['batch']}": r["ceiling"] for m in modes for r in m["decode"]}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
