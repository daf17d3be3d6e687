"""Where benchmarks find the git mirrors of public repositories, and where they keep what they build
from them (outside git: fetched code and the cases made of it are never committed).

A mirror is a git directory as the ``fetch`` tool leaves it, ``<mirrors>/<owner+name>/repo`` (a bare
repository); ``<mirrors>/<owner+name>`` (a clone) and ``<mirrors>/<owner+name>.git`` also do.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

DEFAULT_MIRRORS = Path("/work/.mirror")  # where the fetch tool puts them
# Kept for an evaluation from outside the project (issue 24): no benchmark here reads them.
RESERVED = frozenset({"httpie/cli", "msiemens/tinydb", "cookiecutter/cookiecutter", "nvbn/thefuck",
                      "sanic-org/sanic", "sindresorhus/ky", "urfave/cli"})


class MirrorError(RuntimeError):
    """A mirror is missing or lacks a pinned commit: a problem the user fixes by fetching it."""


def slug(name: str) -> str:
    """``owner/name`` as the fetch tool names its folder (``owner+name``)."""
    return name.replace("/", "+")


def mirror_of(mirrors: Path, name: str) -> Path:
    """The git directory of repository ``name`` (``owner/name``) under ``mirrors``; MirrorError
    for a repository reserved for the outside evaluation."""
    if name.lower() in RESERVED:
        raise MirrorError(f"{name} is reserved for an evaluation from outside the project: no benchmark uses it")
    base = Path(mirrors)
    for cand in (base / slug(name) / "repo", base / slug(name), base / f"{slug(name)}.git"):
        if (cand / "HEAD").is_file() or (cand / ".git").exists():
            return cand
    raise MirrorError(
        f"no mirror of {name} under {base} (looked for {base / slug(name) / 'repo'}): bring it with the "
        f"fetch tool (source github:{name}; it lands in /work/.mirror/{slug(name)}/repo), or pass "
        f"--mirrors with the folder that holds it")


def require_commit(git_dir: Path, name: str, commit: str) -> None:
    """MirrorError unless ``commit`` is a commit of the mirror ``git_dir`` of ``name``."""
    r = subprocess.run(["git", "-C", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"],
                       capture_output=True)
    if r.returncode != 0:
        raise MirrorError(f"the mirror {git_dir} of {name} lacks the pinned commit {commit}: fetch it "
                          f"again (fetch tool, source github:{name}); a mirror that moved on still holds it")


def cache_dir(subject: str) -> Path:
    """``$XDG_CACHE_HOME/mercury-lsp-bench/<subject>`` (``~/.cache`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mercury-lsp-bench" / subject
