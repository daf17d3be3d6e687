"""``mercury-lsp train gpu`` (the one-call training run) and ``train export --shards``.

    mercury-lsp train gpu [--out DIR] [--minutes 8] [--smoke] [...]   (mercury_train/GPU.md)
    mercury-lsp train export --shards DIR --out mercury_engine/models/NAME [--model-card FILE]
    mercury-lsp train prepare --v2 | --offline [--out DIR]             corpus v2 (mercury_train/corpus_v2.py)

``train gpu`` is ``python3 -m mercury_train.gpu_run`` (the form to use on a machine where this
package is not installed), with the same options (mercury_train/gpu_args.py).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

EMBEDDED_TOKENIZER = Path(__file__).resolve().parents[2] / "mercury_engine" / "models" / "mercury-coder-tiny" / "tokenizer.json"


def add_gpu_subcommand(tsub: argparse._SubParsersAction) -> None:
    from mercury_train.gpu_args import add_arguments

    gpu = tsub.add_parser("gpu", help="one call: corpus from installed packages, budgeted training, shards")
    add_arguments(gpu)
    gpu.set_defaults(func=_gpu)


def add_shard_options(exp: argparse.ArgumentParser) -> None:
    exp.add_argument("--shards", type=Path, default=None,
                     help="export a shard set written by `train gpu` (verified against its index)")
    exp.add_argument("--tokenizer", type=Path, default=EMBEDDED_TOKENIZER,
                     help="the tokenizer the shards were trained with (checked by SHA-256)")


def add_v2_options(prep: argparse.ArgumentParser) -> None:
    prep.add_argument("--v2", action="store_true",
                      help="corpus v2: the longer pinned wheel list, the embedded tokenizer (mercury_train/corpus_v2.py)")
    prep.add_argument("--offline", action="store_true",
                      help="corpus from the packages installed here (no network), the embedded tokenizer")
    prep.add_argument("--workers", type=int, default=os.cpu_count() or 1)


def prepare_v2_cmd(args: argparse.Namespace) -> int:
    import json

    from mercury_train.corpus_v2 import build_v2
    from mercury_train.decontam import ContaminationIndex

    index = ContaminationIndex.load(args.eval_data if args.eval_data.exists() else None)
    if not index.active:
        print(f"warning: {args.eval_data} not found: contamination check skipped")
    print(json.dumps(build_v2(args.out, index, args.workers, offline=args.offline, cache=args.wheels), indent=2))
    return 0


def _gpu(args: argparse.Namespace) -> int:
    from mercury_train.gpu_run import run

    return run(args)


def export_shards_cmd(args: argparse.Namespace) -> int:
    from mercury_engine.errors import CheckpointError
    from mercury_train.shards import export_shards

    card = args.model_card.read_text() if args.model_card else None
    try:
        print(export_shards(args.shards, args.tokenizer, args.out, card))
    except CheckpointError as exc:
        raise SystemExit(f"train export: {exc}") from None
    return 0
