"""One-call training run: corpus from the installed packages -> budgeted training -> shards.

    python3 -m mercury_train.gpu_run [--out DIR] [--minutes 8] [--smoke] [...]

On a machine with CUDA and no network (mercury_train/GPU.md has the exact command):

1. builds the corpus from the Python source installed there (mercury_train/installed.py:
   licences from metadata, ``name==version`` provenance, dedup, the 13-gram contamination
   check with whatever evaluation data is there or carried as hashes), in worker processes,
   and tokenizes it with the embedded model's tokenizer (Rust threads);
2. trains the default recipe (mercury_train/recipe.py) on the ~29 M-parameter shape for what is
   left of the wall-clock budget (mercury_train/budget.py);
3. writes into ``--out`` (``$OUT`` when set): the EMA weights as bf16 shards of at most 16 MiB
   with their index, ``train_log.json`` (tokens/s, loss curve, held-out probes, compile
   decision) and ``corpus.json`` (the provenance manifest).

``--smoke`` runs exactly this code on the CPU with a tiny shape and a few source files: the
test suite's guard that the one GPU call cannot die on a typo. Without CUDA and without
``--smoke``/``--device cpu`` it refuses to start, with a one-line reason.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

from mercury_train.corpus_v2 import tokenize
from mercury_train.decontam import ContaminationIndex
from mercury_train.gpu_args import EVAL_CANDIDATES, REPO, TOKENIZER, add_arguments
from mercury_train.installed import build_offline, installed_sources, manifest, stdlib_source
from mercury_train.recipe import ARMS, DEFAULT_ARM, GPU_EMA_DECAY, GPU_SHAPE, SMOKE_SHAPE, RunConfig

RESERVE_S = 40.0  # of the budget, kept for the final evaluation, checkpoint and shards
# Below these a run cannot draw its windows (a few times the longest sequence, 512 tokens).
MIN_TRAIN_TOKENS, MIN_HELDOUT_TOKENS = 10_000, 2_000


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="gpu_run", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    return p.parse_args(argv)


# ---------------------------------------------------------------------------- corpus
def contamination_index(path: Path | None) -> ContaminationIndex:
    if path is None:
        path = next((c for c in EVAL_CANDIDATES if c.exists()), None)
    return ContaminationIndex.load(path)


def build_tokens(args: argparse.Namespace, index: ContaminationIndex) -> dict:
    """train.bin / heldout.bin (uint16) and corpus.json in ``work/corpus``, reused when an
    earlier call built them with the same settings on this machine."""
    tok_text = TOKENIZER.read_text(encoding="utf-8")
    key = hashlib.sha256(json.dumps([args.include, args.max_files, args.max_corpus_mb, index.source,
                                     hashlib.sha256(tok_text.encode()).hexdigest()]).encode()).hexdigest()[:16]
    out = args.work / "corpus"
    done = out / "corpus.json"
    if done.is_file() and json.loads(done.read_text()).get("key") == key:
        return json.loads(done.read_text())
    t0 = time.perf_counter()
    found, refused = installed_sources()
    sources = [stdlib_source(), *found]
    if args.include:
        sources = [s for s in sources if re.search(args.include, s.name)]
    if args.max_files:
        sources = [replace(s, files=s.files[: args.max_files]) for s in sources]
    train, held, report = build_offline(index, args.workers, sources=sources, refused=refused,
                                        max_bytes=int(args.max_corpus_mb * 1e6))
    counts = {}
    out.mkdir(parents=True, exist_ok=True)
    for split, docs in (("train", train), ("heldout", held)):
        arr = tokenize(docs, tok_text)
        arr.tofile(out / f"{split}.bin")
        counts[f"{split}_tokens"] = int(arr.size)
    info = {"key": key, **counts, "build_s": round(time.perf_counter() - t0, 1), "workers": args.workers,
            "tokenizer": str(TOKENIZER.relative_to(REPO)), **manifest(report)}
    done.write_text(json.dumps(info, indent=2) + "\n")
    return info


# ---------------------------------------------------------------------------- run
def run_config(args: argparse.Namespace, train_minutes: float) -> RunConfig:
    smoke = args.smoke
    recipe = ARMS[args.arm]
    recipe = replace(recipe, ema_decay=recipe.ema_decay or GPU_EMA_DECAY)
    cfg = RunConfig(run_dir=str(args.work / "run"), recipe=recipe, shape=SMOKE_SHAPE if smoke else GPU_SHAPE,
                    seq_len=64 if smoke else 512, batch_size=8 if smoke else 256, minutes=train_minutes,
                    max_tokens=args.max_tokens, device=args.device, compile="off" if smoke else "auto",
                    log_every=5 if smoke else 25, eval_every_s=10.0 if smoke else 45.0,
                    save_every_s=5.0 if smoke else 60.0, eval_batches=2 if smoke else 4)
    if smoke:
        cfg.recipe = replace(cfg.recipe, max_pad=16)
    for name in ("compile", "batch_size", "seq_len"):
        if getattr(args, name) is not None:
            setattr(cfg, name, getattr(args, name))
    return cfg


def main(argv: list[str] | None = None) -> int:
    return run(parse_args(argv))


def run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    args.arm = args.arm or DEFAULT_ARM
    if args.write_contamination:
        index = contamination_index(args.contamination)
        if not index.active:
            print("gpu_run: no evaluation data found to hash", file=sys.stderr)
            return 2
        index.save(args.write_contamination)
        print(f"{args.write_contamination}: {index.hashes.size} n-gram hashes from {index.source}")
        return 0
    import torch

    args.device = args.device or ("cpu" if args.smoke else "cuda")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"gpu_run: refusing to start: no CUDA device is visible (torch {torch.__version__}); "
              "use --smoke or --device cpu for the CPU run", file=sys.stderr)
        return 2
    if not TOKENIZER.is_file():
        print(f"gpu_run: {TOKENIZER} is missing", file=sys.stderr)
        return 2
    index = contamination_index(args.contamination)
    corpus = build_tokens(args, index)
    print(json.dumps({k: corpus[k] for k in ("train_tokens", "heldout_tokens", "build_s")}
                     | {"contamination_check": corpus["report"]["contamination_check"]}), flush=True)
    if corpus["train_tokens"] < MIN_TRAIN_TOKENS or corpus["heldout_tokens"] < MIN_HELDOUT_TOKENS:
        print(f"gpu_run: corpus too small to train on ({corpus['train_tokens']} tokens)", file=sys.stderr)
        return 2
    return train_and_write(args, corpus, t0)


def train_and_write(args: argparse.Namespace, corpus: dict, t0: float) -> int:
    import torch

    from mercury_train.budget import BudgetTrainer, TokenCorpus
    from mercury_train.shards import write_shards

    if args.device == "cpu":
        torch.set_num_threads(max(1, min(args.workers, torch.get_num_threads())))
    else:
        torch.backends.cuda.matmul.allow_tf32 = True
    train_minutes = max(0.05, args.minutes - (time.perf_counter() - t0 + RESERVE_S) / 60)
    cfg = run_config(args, train_minutes)
    data = TokenCorpus.load(args.work / "corpus", TOKENIZER)
    trainer = BudgetTrainer(cfg, data)
    n_params = trainer.model_cfg.num_parameters
    print(json.dumps({"parameters": n_params, "device": str(trainer.device), "train_minutes": round(train_minutes, 2),
                      "arm": args.arm}), flush=True)
    stats = trainer.fit()
    args.out.mkdir(parents=True, exist_ok=True)
    files = write_shards(trainer.final_state(), args.out, trainer.model_cfg.to_hf_dict(),
                         data.tokenizer_sha256,
                         extra={"arm": args.arm, "tokens": trainer.tokens, "ema": bool(trainer.ema)})
    records = [json.loads(line) for line in (Path(cfg.run_dir) / "log.jsonl").read_text().splitlines()]
    speeds = [r["tokens_per_s"] for r in records if "tokens_per_s" in r]
    log = {"stats": stats, "parameters": n_params, "median_tokens_per_s": statistics.median(speeds) if speeds else None,
           "device": torch.cuda.get_device_name() if trainer.device.type == "cuda" else "cpu",
           "torch": torch.__version__, "config": asdict(cfg), "shards": [f.name for f in files],
           "corpus": {k: v for k, v in corpus.items() if k != "report"}
           | {"report": {k: v for k, v in corpus["report"].items() if k not in ("sources", "refused")}},
           "wall_s": round(time.perf_counter() - t0, 1), "log": records}
    (args.out / "train_log.json").write_text(json.dumps(log, indent=1) + "\n")
    (args.out / "corpus.json").write_text(json.dumps(corpus, indent=1) + "\n")
    print(json.dumps({"wall_s": log["wall_s"], "tokens": trainer.tokens,
                      "median_tokens_per_s": log["median_tokens_per_s"], "shards": len(files),
                      "out": str(args.out)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
