"""The one-call run's options (mercury_train/gpu_run.py), importable without torch or numpy:
``mercury-lsp train gpu`` builds its parser from them."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from mercury_train.recipe import ARMS, DEFAULT_ARM

REPO = Path(__file__).resolve().parents[1]
TOKENIZER = REPO / "mercury_engine" / "models" / "mercury-coder-tiny" / "tokenizer.json"
# Where the contamination check looks, in order: the evaluation data beside the checkout, or
# its n-gram hashes carried to a machine that lacks it (written by --write-contamination).
EVAL_CANDIDATES = (REPO.parent / "shared" / "data" / "human-eval-infilling",
                   Path("/work/shared/data/human-eval-infilling"), REPO / ".carry" / "eval_ngrams.npy")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "gpu-out")),
                   help="where shards and logs go ($OUT when set)")
    p.add_argument("--work", type=Path, default=Path("/tmp/mercury-gpu"), help="corpus and run state")
    p.add_argument("--minutes", type=float, default=7.5, help="wall-clock budget of the whole command")
    p.add_argument("--max-tokens", type=int, default=0, help="also stop after this many training tokens")
    p.add_argument("--smoke", action="store_true", help="the CPU smoke run: tiny shape, CPU")
    p.add_argument("--device", default=None, help="cuda (default) or cpu")
    p.add_argument("--arm", choices=tuple(ARMS), default=None,
                   help=f"the recipe (default: {DEFAULT_ARM}, mercury_train/recipe.py's DEFAULT_ARM)")
    p.add_argument("--compile", choices=("auto", "on", "off"), default=None)
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--seq-len", type=int, default=None)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--include", default=None, help="regex: only sources whose name==version matches")
    p.add_argument("--max-files", type=int, default=0, help="at most this many files per source (0: all)")
    p.add_argument("--max-corpus-mb", type=float, default=0.0, help="cap on training text (0: none)")
    p.add_argument("--contamination", type=Path, default=None,
                   help="evaluation data directory or saved hashes (default: the first that exists of "
                        + ", ".join(str(c) for c in EVAL_CANDIDATES) + ")")
    p.add_argument("--write-contamination", type=Path, default=None,
                   help="only write the evaluation n-gram hashes to this .npy (to carry) and exit")
