"""HumanEval infilling (Bavarian et al., 2022): problems, sandboxed execution, pass@1, exact match.

Data: the four ``HumanEval-*Infilling*.jsonl.gz`` files of github.com/openai/human-eval-infilling,
read from ``$MERCURY_EVAL_DATA`` (the directory holding them) or, by default, from
``<repo root>/../shared/data/human-eval-infilling`` (resolved from this file, not the CWD).
When they are absent, loading raises :class:`DataUnavailableError` with a message saying where
they were looked for; tests turn it into ``pytest.skip(str(exc))``.

A task passes when ``prompt + completion + suffix + "\\n" + test + "\\ncheck(" + entry_point + ")"``
runs without error (the upstream definition).

Execution is sandboxed (benchmarks/humaneval/sandbox.py): each task runs in its own limited child
process, never in this process.

Tasks run in parallel: a thread pool (``workers``, default ``os.cpu_count()``), one child each.
"""

from __future__ import annotations

import concurrent.futures
import gzip
import json
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from benchmarks import REPO
from benchmarks.humaneval.sandbox import (  # noqa: F401 (re-exported: the harness's public names)
    CAPTURE_BYTES,
    DEFAULT_MEMORY_BYTES,
    DEFAULT_OUTPUT_BYTES,
    DEFAULT_TIMEOUT_S,
    STATUSES,
    ExecResult,
    SandboxLimits,
    run_program,
)

ENV_DATA_DIR = "MERCURY_EVAL_DATA"
REPO_ROOT = REPO
DEFAULT_DATA_DIR = REPO_ROOT.parent / "shared" / "data" / "human-eval-infilling"

BENCHMARK_FILES: Mapping[str, str] = MappingProxyType({
    "single-line": "HumanEval-SingleLineInfilling.jsonl.gz",
    "multi-line": "HumanEval-MultiLineInfilling.jsonl.gz",
    "random-span": "HumanEval-RandomSpanInfilling.jsonl.gz",
    "random-span-light": "HumanEval-RandomSpanInfillingLight.jsonl.gz",
})
BENCHMARK_SIZES: Mapping[str, int] = MappingProxyType({
    "single-line": 1033, "multi-line": 5815, "random-span": 1640, "random-span-light": 164,
})
PROBLEM_FIELDS = ("task_id", "entry_point", "prompt", "suffix", "canonical_solution", "test")


class DataUnavailableError(Exception):
    """The benchmark files are not where they were looked for (the message says where)."""


# ---------------------------------------------------------------------------- problems
@dataclass(frozen=True)
class Problem:
    task_id: str
    entry_point: str
    prompt: str
    suffix: str
    canonical_solution: str
    test: str

    def program(self, completion: str) -> str:
        """The upstream check program for ``completion``."""
        return (self.prompt + completion + self.suffix + "\n" + self.test
                + "\ncheck(" + self.entry_point + ")")


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """``data_dir``, else ``$MERCURY_EVAL_DATA``, else ``<repo>/../shared/data/human-eval-infilling``.

    A directory that holds a ``human-eval-infilling`` subdirectory (``shared/data``) is accepted too.
    Raises :class:`DataUnavailableError` when none of the benchmark files is there.
    """
    if data_dir is not None:
        path, origin = Path(data_dir), "the given data directory"
    elif os.environ.get(ENV_DATA_DIR):
        path, origin = Path(os.environ[ENV_DATA_DIR]), f"${ENV_DATA_DIR}"
    else:
        path, origin = DEFAULT_DATA_DIR, "the default location"
    path = path.expanduser().resolve()
    if not any((path / f).is_file() for f in BENCHMARK_FILES.values()):
        nested = path / "human-eval-infilling"
        if any((nested / f).is_file() for f in BENCHMARK_FILES.values()):
            return nested
        raise DataUnavailableError(
            f"HumanEval-infilling data not found in {path} ({origin}); set {ENV_DATA_DIR} to the "
            f"directory holding {BENCHMARK_FILES['single-line']} and the other benchmark files "
            f"(see ../shared/data/README.md)")
    return path


def data_unavailable_reason(data_dir: str | os.PathLike | None = None) -> str | None:
    """None when the data is there, else the message of :class:`DataUnavailableError`."""
    try:
        resolve_data_dir(data_dir)
    except DataUnavailableError as exc:
        return str(exc)
    return None


def parse_benchmarks(spec: str) -> list[str]:
    """``"single-line,multi-line"`` -> names, checked; ``"all"`` -> the four benchmarks."""
    names = [s.strip() for s in spec.split(",") if s.strip()]
    if names == ["all"]:
        return list(BENCHMARK_FILES)
    unknown = [n for n in names if n not in BENCHMARK_FILES]
    if unknown or not names:
        raise ValueError(f"unknown benchmark(s) {', '.join(unknown) or '(none given)'}; "
                         f"choose from {', '.join(BENCHMARK_FILES)} or 'all'")
    return list(dict.fromkeys(names))


def load_benchmark(name: str, data_dir: str | os.PathLike | None = None) -> list[Problem]:
    """All problems of one benchmark, in file order."""
    if name not in BENCHMARK_FILES:
        raise ValueError(f"unknown benchmark {name!r}; choose from {', '.join(BENCHMARK_FILES)}")
    path = resolve_data_dir(data_dir) / BENCHMARK_FILES[name]
    if not path.is_file():
        raise DataUnavailableError(f"{path}: missing (benchmark {name!r})")
    problems = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                problems.append(Problem(**{k: row[k] for k in PROBLEM_FIELDS}))
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{lineno}: not a HumanEval-infilling problem ({exc!r})") from None
    return problems


def load_benchmarks(names: Iterable[str] = tuple(BENCHMARK_FILES),
                    data_dir: str | os.PathLike | None = None) -> dict[str, list[Problem]]:
    return {name: load_benchmark(name, data_dir) for name in names}


def take_subset(problems: Sequence[Problem], limit: int | None) -> list[Problem]:
    """``limit`` problems evenly spaced over the file: indices ``i * n // limit``.

    Deterministic and independent of any seed. The files are ordered by HumanEval problem, so
    the subset spreads over the problems instead of taking the first few functions.
    """
    n = len(problems)
    if limit is None or limit >= n:
        return list(problems)
    if limit <= 0:
        raise ValueError(f"limit must be positive, got {limit}")
    return [problems[i * n // limit] for i in range(limit)]


# ---------------------------------------------------------------------------- metrics
def normalize_for_match(text: str) -> list[str]:
    """Lines of ``text`` with trailing whitespace (and CR) stripped, leading/trailing blank lines dropped.

    Indentation and blank lines inside the text still count.
    """
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def exact_match(completion: str, canonical: str) -> bool:
    """Exact match after :func:`normalize_for_match` of both sides: trailing whitespace of every
    line and blank lines at the start and end are ignored; everything else (indentation, inner
    blank lines, comments) must be identical."""
    return normalize_for_match(completion) == normalize_for_match(canonical)


@dataclass(frozen=True)
class TaskOutcome:
    task_id: str
    passed: bool
    status: str  # one of STATUSES
    detail: str  # "" when passed; the exception line, "timed out after 3s", ...
    seconds: float = 0.0  # wall time of the child process


def pass_at_1(outcomes: Iterable[TaskOutcome]) -> float:
    """Fraction of tasks passed. With several samples per task, the mean per-task pass rate
    (the unbiased pass@1 estimator). 0.0 for no outcomes."""
    per_task: dict[str, list[int]] = {}
    for o in outcomes:
        tally = per_task.setdefault(o.task_id, [0, 0])
        tally[0] += int(o.passed)
        tally[1] += 1
    if not per_task:
        return 0.0
    return sum(c / n for c, n in per_task.values()) / len(per_task)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task from ``n`` samples of which ``c`` passed (Chen et al., 2021)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def run_tasks(problems: Sequence[Problem], completions: Sequence[str] | Mapping[str, str], *,
              timeout: float = DEFAULT_TIMEOUT_S, workers: int | None = None,
              memory_bytes: int = DEFAULT_MEMORY_BYTES, output_bytes: int = DEFAULT_OUTPUT_BYTES,
              progress: Callable[[int, int], None] | None = None) -> list[TaskOutcome]:
    """Execute every problem's check program with its completion; outcomes in problem order.

    ``completions``: one per problem (same order), or a mapping task_id -> completion.
    ``progress(done, total)`` is called (from this thread) as tasks finish.
    """
    if isinstance(completions, Mapping):
        missing = [p.task_id for p in problems if p.task_id not in completions]
        if missing:
            raise ValueError(f"no completion for {len(missing)} task(s), e.g. {missing[0]}")
        texts = [completions[p.task_id] for p in problems]
    else:
        texts = list(completions)
        if len(texts) != len(problems):
            raise ValueError(f"{len(problems)} problems but {len(texts)} completions")
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout}")
    limits = SandboxLimits(timeout_s=timeout, memory_bytes=memory_bytes, output_bytes=output_bytes)
    outcomes: list[TaskOutcome | None] = [None] * len(problems)
    if not problems:
        return []
    workers = max(1, min(workers or os.cpu_count() or 1, len(problems)))
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="humaneval")
    try:
        futures = {pool.submit(run_program, p.program(text), limits): i
                   for i, (p, text) in enumerate(zip(problems, texts, strict=True))}
        for done, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            i = futures[fut]
            r = fut.result()
            outcomes[i] = TaskOutcome(problems[i].task_id, r.status == "passed", r.status, r.detail,
                                      round(r.seconds, 4))
            if progress is not None:
                progress(done, len(problems))
    finally:
        # On Ctrl-C (or any error) drop the queued tasks; running ones end within the timeout.
        pool.shutdown(wait=True, cancel_futures=True)
    return [o for o in outcomes if o is not None]
