"""HumanEval infilling (Bavarian et al., 2022): problems, sandboxed execution, pass@1, exact match.

Data: the four ``HumanEval-*Infilling*.jsonl.gz`` files of github.com/openai/human-eval-infilling,
read from ``$MERCURY_EVAL_DATA`` (the directory holding them) or, by default, from
``<repo root>/../shared/data/human-eval-infilling`` (resolved from this file, not the CWD).
When they are absent, loading raises :class:`DataUnavailableError` with a message saying where
they were looked for; tests turn it into ``pytest.skip(str(exc))``.

A task passes when ``prompt + completion + suffix + "\\n" + test + "\\ncheck(" + entry_point + ")"``
runs without error (the upstream definition).

Execution is sandboxed; completions are untrusted code and never run in this process. Each task
gets its own child process — the same interpreter in isolated mode without ``site``
(``python -I -S``: no user or virtualenv packages, which HumanEval does not need, and half the
start-up time) with:

* the program sent on a pipe, then stdin replaced by ``/dev/null`` (``input()`` sees EOF);
* an empty temporary working directory (``HOME`` and ``TMPDIR`` too), removed afterwards;
  stdout/stderr go to files beside it (never into it), bounded by ``RLIMIT_FSIZE``, and only
  their last :data:`CAPTURE_BYTES` are read back;
* resource limits set by the child before the program runs: ``RLIMIT_AS`` (memory),
  ``RLIMIT_CPU`` and an ``alarm()`` (both timeout + 1 s: backstops should the harness die),
  ``RLIMIT_FSIZE``, ``RLIMIT_CORE`` = 0 and ``RLIMIT_NPROC`` = 0 (no new processes or
  threads — for non-root users; the kernel does not enforce it for root, hence:)
* a prelude that replaces process creation (``os.fork``/``exec*``/``spawn*``/``system``/``popen``,
  ``subprocess.Popen``, ``_posixsubprocess.fork_exec``), signalling (``os.kill``/``killpg``),
  destructive file operations (remove, rename, chmod, ``shutil.rmtree`` ...) and networking
  (``socket.socket``, ``create_connection`` ...) with stubs that raise ``PermissionError``, and
  makes ``ctypes`` unimportable;
* a minimal environment (none of this process's variables, e.g. tokens, are passed on), its own
  session (the whole process group is killed at the end), and a wall-clock timeout (default
  3 s, as upstream; it counts from process start, so includes interpreter start-up, ~30 ms).

A task passes only when the program ran to its end and the child printed a per-run random
token afterwards; ``sys.exit()``/``exit()`` in a completion counts as a failure, as upstream.
This is a guard against accidents in model output, not a security boundary against an adversary
(the stubs can be undone from Python); run untrusted models in a container.

Tasks run in parallel: a thread pool (``workers``, default ``os.cpu_count()``), one child each.
"""

from __future__ import annotations

import concurrent.futures
import gzip
import json
import math
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

ENV_DATA_DIR = "MERCURY_EVAL_DATA"
REPO_ROOT = Path(__file__).resolve().parent.parent
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

DEFAULT_TIMEOUT_S = 3.0
DEFAULT_MEMORY_BYTES = 1 << 30  # RLIMIT_AS of a task: 1 GiB
DEFAULT_OUTPUT_BYTES = 4 << 20  # RLIMIT_FSIZE of a task: its stdout/stderr files and anything it writes
CAPTURE_BYTES = 8 << 10  # how much of the end of stdout/stderr is read back
DETAIL_CHARS = 300  # longest detail kept in a TaskOutcome
CPU_GRACE_S = 1  # RLIMIT_CPU = ceil(timeout) + this: the wall-clock timeout normally fires first
EXIT_PASSED, EXIT_RAISED, EXIT_SANDBOX = 0, 1, 3  # exit statuses of the child prelude

STATUSES = ("passed", "failed", "timeout", "error")


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


# ---------------------------------------------------------------------------- the sandbox
# Runs in the child (python -I -S -c PRELUDE <memory> <cpu> <fsize>). Reads a token line and the
# program from stdin, detaches stdin, limits itself, disables process creation, signalling,
# destructive file operations and networking, then runs the program. Exit statuses:
# 0 + the token on stdout = ran to the end; 1 = the program raised; 3 = the sandbox failed.
PRELUDE = r'''
def _sandbox(argv):
    import builtins, os, posix, resource, shutil, signal, socket, subprocess, sys, traceback
    import _posixsubprocess, _socket

    def die(msg):
        os.write(2, ("sandbox: " + msg + "\n").encode())
        os._exit(3)

    try:
        token = sys.stdin.buffer.readline().strip()
        source = sys.stdin.buffer.read().decode("utf-8")
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        memory, cpu, fsize = (int(a) for a in argv[1:4])
        for res, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_CPU, cpu),
                           (resource.RLIMIT_FSIZE, fsize), (resource.RLIMIT_CORE, 0),
                           (resource.RLIMIT_NPROC, 0)):
            hard = resource.getrlimit(res)[1]
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(res, (value, value))
        signal.alarm(cpu)  # a wall-clock backstop should the harness die before killing us
    except Exception as exc:
        die("setup failed: %r" % (exc,))

    def blocked(name):
        def stub(*args, **kwargs):
            raise PermissionError(name + " is disabled in the HumanEval sandbox")
        stub.__name__ = name.rpartition(".")[2]
        return stub

    names = ("fork", "forkpty", "vfork", "system", "popen", "kill", "killpg", "posix_spawn",
             "posix_spawnp", "execl", "execle", "execlp", "execlpe", "execv", "execve", "execvp",
             "execvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp",
             "spawnvpe", "remove", "unlink", "rmdir", "removedirs", "rename", "renames", "replace",
             "truncate", "chmod", "fchmod", "lchmod", "chown", "fchown", "lchown", "chroot")
    for module in (os, posix):
        for name in names:
            if hasattr(module, name):
                setattr(module, name, blocked("os." + name))
    subprocess.Popen = blocked("subprocess.Popen")
    _posixsubprocess.fork_exec = blocked("_posixsubprocess.fork_exec")
    for name in ("rmtree", "move", "chown"):
        setattr(shutil, name, blocked("shutil." + name))
    for module in (socket, _socket):
        for name in ("socket", "socketpair", "fromfd", "create_connection", "create_server",
                     "getaddrinfo", "gethostbyname"):
            if hasattr(module, name):
                setattr(module, name, blocked("socket." + name))
    for name in ("ctypes", "_ctypes"):
        sys.modules[name] = None

    write, exit_now, stderr = os.write, os._exit, sys.__stderr__
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    try:
        exec(compile(source, "<humaneval-task>", "exec"), namespace)
    except BaseException:
        try:
            traceback.print_exc(file=stderr)
            stderr.flush()
        except BaseException:
            pass
        exit_now(1)
    for stream in (sys.stdout, sys.stderr, sys.__stdout__):
        try:
            stream.flush()
        except BaseException:
            pass
    write(1, b"\n" + token + b"\n")
    exit_now(0)


import sys
_sandbox(sys.argv)
'''


@dataclass(frozen=True)
class SandboxLimits:
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_bytes: int = DEFAULT_MEMORY_BYTES
    output_bytes: int = DEFAULT_OUTPUT_BYTES


@dataclass(frozen=True)
class ExecResult:
    status: str  # one of STATUSES
    returncode: int | None  # None when it timed out or never started
    stdout: str  # the last CAPTURE_BYTES of stdout (the pass token removed)
    stderr: str  # the last CAPTURE_BYTES of stderr
    detail: str
    seconds: float


def _tail(path: Path, limit: int = CAPTURE_BYTES) -> str:
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            data = f.read(limit)
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= DETAIL_CHARS else line[: DETAIL_CHARS - 3] + "..."


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def run_program(program: str, limits: SandboxLimits = SandboxLimits()) -> ExecResult:
    """Run one Python program in a fresh sandboxed child (see the module docstring)."""
    token = secrets.token_hex(16)
    root = Path(tempfile.mkdtemp(prefix="mercury-humaneval-"))
    work = root / "work"  # the child's working directory: empty, nothing of ours in it
    work.mkdir()
    out_path, err_path = root / "stdout", root / "stderr"
    cpu = math.ceil(limits.timeout_s) + CPU_GRACE_S
    argv = [sys.executable, "-I", "-S", "-c", PRELUDE, str(limits.memory_bytes), str(cpu), str(limits.output_bytes)]
    env = {"PATH": os.defpath, "LC_ALL": "C.UTF-8", "HOME": str(work), "TMPDIR": str(work)}
    t0 = time.monotonic()
    try:
        with out_path.open("wb") as out, err_path.open("wb") as err:
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=out, stderr=err, cwd=work,
                                        env=env, start_new_session=True, close_fds=True)
            except OSError as exc:
                return ExecResult("error", None, "", "", f"could not start the sandbox: {exc}",
                                  time.monotonic() - t0)
            try:
                try:
                    proc.stdin.write(token.encode() + b"\n" + program.encode("utf-8", "surrogatepass"))
                    proc.stdin.close()
                except (BrokenPipeError, OSError):
                    pass  # the child died early; its status says why
                remaining = max(0.0, limits.timeout_s - (time.monotonic() - t0))
                try:
                    rc = proc.wait(timeout=remaining)
                except subprocess.TimeoutExpired:
                    rc = None
            finally:
                _kill_group(proc)  # the child on timeout, and anything it left behind
                proc.wait()
        seconds = time.monotonic() - t0
        stdout, stderr = _tail(out_path), _tail(err_path)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if rc is None:
        return ExecResult("timeout", None, stdout, stderr, f"timed out after {limits.timeout_s:g}s", seconds)
    stripped = stdout.rstrip("\n")
    ran_to_end = stripped.endswith(token)
    if ran_to_end:
        stdout = stripped[: -len(token)].rstrip("\n")
    if rc == EXIT_PASSED and ran_to_end:
        return ExecResult("passed", rc, stdout, stderr, "", seconds)
    if rc in (-signal.SIGXCPU, -signal.SIGALRM):
        return ExecResult("timeout", rc, stdout, stderr, f"{_signal_name(-rc)}: {cpu}s limit exceeded", seconds)
    if rc == EXIT_SANDBOX:
        return ExecResult("error", rc, stdout, stderr, _last_line(stderr) or "sandbox failed", seconds)
    if rc == EXIT_RAISED:
        detail = _last_line(stderr) or "raised an exception"
    elif rc < 0:
        detail = f"killed by {_signal_name(-rc)}"
    elif rc == 0:
        detail = "exited before the program finished"
    else:
        detail = f"exited with status {rc} before the program finished"
    return ExecResult("failed", rc, stdout, stderr, detail, seconds)


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
