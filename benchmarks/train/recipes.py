"""The training recipes compared at equal compute: learning curves of each arm.

    python -m benchmarks.train.recipes run --arm opt [--tokens 1.5e6] [--points 3] ...
    python -m benchmarks.train.recipes report [--out benchmarks/results/recipes.json]

``run`` trains one arm of mercury_train/recipe.py (``mdlm``, ``ar_mdlm``, ``opt``) with the
budgeted trainer on the CPU — the same corpus (built by the one-call run's offline builder),
the same shape, the same batch and the same number of training tokens for every arm — and at
every ``tokens / points`` tokens exports the weights it would ship (the EMA's where the arm
keeps one) and measures:

* the held-out left-to-right span cross-entropy of ``benchmarks/train/heldout --ce`` (lines of
  held-out standard-library files: never trained on);
* HumanEval single-line pass@1 and exact match on an evenly spaced subset, default decoding.

``report`` merges the arms' curves into a table, ``recipes.json`` and ``recipes.png``, and
ends with one JSON line. Equal tokens x the same shape = equal training compute (the AR
phase's causal attention costs the same matrix products).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import RESULTS
from benchmarks.common.report import pyplot


def _evaluate(model_dir: Path, spans: list[dict], problems: list, threads: int) -> dict:
    from benchmarks.humaneval import tasks as humaneval
    from benchmarks.humaneval.quality import DEFAULT_MAX_TOKENS, generate
    from benchmarks.train.heldout import span_ce
    from mercury_engine import Engine

    engine = Engine.load(model_dir, dtype="float32", quantize="none", threads=threads)
    ce = span_ce(engine, spans, DEFAULT_MAX_TOKENS["single-line"])
    gen = generate(engine, problems, DEFAULT_MAX_TOKENS["single-line"], {}, "recipes")
    engine.close()
    outcomes = humaneval.run_tasks(problems, gen.completions, workers=threads)
    exact = [humaneval.exact_match(c, p.canonical_solution) for c, p in zip(gen.completions, problems, strict=True)]
    return {"span_ce": round(ce["l2r_ce"], 4), "span_top1": round(ce["l2r_top1"], 4),
            "pass@1": round(humaneval.pass_at_1(outcomes), 4), "exact": round(sum(exact) / len(exact), 4),
            "mean_tokens": gen.stats["mean_tokens"]}


def run_arm(args: argparse.Namespace) -> int:
    import torch

    from benchmarks.humaneval.tasks import load_benchmark, take_subset
    from benchmarks.train.heldout import heldout_files, pick_spans
    from mercury_train.budget import BudgetTrainer, TokenCorpus
    from mercury_train.gpu_args import TOKENIZER
    from mercury_train.gpu_run import build_tokens, contamination_index
    from mercury_train.recipe import ARMS, ModelShape, RunConfig
    from mercury_train.shards import export_shards, write_shards

    torch.set_num_threads(args.threads)
    corpus = build_tokens(argparse.Namespace(work=args.work, include=args.include, max_files=0,
                                             max_corpus_mb=args.corpus_mb, workers=args.workers),
                          contamination_index(None))
    data = TokenCorpus.load(args.work / "corpus", TOKENIZER)
    shape = ModelShape(hidden_size=args.hidden, num_layers=args.layers, num_heads=4, num_kv_heads=2,
                       intermediate_size=args.hidden * 3, max_position_embeddings=512)
    run = RunConfig(run_dir=str(args.work / f"run-{args.arm}"), recipe=ARMS[args.arm], shape=shape,
                    seq_len=args.seq_len, batch_size=args.batch_size, minutes=0.0, max_tokens=int(args.tokens),
                    device="cpu", compile="off", log_every=20, eval_every_s=1e9, save_every_s=300.0)
    trainer = BudgetTrainer(run, data)
    spans = pick_spans(heldout_files(), args.spans, "line")
    problems = take_subset(load_benchmark("single-line"), args.tasks)
    curve_path = args.work / f"curve-{args.arm}.json"
    curve = json.loads(curve_path.read_text()) if curve_path.exists() else []
    t0 = time.perf_counter()
    for k in range(1, args.points + 1):
        point = int(args.tokens * k / args.points)
        if any(c["tokens"] >= point for c in curve):
            continue
        stats = trainer.fit(until_tokens=point)
        with tempfile.TemporaryDirectory() as tmp:
            write_shards(trainer.final_state(), Path(tmp) / "shards", trainer.model_cfg.to_hf_dict(),
                         data.tokenizer_sha256)
            model = export_shards(Path(tmp) / "shards", TOKENIZER, Path(tmp) / "model")
            scores = _evaluate(model, spans, problems, args.threads)
        curve.append({"tokens": trainer.tokens, "train_s": round(trainer.elapsed, 1),
                      "probe_span_ce": round(stats["heldout_span_ce"], 4), **scores})
        curve_path.write_text(json.dumps(curve, indent=1) + "\n")
        print(json.dumps({"arm": args.arm, **curve[-1], "wall_s": round(time.perf_counter() - t0, 1)}), flush=True)
    meta = {"arm": args.arm, "recipe": run.recipe.__dict__, "shape": shape.__dict__, "seq_len": run.seq_len,
            "batch_size": run.batch_size, "tokens": int(args.tokens), "parameters": trainer.model_cfg.num_parameters,
            "spans": len(spans), "tasks": len(problems), "corpus_train_tokens": corpus["train_tokens"],
            "contamination_check": corpus["report"]["contamination_check"], "curve": curve}
    (args.work / f"arm-{args.arm}.json").write_text(json.dumps(meta, indent=1) + "\n")
    return 0


def report(args: argparse.Namespace) -> int:
    arms = [json.loads(p.read_text()) for p in sorted(args.work.glob("arm-*.json"))]
    if not arms:
        print(f"recipes: no arm results in {args.work}", file=sys.stderr)
        return 2
    print(f"{'arm':<9}{'tokens':>10}{'span CE':>9}{'top-1':>8}{'pass@1':>8}{'exact':>7}{'train s':>9}")
    for a in arms:
        for c in a["curve"]:
            print(f"{a['arm']:<9}{c['tokens']:>10,}{c['span_ce']:>9.3f}{c['span_top1'] * 100:>7.1f}%"
                  f"{c['pass@1'] * 100:>7.1f}%{c['exact'] * 100:>6.1f}%{c['train_s']:>9.0f}")
    final = {a["arm"]: a["curve"][-1] for a in arms if a["curve"]}
    winner = min(final, key=lambda k: (final[k]["span_ce"], -final[k]["pass@1"]))
    out = {"arms": arms, "winner": winner, "rule": "lowest final held-out span CE (pass@1 breaks ties)",
           "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    plt = pyplot()
    if plt is None:
        print("recipes: matplotlib missing: no PNG", file=sys.stderr)
    else:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for a in arms:
            toks = [c["tokens"] / 1e6 for c in a["curve"]]
            axes[0].plot(toks, [c["span_ce"] for c in a["curve"]], marker="o", label=a["arm"])
            axes[1].plot(toks, [c["pass@1"] * 100 for c in a["curve"]], marker="o", label=a["arm"])
        axes[0].set(xlabel="training tokens (M)", ylabel="held-out span CE (nats/token)", title="left-to-right span CE")
        axes[1].set(xlabel="training tokens (M)", ylabel="pass@1 (%)",
                    title=f"HumanEval single-line, {arms[0]['tasks']} tasks")
        axes[0].legend()
        fig.tight_layout()
        fig.savefig(args.out.with_suffix(".png"), dpi=100)
    print(json.dumps({"winner": winner, **{f"{k}_span_ce": v["span_ce"] for k, v in final.items()},
                      **{f"{k}_pass@1": v["pass@1"] for k, v in final.items()}}))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.train.recipes", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--arm", required=True, choices=("mdlm", "ar_mdlm", "opt"))
    r.add_argument("--tokens", type=float, default=1.5e6, help="training tokens (the same for every arm)")
    r.add_argument("--points", type=int, default=3, help="learning-curve points")
    r.add_argument("--hidden", type=int, default=128)
    r.add_argument("--layers", type=int, default=4)
    r.add_argument("--seq-len", type=int, default=256)
    r.add_argument("--batch-size", type=int, default=16)
    r.add_argument("--spans", type=int, default=100)
    r.add_argument("--tasks", type=int, default=40)
    r.add_argument("--threads", type=int, default=1)
    r.add_argument("--workers", type=int, default=2)
    r.add_argument("--include", default=r"^(stdlib$|(numpy|click|jinja2|pygments|rich|requests|sympy|networkx|msgspec|pygls)==)")
    r.add_argument("--corpus-mb", type=float, default=0.0)
    for q in (r, sub.add_parser("report")):
        q.add_argument("--work", type=Path, default=Path.home() / ".cache" / "mercury-lsp" / "recipes")
    sub.choices["report"].add_argument("--out", type=Path, default=RESULTS / "recipes.json")
    args = p.parse_args(argv)
    return run_arm(args) if args.cmd == "run" else report(args)


if __name__ == "__main__":
    sys.exit(main())
