"""``mercury-lsp train gpu`` (the one-call training run) and ``train export --shards``.

    mercury-lsp train gpu [--out DIR] [--minutes 8] [--smoke] [...]   (engine/train/GPU.md)
    mercury-lsp train export --shards DIR --out engine/models/NAME [--model-card FILE]

``train gpu`` is ``python3 -m engine.train.gpu_run`` (the form to use on a machine where this
package is not installed), with the same options (engine/train/gpu_args.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path

EMBEDDED_TOKENIZER = Path(__file__).resolve().parents[1] / "engine" / "models" / "mercury-coder-tiny" / "tokenizer.json"


def add_gpu_subcommand(tsub: argparse._SubParsersAction) -> None:
    from engine.train.gpu_args import add_arguments

    gpu = tsub.add_parser("gpu", help="one call: corpus from installed packages, budgeted training, shards")
    add_arguments(gpu)
    gpu.set_defaults(func=_gpu)


def add_shard_options(exp: argparse.ArgumentParser) -> None:
    exp.add_argument("--shards", type=Path, default=None,
                     help="export a shard set written by `train gpu` (verified against its index)")
    exp.add_argument("--tokenizer", type=Path, default=EMBEDDED_TOKENIZER,
                     help="the tokenizer the shards were trained with (checked by SHA-256)")


def _gpu(args: argparse.Namespace) -> int:
    from engine.train.gpu_run import run

    return run(args)


def export_shards_cmd(args: argparse.Namespace) -> int:
    from engine.errors import CheckpointError
    from engine.train.shards import export_shards

    card = args.model_card.read_text() if args.model_card else None
    try:
        print(export_shards(args.shards, args.tokenizer, args.out, card))
    except CheckpointError as exc:
        raise SystemExit(f"train export: {exc}") from None
    return 0
