"""HumanEval-infilling quality: pass@1 and exact match of the engine's infills.

    python -m benchmarks.humaneval.quality [--model DIR] [--benchmarks single-line,multi-line,random-span-light]
        [--limit N] [--seed S] [--max-tokens N] [--steps-grid 8,16,32] [--decode key=value ...]
        [--out benchmarks/results/quality.json] [--canonical] [--oracle-length]
        [--data-dir DIR] [--timeout S] [--workers N] [--device auto] [--dtype auto]

For every task the engine fills ``prompt`` .. ``suffix`` (greedy by default) with at most
``--max-tokens`` tokens (default per benchmark: single-line 48, the others 128); the completion
is executed in the sandbox of :mod:`benchmarks.humaneval.tasks` and compared with the canonical
solution. ``--limit N`` keeps N tasks per benchmark evenly spaced over the file (indices
``i * n // N``; deterministic, no seed involved). ``--seed`` is the decoding seed (it matters only
with ``--decode temperature=...`` > 0). ``--decode key=value`` sets any field of
``mercury_engine.InfillOptions`` (values parsed as JSON when they parse: ``steps=16``,
``temperature=0.2``, ``sampler=reference``, ``heal=false``); unset fields keep the engine's
defaults (the fast sampler, balanced preset). ``--steps-grid`` re-runs generation with ``steps=`` each value
and plots pass@1 against denoising steps (``<out stem>.steps.png``). ``--canonical`` runs no
model and executes ``canonical_solution``: the harness's self-check, which must score 100% on
all 8,652 tasks (``--benchmarks all``); the exit status is 1 when it does not.
``--oracle-length`` gives the model the true span length — the ceiling of any length policy:
each task is decoded as a fixed-length fill (``allow_stop=False``, all masks from the start) of
exactly the tokens the canonical solution adds to the prompt (``oracle_tokens``).

Generation is timed per call after one untimed warm-up infill; tok/s = generated tokens (stop
tokens excluded) / summed wall time of the ``mercury_engine.infill`` calls.

Writes ``--out`` (summary JSON) and ``<out stem>.tasks.jsonl`` (one line per task and run: status,
detail, exact match, completion). Progress goes to stderr; stdout gets a table and, last, exactly
one JSON line of headline figures: ``{"single_line_pass@1": ..., "single_line_exact": ..., ...}``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from benchmarks.common.report import format_table, git_state, headline, plot_steps, write_atomic  # noqa: F401
from benchmarks.humaneval import tasks as humaneval
from benchmarks.humaneval.quality_args import (  # noqa: F401 (re-exported: the harness's command line)
    DEFAULT_BENCHMARKS,
    DEFAULT_OUT,
    UsageError,
    build_parser,
    parse_decode,
    parse_steps_grid,
)
from benchmarks.humaneval.tasks import (
    DataUnavailableError,
    Problem,
    TaskOutcome,
    exact_match,
    pass_at_1,
)

DEFAULT_MAX_TOKENS = MappingProxyType({
    "single-line": 48, "multi-line": 128, "random-span": 128, "random-span-light": 128,
})
PROGRESS_EVERY_S = 10.0


# ---------------------------------------------------------------------------- generation
@dataclass
class Generation:
    completions: list[str]
    records: list[dict]  # per task: tokens, steps, forwards, ms, stop_reason, trimmed, error
    stats: dict


def decode_options(decode: dict[str, object]):
    """``--decode`` pairs as ``mercury_engine.InfillOptions``; unknown or bad fields refused before any time is spent."""
    from mercury_engine.errors import EngineError
    from mercury_engine.options import InfillOptions

    accepted = [f.name for f in dataclasses.fields(InfillOptions)]
    unknown = [k for k in decode if k not in accepted]
    if unknown:
        raise UsageError(f"mercury_engine.InfillOptions has no {', '.join(unknown)} (its fields: {', '.join(accepted)})")
    options = InfillOptions(**decode)
    try:
        options.validate()
    except EngineError as exc:
        raise UsageError(str(exc)) from None
    return options


def oracle_tokens(engine, prob: Problem) -> int:
    """The tokens the canonical solution adds to the prompt (at least 1): the true span length."""
    full = engine.count_tokens(prob.prompt + prob.canonical_solution)
    return max(1, full - engine.count_tokens(prob.prompt))


def oracle_decode(decode: dict[str, object]) -> dict[str, object]:
    """``decode`` as a fixed-length fill: no early stop, the whole span masked from the start."""
    return {**decode, "allow_stop": False, "initial_span": 0}


def generate(engine, problems: Sequence[Problem], max_tokens: int, decode: dict[str, object],
             label: str, oracle: bool = False) -> Generation:
    from mercury_engine.errors import EngineError

    completions, records = [], []
    tokens = steps = forwards = 0
    seconds = 0.0
    stops: Counter[str] = Counter()
    trimmed = errors = 0
    last_report = time.monotonic()
    for i, prob in enumerate(problems):
        n = oracle_tokens(engine, prob) if oracle else max_tokens
        t0 = time.perf_counter()
        try:
            r = engine.infill(prob.prompt, prob.suffix, n, decode_options(decode))
        except EngineError as exc:
            dt = time.perf_counter() - t0
            seconds += dt
            errors += 1
            completions.append("")
            records.append({"error": f"{type(exc).__name__}: {exc}", "ms": round(dt * 1000, 2)})
            continue
        dt = time.perf_counter() - t0
        seconds += dt
        completions.append(r.text)
        tokens += len(r.token_ids)
        steps += r.steps
        forwards += r.forwards
        stops[r.stop_reason] += 1
        trimmed += int(r.trimmed)
        records.append({"tokens": len(r.token_ids), "steps": r.steps, "forwards": r.forwards,
                        "stop_reason": r.stop_reason, "trimmed": r.trimmed, "ms": round(dt * 1000, 2)})
        if time.monotonic() - last_report >= PROGRESS_EVERY_S:
            last_report = time.monotonic()
            print(f"[quality] {label}: generated {i + 1}/{len(problems)} ({tokens / seconds:.1f} tok/s)",
                  file=sys.stderr, flush=True)
    n_ok = max(1, len(problems) - errors)
    stats = {
        "seconds": round(seconds, 3),
        "tokens": tokens,
        "tokens_per_s": round(tokens / seconds, 2) if seconds > 0 else None,
        "mean_latency_ms": round(seconds * 1000 / max(1, len(problems)), 2),
        "mean_tokens": round(tokens / n_ok, 2),
        "mean_steps": round(steps / n_ok, 2),
        "mean_forwards": round(forwards / n_ok, 2),
        "trimmed": trimmed,
        "stop_reasons": dict(stops),
        "errors": errors,
    }
    return Generation(completions, records, stats)


# ---------------------------------------------------------------------------- one run
def evaluate(problems: Sequence[Problem], completions: Sequence[str], args: argparse.Namespace,
             label: str) -> tuple[list[TaskOutcome], float]:
    last = [time.monotonic()]

    def progress(done: int, total: int) -> None:
        if time.monotonic() - last[0] >= PROGRESS_EVERY_S or done == total:
            last[0] = time.monotonic()
            print(f"[quality] {label}: executed {done}/{total}", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    outcomes = humaneval.run_tasks(problems, completions, timeout=args.timeout, workers=args.workers,
                                   progress=progress)
    return outcomes, time.perf_counter() - t0


def run_config(engine, suites: dict[str, list[Problem]], args: argparse.Namespace,
               decode: dict[str, object], run: str, task_lines: list[dict]) -> dict[str, dict]:
    """Generate (or take canonical solutions), execute and score every benchmark once."""
    summary = {}
    for name, problems in suites.items():
        label = f"{run}/{name}"
        max_tokens = args.max_tokens or DEFAULT_MAX_TOKENS[name]
        if engine is None:
            texts = ["" if args.empty else p.canonical_solution for p in problems]
            gen = Generation(texts, [{} for _ in problems], {})
        else:
            gen = generate(engine, problems, max_tokens, decode, label, args.oracle_length)
        outcomes, exec_s = evaluate(problems, gen.completions, args, label)
        exact = [exact_match(c, p.canonical_solution) for c, p in zip(gen.completions, problems, strict=True)]
        statuses = Counter(o.status for o in outcomes)
        summary[name] = {
            "tasks": len(problems),
            "of": humaneval.BENCHMARK_SIZES.get(name),
            "passed": statuses["passed"],
            "pass@1": round(pass_at_1(outcomes), 6),
            "exact_match": round(sum(exact) / len(exact), 6) if exact else 0.0,
            "statuses": {s: statuses[s] for s in humaneval.STATUSES},
            "max_tokens": None if engine is None else "oracle" if args.oracle_length else max_tokens,
            "generation": gen.stats or None,
            "execution_s": round(exec_s, 3),
            "slowest_task_s": max((o.seconds for o in outcomes), default=0.0),
        }
        for prob, completion, outcome, em, rec in zip(problems, gen.completions, outcomes, exact, gen.records,
                                                      strict=True):
            task_lines.append({"run": run, "benchmark": name, "task_id": prob.task_id, "status": outcome.status,
                               "passed": outcome.passed, "exact": em, "detail": outcome.detail,
                               "exec_s": outcome.seconds, **rec, "completion": completion})
    return summary


# ---------------------------------------------------------------------------- main
def run(args: argparse.Namespace) -> int:
    t_start = time.perf_counter()
    git = git_state()  # the revision that runs (read now: the tree may change during a long run)
    try:
        names = humaneval.parse_benchmarks(args.benchmarks)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.limit is not None and args.limit <= 0:
        raise UsageError(f"--limit must be positive, got {args.limit}")
    if args.max_tokens is not None and args.max_tokens <= 0:
        raise UsageError(f"--max-tokens must be positive, got {args.max_tokens}")
    if args.timeout <= 0:
        raise UsageError(f"--timeout must be positive, got {args.timeout}")
    if args.workers is not None and args.workers <= 0:
        raise UsageError(f"--workers must be positive, got {args.workers}")
    decode = parse_decode(args.decode)
    grid = parse_steps_grid(args.steps_grid)
    if args.canonical and args.empty:
        raise UsageError("--canonical and --empty are two different runs")
    no_model = args.canonical or args.empty
    if no_model and (grid or decode):
        raise UsageError("--canonical/--empty run no model: --steps-grid and --decode do not apply")
    if no_model and args.oracle_length:
        raise UsageError("--canonical/--empty run no model: --oracle-length does not apply")
    if args.oracle_length:
        decode = oracle_decode(decode)
    if not no_model:
        decode.setdefault("seed", args.seed)

    data_dir = humaneval.resolve_data_dir(args.data_dir)
    suites = {n: humaneval.take_subset(humaneval.load_benchmark(n, data_dir), args.limit) for n in names}

    engine, model_info, load_s, warmup_s = None, None, 0.0, 0.0
    if not no_model:
        from mercury_engine import Engine

        t0 = time.perf_counter()
        engine = Engine.load(args.model, device=args.device, dtype=args.dtype)
        load_s = time.perf_counter() - t0
        first = next(p for probs in suites.values() for p in probs)
        t0 = time.perf_counter()
        engine.infill(first.prompt, first.suffix, 8, decode_options(decode))  # warm-up: one-time costs stay out of tok/s
        warmup_s = time.perf_counter() - t0
        import torch

        model_info = {"requested": args.model, "path": str(engine.path) if engine.path else None,
                      "model_type": engine.config.model_type, "device": str(engine.device),
                      "dtype": str(engine.dtype).removeprefix("torch."),
                      "context_tokens": engine.context_tokens, "torch": torch.__version__,
                      "torch_threads": torch.get_num_threads()}
        print(f"[quality] loaded {model_info['path']} on {model_info['device']} "
              f"({model_info['dtype']}) in {load_s:.1f}s", file=sys.stderr, flush=True)

    task_lines: list[dict] = []
    mode = "canonical" if args.canonical else "empty" if args.empty else "model"
    main_run = "main" if mode == "model" else mode
    summary = run_config(engine, suites, args, decode, main_run, task_lines)

    grid_results = []
    for s in grid:
        if decode.get("steps") == s:
            grid_summary = summary
        else:
            grid_summary = run_config(engine, suites, args, {**decode, "steps": s}, f"steps={s}", task_lines)
        grid_results.append({"steps": s, "benchmarks": grid_summary})

    out: Path = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    tasks_path = out.with_name(out.stem + ".tasks.jsonl")
    plot_path = out.with_name(out.stem + ".steps.png") if grid_results else None
    title = {"canonical": "canonical solutions", "empty": "empty completions"}.get(
        mode, f"model {model_info['path'] if model_info else args.model}")
    if plot_path is not None:
        plot_steps(plot_path, grid_results, names,
                   f"HumanEval infilling vs denoising steps — {title}")

    figures = headline(summary)
    result = {
        "benchmark": "humaneval-infilling",
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "git": git,
        "command": ["python", "-m", "benchmarks.humaneval.quality", *(args.argv or [])],
        "mode": mode,
        "model": model_info,
        "decode": None if no_model else decode,
        "max_tokens": None if no_model else ("oracle" if args.oracle_length else
                                             {n: args.max_tokens or DEFAULT_MAX_TOKENS[n] for n in names}),
        "data_dir": str(data_dir),
        "subset": None if args.limit is None else f"{args.limit} per benchmark, evenly spaced (i * n // limit)",
        "sandbox": {"timeout_s": args.timeout, "workers": args.workers or os.cpu_count(),
                    "memory_bytes": humaneval.DEFAULT_MEMORY_BYTES, "python": platform.python_version()},
        "benchmarks": summary,
        "steps_grid": grid_results or None,
        "headline": figures,
        "files": {"tasks": tasks_path.name, "plot": plot_path.name if plot_path else None},
        "timings_s": {"load": round(load_s, 3), "warmup": round(warmup_s, 3), "total": round(time.perf_counter() - t_start, 3)},
    }
    write_atomic(tasks_path, "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in task_lines))
    write_atomic(out, json.dumps(result, indent=2, ensure_ascii=False) + "\n")

    print(format_table(f"HumanEval infilling — {title}", summary))
    for g in grid_results:
        print()
        print(format_table(f"steps={g['steps']}", g["benchmarks"]))
    print(f"\nwrote {out}, {tasks_path}" + (f", {plot_path}" if plot_path else ""))
    status = 0
    if args.canonical:
        bad = [t for t in task_lines if not t["passed"]]
        if bad:
            status = 1
            print(f"[quality] SELF-CHECK FAILED: {len(bad)} canonical solution(s) did not pass, e.g. "
                  + "; ".join(f"{t['task_id']}: {t['status']} {t['detail']}" for t in bad[:5]),
                  file=sys.stderr)
    print(json.dumps(figures))
    return status


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.argv = argv
    try:
        return run(args)
    except UsageError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    except DataUnavailableError as exc:
        print(f"benchmarks.humaneval.quality: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        from mercury_engine.errors import EngineError  # torch-free

        if isinstance(exc, EngineError):
            print(f"benchmarks.humaneval.quality: error: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
