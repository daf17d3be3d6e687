"""The committed manifests of the real-history next-edit sets, and where their built cases live.

A set is ``benchmarks/data/next_edit_v2/<set>.json``: the repositories (``owner/name``, the pinned
commit whose history the cases come from, the licence read from the repository's licence files),
the builder's one argument (``target_cases``), and what the build gives (``cases``, and the
sha256 of its records, ``content_sha256``). The cases themselves are fetched code, so they are
never committed: ``python -m benchmarks.next_edit.history_cases --manifest FILE`` builds them from
the mirrors into ``$XDG_CACHE_HOME/mercury-lsp-bench/next_edit/<set>.jsonl.gz`` and checks the
digest, and the runner (``histories.py --set NAME``) builds a set first when its file is absent.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from benchmarks import DATA
from benchmarks.common.mirrors import cache_dir

SETS_DIR = DATA / "next_edit_v2"
BUILD_FORMAT = 1  # bump when the builder's output changes for the same manifest (every set rebuilds)
REQUIRED = ("repos", "target_cases")


class ManifestError(ValueError):
    """A manifest that is missing or malformed (the message says which and why)."""


@dataclass(frozen=True)
class Pin:
    name: str  # owner/name
    commit: str  # the history is that of this commit (rev-list --no-merges COMMIT)
    licence: str  # SPDX expression, from the repository's licence files at that commit


@dataclass(frozen=True)
class Manifest:
    path: Path
    name: str  # the set's name: the file's stem
    repos: tuple[Pin, ...]
    target_cases: int  # the builder's --cases: per repository, ceil(target / repositories)
    cases: int | None  # what the build gives (None before it is pinned)
    content_sha256: str | None
    sealed: str | None = None  # why the runner refuses the set without --unseal (scored once, at the end)

    @property
    def key(self) -> str:
        """Digest of everything the build depends on, stored in the built file's header: a cached
        file whose key differs is stale."""
        spec = {"format": BUILD_FORMAT, "target_cases": self.target_cases,
                "repos": [[p.name, p.commit, p.licence] for p in self.repos]}
        return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()

    @property
    def cache_path(self) -> Path:
        return cache_dir("next_edit") / f"{self.name}.jsonl.gz"


def available() -> list[str]:
    return sorted(p.stem for p in SETS_DIR.glob("*.json"))


def path_of(name: str) -> Path:
    path = SETS_DIR / f"{name}.json"
    if not path.is_file():
        raise ManifestError(f"no next-edit set named {name!r} (sets: {', '.join(available()) or 'none'})")
    return path


def load(path: Path) -> Manifest:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ManifestError(f"{path}: cannot read the manifest ({e})") from None
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise ManifestError(f"{path}: missing {', '.join(missing)}")
    try:
        repos = tuple(Pin(r["name"], r["commit"], r["licence"]) for r in data["repos"])
    except (KeyError, TypeError) as e:
        raise ManifestError(f"{path}: each repository needs name, commit and licence ({e!r} missing)") from None
    if not repos:
        raise ManifestError(f"{path}: no repositories")
    names = [p.name for p in repos]
    if len(set(names)) != len(names):
        raise ManifestError(f"{path}: a repository is listed twice")
    return Manifest(path, path.stem, repos, int(data["target_cases"]), data.get("cases"),
                    data.get("content_sha256"), data.get("sealed"))


def pin(manifest: Manifest, *, cases: int, content_sha256: str, languages: dict, kinds: dict) -> None:
    """Write what a build gave into the manifest file (the rest of the file is kept as it is)."""
    data = json.loads(manifest.path.read_text(encoding="utf-8"))
    data.update(cases=cases, content_sha256=content_sha256, languages=languages, kinds=kinds)
    manifest.path.write_text(dumps(data), encoding="utf-8")


def dumps(data: dict) -> str:
    """A manifest as committed: one key a line, one repository a line."""
    def one(v) -> str:
        return json.dumps(v, ensure_ascii=False)

    lines = []
    for k, v in data.items():
        if k == "repos":
            lines.append(' "repos": [\n' + ",\n".join(f"  {one(r)}" for r in v) + "\n ]")
        else:
            lines.append(f" {one(k)}: {one(v)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"
