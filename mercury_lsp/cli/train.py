"""``mercury-lsp train``: build the corpus, train the tokenizer, train and export the model.

    mercury-lsp train prepare [--out DIR]           corpus + tokenizer + token arrays
    mercury-lsp train fit [--minutes M] [...]        train (resumes from --run if it exists)
    mercury-lsp train export --out engine/models/mercury-coder-tiny
    mercury-lsp train gpu [...]                       one-call run (engine/train/GPU.md)
    mercury-lsp train export --shards DIR --out DIR  a GPU run's shards -> a model directory
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from mercury_lsp.cli.errors import UsageError, read_text
from mercury_lsp.cli.train_gpu import (
    add_gpu_subcommand,
    add_shard_options,
    add_v2_options,
    export_shards_cmd,
    prepare_v2_cmd,
)

CACHE = Path.home() / ".cache" / "mercury-lsp"
DEFAULT_EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "human-eval-infilling"


def add_subcommand(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="prepare data for, train and export the embedded model")
    tsub = p.add_subparsers(dest="train_command", required=True)

    prep = tsub.add_parser("prepare", help="build the corpus and tokenizer (network: PyPI only)")
    prep.add_argument("--out", type=Path, default=CACHE / "corpus")
    prep.add_argument("--wheels", type=Path, default=CACHE / "wheels")
    prep.add_argument("--eval-data", type=Path, default=DEFAULT_EVAL,
                      help="evaluation data checked for n-gram overlap (contamination)")
    prep.add_argument("--vocab-size", type=int, default=8192)
    prep.add_argument("--stdlib-only", action="store_true")
    add_v2_options(prep)
    prep.set_defaults(func=_prepare)

    fit = tsub.add_parser("fit", help="train (resumable: rerun with the same --run to continue)")
    _add_data_and_run(fit)
    fit.add_argument("--minutes", type=float, default=0.0, help="stop after this wall time")
    fit.add_argument("--total-tokens", type=float, default=60e6, help="LR schedule horizon")
    fit.add_argument("--hidden-size", type=int, default=256)
    fit.add_argument("--layers", type=int, default=6)
    fit.add_argument("--heads", type=int, default=4)
    fit.add_argument("--kv-heads", type=int, default=2)
    fit.add_argument("--ffn", type=int, default=768)
    fit.add_argument("--seq-len", type=int, default=None)
    fit.add_argument("--batch-size", type=int, default=None)
    fit.add_argument("--lr", type=float, default=None)
    fit.add_argument("--infill-frac", type=float, default=None,
                     help="share of infill-shaped rows (at the end of the run with --infill-frac-start)")
    fit.add_argument("--infill-frac-start", type=float, default=None,
                     help="ramp the infill share linearly from this value over the run")
    fit.add_argument("--pad-weight", type=float, default=None, help="loss weight of padding targets")
    fit.add_argument("--weight-t-floor", type=float, default=None,
                     help="cap the 1/t loss weight at 1/FLOOR (0: the plain 1/t weight)")
    fit.add_argument("--tail-frac", type=float, default=None,
                     help="share of infill rows masked from a random cut to the span's end")
    fit.add_argument("--warmup-steps", type=int, default=None)
    fit.add_argument("--init-from", type=Path, default=None,
                     help="start a new run from another run's checkpoint (weights, optimiser, "
                          "tokens seen) under this command's settings; the shape is that run's")
    fit.add_argument("--seed", type=int, default=None)
    # Flags left at None take TrainConfig's defaults (engine/train/config.py): one source of
    # defaults, read at run time so that building the parser imports no engine code.
    fit.add_argument("--device", default="auto")
    fit.add_argument("--threads", type=int, default=0)
    fit.add_argument("--no-compile", action="store_true")
    fit.set_defaults(func=_fit)

    exp = tsub.add_parser("export", help="write the run's weights in the embedded format")
    _add_data_and_run(exp)
    exp.add_argument("--out", type=Path, required=True)
    exp.add_argument("--model-card", type=Path, default=None)
    add_shard_options(exp)
    exp.set_defaults(func=_export)
    add_gpu_subcommand(tsub)


def _add_data_and_run(p: argparse.ArgumentParser) -> None:
    """The prepared corpus and the run directory, shared by ``fit`` and ``export``."""
    p.add_argument("--data", type=Path, default=CACHE / "corpus")
    p.add_argument("--run", type=Path, default=CACHE / "runs" / "embedded")


def _prepare(args: argparse.Namespace) -> int:
    if args.v2 or args.offline:
        return prepare_v2_cmd(args)
    from engine.train.corpus import PYPI_PACKAGES
    from engine.train.corpus_v2 import build_corpus
    from engine.train.tokens import prepare_tokens

    eval_dir = args.eval_data if args.eval_data.is_dir() else None
    if eval_dir is None:
        print(f"warning: {args.eval_data} not found: contamination check skipped")
    report = build_corpus(args.out, packages=[] if args.stdlib_only else PYPI_PACKAGES,
                          eval_dir=eval_dir, cache=args.wheels, workers=args.workers)
    print(json.dumps({k: v for k, v in asdict(report).items() if k != "sources"}, indent=2))
    print(json.dumps(prepare_tokens(args.out, args.vocab_size)))
    return 0


def _train_config(args: argparse.Namespace):
    from engine.train.config import ModelShape, TrainConfig

    shape = ModelShape(hidden_size=args.hidden_size, num_layers=args.layers, num_heads=args.heads,
                       num_kv_heads=args.kv_heads, intermediate_size=args.ffn)
    given = {k: getattr(args, k) for k in ("seq_len", "batch_size", "lr", "infill_frac", "infill_frac_start",
                                           "pad_weight", "weight_t_floor", "tail_frac", "warmup_steps", "seed")
             if getattr(args, k) is not None}
    if args.init_from is not None:
        source = Path(args.init_from) / "train_config.json"
        if not (Path(args.init_from) / "last.pt").exists() or not source.exists():
            raise UsageError(f"--init-from {args.init_from}: no run there (last.pt and train_config.json)")
        shape = ModelShape(**json.loads(source.read_text())["shape"])
        given["init_from"] = str(args.init_from)
    return TrainConfig(data=str(args.data), run_dir=str(args.run), shape=shape, total_tokens=int(args.total_tokens),
                       device=args.device, minutes=args.minutes, threads=args.threads,
                       compile=not args.no_compile, **given)


def _fit(args: argparse.Namespace) -> int:
    from engine.train.trainer import Trainer

    cfg = _train_config(args)
    saved = Path(cfg.run_dir) / "train_config.json"
    if saved.exists():  # resuming: the run's own shape wins over the command line's
        from engine.train.config import ModelShape, TrainConfig
        raw = json.loads(saved.read_text())
        raw["shape"] = ModelShape(**raw["shape"])
        raw.update(minutes=args.minutes, device=args.device, threads=args.threads)
        cfg = TrainConfig(**raw)
    if not (Path(cfg.data) / "tokenizer.json").is_file():
        raise UsageError(f"--data {cfg.data}: no prepared corpus there (run `mercury-lsp train prepare` first)")
    trainer = Trainer(cfg)
    print(f"model: {trainer.model_cfg.num_parameters / 1e6:.2f}M parameters, device {trainer.device}")
    stats = trainer.fit()
    print(json.dumps(stats))
    return 0


def _export(args: argparse.Namespace) -> int:
    if args.shards is not None:
        return export_shards_cmd(args)
    from engine.train.trainer import export_run

    if not (Path(args.run) / "last.pt").is_file():
        raise UsageError(f"--run {args.run}: no trained run there (last.pt)")
    card = read_text(args.model_card, "--model-card") if args.model_card else None
    print(export_run(args.run, args.data, args.out, card))
    return 0
