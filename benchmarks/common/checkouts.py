"""The daemon of another commit, for before/after figures and regression proofs.

``checkout(commit)`` adds a detached ``git worktree`` of this repository at ``commit`` in a
temporary directory (removed afterwards); ``cli_argv(source)`` is the command line that runs the
``mercury-lsp`` CLI from that source tree with this environment's packages (the older tree's own
``mercury_lsp`` and ``engine`` come first on ``sys.path``). ``cli_argv(None)`` runs this tree's.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from benchmarks import REPO

# main just before the issue-18 hardening was merged: the parent of "Merge harden (issue 18)".
PRE_HARDENING = "a1aef857eac3737b45838215ab25432410f265fc"
# main after the session-1 merges (hardening in, model reload leak not yet fixed).
SESSION1_MAIN = "6691226"


def cli_argv(source: str | Path | None = None) -> list[str]:
    """``python -m mercury_lsp.cli`` from ``source`` (a checkout) or from this environment."""
    if source is None:
        return [sys.executable, "-m", "mercury_lsp.cli"]
    code = ("import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); "
            "runpy.run_module('mercury_lsp.cli', run_name='__main__', alter_sys=True)")
    return [sys.executable, "-c", code, str(Path(source).resolve())]


def commit_of(ref: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", f"{ref}^{{commit}}"],
                          check=True, capture_output=True, text=True).stdout.strip()


@contextlib.contextmanager
def checkout(ref: str) -> Iterator[Path]:
    """A detached worktree of ``ref``, removed on exit."""
    commit = commit_of(ref)
    with tempfile.TemporaryDirectory(prefix="mercury-checkout-") as tmp:
        path = Path(tmp) / commit[:12]
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(path), commit],
                       check=True)
        try:
            yield path
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)], check=False)
            subprocess.run(["git", "-C", str(REPO), "worktree", "prune"], check=False)


def import_engine(tree: str | Path):
    """The engine package of the checkout ``tree`` (``mercury_engine``, or ``engine`` in trees from
    before the rename), imported from that tree and nowhere else; call it first in a fresh process."""
    import importlib

    tree = Path(tree).resolve()
    name = "mercury_engine" if (tree / "mercury_engine").is_dir() else "engine"
    sys.path.insert(0, str(tree))
    package = importlib.import_module(name)
    if not Path(package.__file__).resolve().is_relative_to(tree):
        raise SystemExit(f"{name} imported from {package.__file__}, not from {tree}")
    return package, importlib.import_module(f"{name}.options")
