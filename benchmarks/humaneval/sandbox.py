"""The HumanEval sandbox: one untrusted Python program in a fresh, limited child process.

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
"""

from __future__ import annotations

import math
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_TIMEOUT_S = 3.0
DEFAULT_MEMORY_BYTES = 1 << 30  # RLIMIT_AS of a task: 1 GiB
DEFAULT_OUTPUT_BYTES = 4 << 20  # RLIMIT_FSIZE of a task: its stdout/stderr files and anything it writes
CAPTURE_BYTES = 8 << 10  # how much of the end of stdout/stderr is read back
DETAIL_CHARS = 300  # longest detail kept in a TaskOutcome
CPU_GRACE_S = 1  # RLIMIT_CPU = ceil(timeout) + this: the wall-clock timeout normally fires first
EXIT_PASSED, EXIT_RAISED, EXIT_SANDBOX = 0, 1, 3  # exit statuses of the child prelude

STATUSES = ("passed", "failed", "timeout", "error")


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
