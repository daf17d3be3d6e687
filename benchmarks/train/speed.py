"""Training throughput of `mercury-lsp train fit` on this machine: precision x compile.

    python -m benchmarks.train.speed [--steps 24] [--out benchmarks/results/train_speed.json]

Each arm is the budgeted trainer (mercury_train/budget.py) on the embedded model's shape and
batch (mercury_train/recipe.py: CPU_SHAPE, 16 x 320 tokens), recipe ``mdlm`` (the diffusion
step; the autoregressive phase of ``ar_mdlm`` runs the same matrix products), in a process of
its own (a compiled arm leaves nothing behind for the next). The corpus is the Python
standard library of this machine, tokenized with the embedded tokenizer by the one-call run's
offline builder (mercury_train/gpu_run.build_tokens), built once in ``--work``.

Arms, named by (precision, compile):

* ``fp32 / off`` — what `train fit` ran on the CPU before (fp32 eager);
* ``bf16 / off`` — bf16 autocast, eager;
* ``bf16 / on`` — bf16 autocast, the loss compiled whatever the probe would say;
* ``auto / auto`` — the defaults: the precision ``budget.autocast_dtype`` chooses and the
  compile probe of ``BudgetTrainer._choose_compile`` (eager and compiled steps timed after the
  compile's warm-up, the faster kept).

Per arm: the one-off cost before steady training (the compile probe's compile and warm-up;
its steps train too), then ``--steps`` timed steps in steady state: tokens/s. The table gives
each arm's speed as a ratio of the first arm's, measured in the same run. Ends with one JSON
line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import RESULTS

ARMS = (("fp32", "off"), ("bf16", "off"), ("bf16", "on"), ("auto", "auto"))


def _corpus(work: Path, workers: int) -> Path:
    from mercury_train.gpu_run import build_tokens, contamination_index

    build_tokens(argparse.Namespace(work=work, include=r"^stdlib$", max_files=0, max_corpus_mb=0, workers=workers),
                 contamination_index(None))
    return work / "corpus"


def run_one(args: argparse.Namespace) -> int:
    """One arm in this process: prints one JSON line."""
    import torch

    from mercury_train.budget import BudgetTrainer, TokenCorpus
    from mercury_train.gpu_args import TOKENIZER
    from mercury_train.recipe import ARMS as RECIPES
    from mercury_train.recipe import CPU_BATCH_SIZE, CPU_SEQ_LEN, CPU_SHAPE, RunConfig

    if args.threads:
        torch.set_num_threads(args.threads)
    precision, compile_mode = args.one.split("/")
    data = TokenCorpus.load(args.work / "corpus", TOKENIZER)
    run = RunConfig(run_dir=str(args.work / f"run-{precision}-{compile_mode}"), recipe=RECIPES["mdlm"],
                    shape=CPU_SHAPE, seq_len=CPU_SEQ_LEN, batch_size=CPU_BATCH_SIZE, minutes=0.0,
                    max_tokens=10**12, device="cpu", compile=compile_mode, precision=precision,
                    eval_every_s=1e9, save_every_s=1e9)
    trainer = BudgetTrainer(run, data)
    t0 = time.perf_counter()
    trainer._choose_compile()
    setup_s = time.perf_counter() - t0
    trainer._timed_steps(1)  # the first step after the probe (allocator, caches)
    step_s = trainer._timed_steps(args.steps)
    tokens = run.batch_size * run.seq_len
    print(json.dumps({"precision": precision, "compile": compile_mode,
                      "autocast": str(trainer.amp).replace("torch.", "") if trainer.amp else "float32",
                      "compiled": trainer.compile_report.get("compile") == "kept",
                      "compile_report": trainer.compile_report, "setup_s": round(setup_s, 1),
                      "step_s": round(step_s, 4), "tokens_per_s": round(tokens / step_s),
                      "threads": torch.get_num_threads()}), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=24, help="timed steady-state steps per arm")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="corpus builder processes")
    ap.add_argument("--work", type=Path, default=None, help="corpus and runs (default: a temporary folder)")
    ap.add_argument("--out", type=Path, default=RESULTS / "train_speed.json")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)  # PRECISION/COMPILE: one arm here
    args = ap.parse_args(argv)
    if args.one:
        return run_one(args)
    with tempfile.TemporaryDirectory() as tmp:
        args.work = args.work or Path(tmp)
        t0 = time.perf_counter()
        corpus = json.loads((_corpus(args.work, args.workers) / "corpus.json").read_text())
        print(f"corpus: {corpus['train_tokens']:,} training tokens (standard library), {time.perf_counter() - t0:.0f} s",
              flush=True)
        rows = []
        for precision, compile_mode in ARMS:
            cmd = [sys.executable, "-m", "benchmarks.train.speed", "--one", f"{precision}/{compile_mode}",
                   "--steps", str(args.steps), "--threads", str(args.threads), "--work", str(args.work)]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            lines = [line for line in done.stdout.splitlines() if line.startswith("{\"precision\"")]
            if done.returncode or not lines:
                print(done.stderr[-2000:], file=sys.stderr)
                print(f"train_speed: arm {precision}/{compile_mode} failed (exit {done.returncode})", file=sys.stderr)
                return 1
            rows.append(json.loads(lines[-1]))
            print(f"  {precision}/{compile_mode}: {rows[-1]['tokens_per_s']:,} tokens/s", flush=True)
    base = rows[0]["tokens_per_s"]
    print(f"\n{'precision / compile':<22}{'autocast':>10}{'compiled':>10}{'setup s':>9}{'s/step':>8}"
          f"{'tokens/s':>10}{'x fp32':>8}")
    for r in rows:
        r["ratio"] = round(r["tokens_per_s"] / base, 2)
        print(f"{r['precision'] + ' / ' + r['compile']:<22}{r['autocast']:>10}{str(r['compiled']):>10}"
              f"{r['setup_s']:>9.1f}{r['step_s']:>8.3f}{r['tokens_per_s']:>10,}{r['ratio']:>8.2f}")
    import platform

    import torch

    out = {"benchmark": "train_speed", "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "torch": torch.__version__,
           "machine": {"platform": platform.platform(), "cpus": torch.get_num_threads(),
                       "native_bf16": bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())},
           "shape": "embedded (CPU_SHAPE), 16 x 320 tokens, recipe mdlm", "steps": args.steps,
           "corpus_train_tokens": corpus["train_tokens"], "arms": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    default = rows[-1]
    print(json.dumps({"train_speed_default_tokens_per_s": default["tokens_per_s"],
                      "train_speed_fp32_eager_tokens_per_s": base, "ratio": default["ratio"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
