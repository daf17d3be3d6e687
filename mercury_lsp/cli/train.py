"""``mercury-lsp train``: build the corpus, train the tokenizer, train and export the model.

    mercury-lsp train prepare [--out DIR]           corpus + tokenizer + token arrays
    mercury-lsp train fit [--arm A] [--minutes M] [...]  train a recipe (resumes from --run if it exists)
    mercury-lsp train export --out mercury_engine/models/mercury-coder-tiny
    mercury-lsp train gpu [...]                       one-call run (mercury_train/GPU.md)
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
from mercury_train.recipe import ARMS, CPU_BATCH_SIZE, CPU_SEQ_LEN, CPU_SHAPE, DEFAULT_ARM

# ``train fit`` flags that override a field of the arm's Recipe (mercury_train/recipe.py).
RECIPE_FLAGS = {
    "lr": "peak learning rate",
    "infill_frac": "share of infill-shaped rows in the diffusion batches",
    "tail_frac": "share of infill rows masked from a random cut to the span's end",
    "weight_t_floor": "cap the 1/t loss weight at 1/FLOOR",
    "ar_frac": "ar_mdlm: share of the budget trained autoregressively",
    "ema_decay": "keep an EMA of the weights with this decay and export it (0: none)",
    "retrieval_share": "share of the diffusion rows that carry chunks retrieved from other files of the same "
                       "package before the prefix, as the daemon sends them (0: none; the rows are built "
                       "once into the corpus's retrieval.npz, mercury_lsp/cli/train_retrieval.py)",
}
# Retrieval rows built for --retrieval-share: each is reused (re-masked) about once per 10 M
# training tokens at a share of 0.5.
RETRIEVAL_ROWS = 16000
# A killed CPU run loses at most this much training (the retired loop saved every 5 minutes).
SAVE_EVERY_S = EVAL_EVERY_S = 300.0
CACHE = Path.home() / ".cache" / "mercury-lsp"
# The evaluation data beside the project (``<repo>/../shared/data``, where benchmarks/humaneval/tasks
# reads it): the corpus is checked against it for contamination. (It once pointed inside the
# repository, where nothing is, so `train prepare` warned and skipped the check.)
DEFAULT_EVAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "human-eval-infilling"


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

    fit = tsub.add_parser(
        "fit", help="train on the CPU (or CUDA) with a recipe (resumable: rerun with the same --run)",
        description="Train the model with the budgeted trainer (mercury_train/budget.py), the same loop as "
                    "`train gpu`. The budget is --minutes of training and/or --total-tokens, whichever ends "
                    "first; the learning-rate schedule spans it. Rerunning with the same --run resumes an "
                    "interrupted run under its saved settings. The old loop's --infill-frac-start, "
                    "--pad-weight, --warmup-steps and --no-compile are gone (no recipe field holds them; "
                    "the warm-up is the recipe's share of the budget, compilation is --compile).")
    _add_data_and_run(fit)
    fit.add_argument("--arm", choices=tuple(ARMS), default=DEFAULT_ARM,
                     help=f"the recipe (mercury_train/recipe.py; default {DEFAULT_ARM}, the measured winner "
                          "of benchmarks/results/recipes.md)")
    fit.add_argument("--minutes", type=float, default=0.0, help="training wall-clock budget (0: none)")
    fit.add_argument("--total-tokens", type=float, default=60e6, help="training token budget (0: none)")
    fit.add_argument("--hidden-size", type=int, default=CPU_SHAPE.hidden_size)
    fit.add_argument("--layers", type=int, default=CPU_SHAPE.num_layers)
    fit.add_argument("--heads", type=int, default=CPU_SHAPE.num_heads)
    fit.add_argument("--kv-heads", type=int, default=CPU_SHAPE.num_kv_heads)
    fit.add_argument("--ffn", type=int, default=CPU_SHAPE.intermediate_size)
    fit.add_argument("--max-positions", type=int, default=CPU_SHAPE.max_position_embeddings)
    fit.add_argument("--seq-len", type=int, default=CPU_SEQ_LEN)
    fit.add_argument("--batch-size", type=int, default=CPU_BATCH_SIZE)
    # Each of these overrides the arm's Recipe field of the same name (None: the arm's value).
    for flag, what in RECIPE_FLAGS.items():
        fit.add_argument(f"--{flag.replace('_', '-')}", type=float, default=None, help=what)
    fit.add_argument("--init-from", type=Path, default=None,
                     help="start a new run from another run's weights, or a model directory's (the "
                          "embedded model: its tokenizer must be the corpus's), under this command's "
                          "recipe, schedule and budget; the shape is theirs")
    fit.add_argument("--retrieval-rows", type=int, default=RETRIEVAL_ROWS,
                     help="retrieval rows to build when the corpus has none (with --retrieval-share)")
    fit.add_argument("--seed", type=int, default=1234)
    fit.add_argument("--log-every", type=int, default=20, help="steps between log.jsonl lines")
    fit.add_argument("--device", default="auto", help="auto (CUDA when visible, else CPU), cpu or cuda")
    fit.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch's default)")
    fit.add_argument("--compile", choices=("auto", "on", "off"), default="auto",
                     help="torch.compile the loss (auto: time eager and compiled steps after the "
                          "compile's warm-up, keep the faster)")
    fit.add_argument("--precision", choices=("auto", "bf16", "fp32"), default="auto",
                     help="the forward's autocast (auto: bf16 on CUDA and on CPUs with native bf16, "
                          "else fp32)")
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
    from mercury_train.corpus import PYPI_PACKAGES
    from mercury_train.corpus_v2 import build_corpus
    from mercury_train.tokens import prepare_tokens

    eval_dir = args.eval_data if args.eval_data.is_dir() else None
    if eval_dir is None:
        print(f"warning: {args.eval_data} not found: contamination check skipped")
    report = build_corpus(args.out, packages=[] if args.stdlib_only else PYPI_PACKAGES,
                          eval_dir=eval_dir, cache=args.wheels, workers=args.workers)
    print(json.dumps({k: v for k, v in asdict(report).items() if k != "sources"}, indent=2))
    print(json.dumps(prepare_tokens(args.out, args.vocab_size)))
    return 0


def _run_config(args: argparse.Namespace):
    """The run's settings: a run directory that holds a run resumes under its saved settings
    (only the device and the compile choice are this command's)."""
    from dataclasses import replace

    from mercury_train.recipe import ModelShape, RunConfig
    from mercury_train.runs import load_run_config, source_shape

    device = args.device
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    compile_mode, precision = args.compile, args.precision
    if (Path(args.run) / "state.pt").is_file():
        return replace(load_run_config(args.run), device=device, compile=compile_mode, precision=precision)
    if (Path(args.run) / "last.pt").is_file():
        raise UsageError(f"--run {args.run}: a run of the retired trainer (last.pt); start a new --run")
    shape = ModelShape(hidden_size=args.hidden_size, num_layers=args.layers, num_heads=args.heads,
                       num_kv_heads=args.kv_heads, intermediate_size=args.ffn,
                       max_position_embeddings=args.max_positions)
    if args.init_from is not None:
        shape = source_shape(args.init_from)
    recipe = replace(ARMS[args.arm], **{k: getattr(args, k) for k in RECIPE_FLAGS if getattr(args, k) is not None})
    if args.minutes <= 0 and args.total_tokens <= 0:
        raise UsageError("train fit: give a budget (--minutes or --total-tokens)")
    return RunConfig(run_dir=str(args.run), recipe=recipe, shape=shape, seq_len=args.seq_len,
                     batch_size=args.batch_size, minutes=args.minutes, max_tokens=int(args.total_tokens),
                     device=device, compile=compile_mode, precision=precision, seed=args.seed, log_every=args.log_every,
                     eval_every_s=EVAL_EVERY_S, save_every_s=SAVE_EVERY_S, init_from=str(args.init_from) if args.init_from else None)


def _fit(args: argparse.Namespace) -> int:
    from mercury_engine.errors import CheckpointError

    try:
        run = _run_config(args)
    except CheckpointError as exc:
        raise UsageError(f"train fit: {exc}") from None
    if not (Path(args.data) / "tokenizer.json").is_file():
        raise UsageError(f"--data {args.data}: no prepared corpus there (run `mercury-lsp train prepare` first)")
    import torch

    from mercury_train.budget import BudgetTrainer, TokenCorpus

    if args.threads:
        torch.set_num_threads(args.threads)
    if run.recipe.retrieval_share > 0:
        _ensure_retrieval_rows(Path(args.data), run.seq_len, args.retrieval_rows, run.seed)
    try:
        trainer = BudgetTrainer(run, TokenCorpus.load(args.data))
    except CheckpointError as exc:
        raise UsageError(f"train fit: {exc}") from None
    print(f"model: {trainer.model_cfg.num_parameters / 1e6:.2f}M parameters, recipe {run.recipe.objective} "
          f"({'EMA' if trainer.ema else 'raw weights'}), device {trainer.device}, "
          f"{'bf16 autocast' if trainer.amp else 'fp32'}", flush=True)
    stats = trainer.fit()
    print(json.dumps(stats))
    return 0


def _ensure_retrieval_rows(data: Path, seq_len: int, rows: int, seed: int) -> None:
    """Build the corpus's retrieval rows once (``retrieval.npz``; rebuilt when the window differs)."""
    from mercury_train.retrieval import ROWS_FILE, RetrievalRows

    path = data / ROWS_FILE
    if path.is_file() and RetrievalRows.load(path).tokens.shape[1] == seq_len:
        return
    from mercury_lsp.cli.train_retrieval import build_rows

    built, sources = build_rows(data, (data / "tokenizer.json").read_text(encoding="utf-8"), seq_len, rows, seed)
    built.save(path, {"rows": len(built), "packages": len({s.package for s in sources}), "seq_len": seq_len})


def _export(args: argparse.Namespace) -> int:
    if args.shards is not None:
        return export_shards_cmd(args)
    from mercury_engine.errors import CheckpointError
    from mercury_train.runs import export_run

    if not (Path(args.run) / "state.pt").is_file():
        raise UsageError(f"--run {args.run}: no trained run there (state.pt)")
    card = read_text(args.model_card, "--model-card") if args.model_card else None
    try:
        print(export_run(args.run, Path(args.data) / "tokenizer.json", args.out, card))
    except CheckpointError as exc:
        raise UsageError(f"train export: {exc}") from None
    return 0
