"""The command line of ``python -m benchmarks.humaneval.quality`` (see benchmarks/humaneval/quality.py)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from benchmarks.humaneval import tasks as humaneval
from benchmarks.humaneval.tasks import REPO_ROOT

DEFAULT_BENCHMARKS = "single-line,multi-line,random-span-light"
DEFAULT_OUT = REPO_ROOT / "benchmarks" / "results" / "quality.json"
RESERVED_DECODE_KEYS = ("prefix", "suffix", "max_tokens")  # set by the harness itself


class UsageError(Exception):
    """A command-line mistake: printed without a traceback, exit status 2."""


# ---------------------------------------------------------------------------- arguments
def parse_decode(items: Sequence[str]) -> dict[str, object]:
    """``["steps=16", "sampler=fast"]`` -> ``{"steps": 16, "sampler": "fast"}``.

    Values are JSON when they parse as JSON (numbers, true/false/null, quoted strings);
    ``True``/``False``/``None`` are accepted too; anything else stays a string.
    """
    out: dict[str, object] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise UsageError(f"--decode expects key=value with a keyword name, got {item!r}")
        if key in RESERVED_DECODE_KEYS:
            raise UsageError(f"--decode {key}=... is set by the harness (use --max-tokens for max_tokens)")
        python_words = {"True": True, "False": False, "None": None}
        if raw in python_words:
            value: object = python_words[raw]
        else:
            try:
                value = json.loads(raw)
            except json.JSONDecodeError:
                value = raw
        out[key] = value
    return out


def parse_steps_grid(spec: str | None) -> list[int]:
    if not spec:
        return []
    try:
        steps = [int(s) for s in spec.split(",") if s.strip()]
    except ValueError:
        raise UsageError(f"--steps-grid expects comma-separated integers, got {spec!r}") from None
    if not steps or any(s <= 0 for s in steps):
        raise UsageError(f"--steps-grid expects positive integers, got {spec!r}")
    return sorted(set(steps))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.humaneval.quality",
                                description="HumanEval-infilling pass@1 and exact match of the engine.")
    p.add_argument("--model", default=None, help="model directory or hub id (default: the embedded model)")
    p.add_argument("--benchmarks", default=DEFAULT_BENCHMARKS,
                   help=f"comma-separated: {', '.join(humaneval.BENCHMARK_FILES)}, or 'all' "
                        f"(default: {DEFAULT_BENCHMARKS})")
    p.add_argument("--limit", type=int, default=None,
                   help="N tasks per benchmark, evenly spaced over the file (deterministic)")
    p.add_argument("--seed", type=int, default=0, help="decoding seed passed to engine.infill (default 0)")
    p.add_argument("--max-tokens", type=int, default=None,
                   help="span budget for every benchmark (default: single-line 48, others 128)")
    p.add_argument("--steps-grid", default=None, metavar="S1,S2,...",
                   help="also run with steps=S for each value and plot pass@1 against steps")
    p.add_argument("--decode", nargs="+", action="extend", default=[], metavar="KEY=VALUE",
                   help="extra keyword arguments of engine.infill (e.g. steps=16 sampler=fast)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT,
                   help="summary JSON; per-task lines go to <stem>.tasks.jsonl, the plot to <stem>.steps.png")
    p.add_argument("--canonical", action="store_true",
                   help="no model: execute canonical_solution (self-check, must score 100%%)")
    p.add_argument("--empty", action="store_true",
                   help="no model: every completion is empty (the floor a model has to beat: "
                        "some tasks pass without their line)")
    p.add_argument("--oracle-length", action="store_true",
                   help="decode every task with its true span length (the canonical solution's token "
                        "count, no early stop): the ceiling of a length policy")
    p.add_argument("--data-dir", default=None,
                   help=f"directory of the HumanEval-infilling files (default: ${humaneval.ENV_DATA_DIR} "
                        f"or {humaneval.DEFAULT_DATA_DIR})")
    p.add_argument("--timeout", type=float, default=humaneval.DEFAULT_TIMEOUT_S,
                   help="wall-clock seconds per task (default 3, as upstream)")
    p.add_argument("--workers", type=int, default=None, help="parallel sandboxes (default: CPU count)")
    p.add_argument("--device", default="auto")
    p.add_argument("--dtype", default="auto")
    return p
