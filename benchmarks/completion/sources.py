"""The benchmark's repositories on disk: ``repos.json``, the mirrors they come from, the checkouts
they are exported to, and which of their files are source files (and which of those are tests).

A checkout is ``git archive`` of the pinned commit extracted into
``$XDG_CACHE_HOME/mercury-lsp-bench/completion/<owner+name>/`` (outside any git work tree, so the
daemon sees a plain directory as its workspace); the commit it holds is recorded beside it in
``<owner+name>.commit``, never inside it (the workspace holds the repository's files only).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPOS_FILE = Path(__file__).with_name("repos.json")
# heldout2, heldout3, heldout4: further final sets, each added once the one before was spent
SPLITS = ("dev", "heldout", "heldout2", "heldout3", "heldout4")
FINAL_SPLITS = frozenset(s for s in SPLITS if s != "dev")  # scored once, at the end: server arms need --final

# Source extensions of the languages the daemon parses, and the languageId sent in didOpen.
LANGUAGE_IDS = {
    ".py": "python", ".pyi": "python",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact",
    ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
}
# The language a case is reported under (JavaScript files of a TypeScript project and TSX count
# as their own languages; a repository's main language is in repos.json).
REPORT_LANGUAGE = {"typescriptreact": "typescript", "javascriptreact": "javascript"}

# Folders that hold vendored, built, generated or fixture data rather than the project's code.
SKIP_DIRS = frozenset({
    "node_modules", "vendor", "third_party", "third-party", "thirdparty", "external", "dist", "build",
    "target", "out", "coverage", ".git", ".hg", ".venv", "venv", "site-packages", "__pycache__",
    "bower_components", "deno_dist", "_build", "generated", "__generated__", "testdata", ".yarn",
})
MAX_FILE_BYTES = 200_000  # larger: data tables, generated parsers, bundles
MAX_LINE_CHARS = 1000  # a file with a longer line is minified or data
MAX_MEAN_LINE_CHARS = 200  # likewise, on average
MINIFIED = re.compile(r"[.-]min\.[cm]?js$|\.bundle\.[cm]?js$|\.d\.ts$")
GENERATED = re.compile(r"Code generated .* DO NOT EDIT|@generated|auto-?generated|automatically generated"
                       r"|DO NOT EDIT", re.IGNORECASE)
GENERATED_HEAD_LINES = 10

# Test code by path: a tests/ folder (tests, test, __tests__, spec, ...), test_*.py / *_test.py,
# conftest.py, *_test.go, *.test.ts / *.spec.js, FooTest.java / FooTests.java / FooIT.java.
TEST_DIRS = frozenset({"test", "tests", "__tests__", "testing", "spec", "specs", "e2e", "fixtures",
                       "integration_tests", "test-d"})
TEST_NAME = re.compile(r"^(test_.*\.py|.*_test\.py|conftest\.py|.*_test\.go|.*[._-](test|spec)\.[cm]?[jt]sx?"
                       r"|.*(Test|Tests|IT)\.java|.*_tests?\.rs|tests?\.rs)$")


class BenchmarkError(RuntimeError):
    """A problem the user can fix (a missing mirror, a commit not in it, a modified checkout)."""


@dataclass(frozen=True)
class Repo:
    name: str  # owner/name
    split: str
    language: str
    licence: str
    commit: str

    @property
    def slug(self) -> str:
        return self.name.replace("/", "+")


def load_repos(path: Path = REPOS_FILE, split: str | None = None) -> list[Repo]:
    data = json.loads(path.read_text(encoding="utf-8"))
    repos = [Repo(r["name"], r["split"], r["language"], r["licence"], r["commit"]) for r in data["repos"]]
    for r in repos:
        if r.split not in SPLITS:
            raise BenchmarkError(f"{path}: {r.name} has split {r.split!r}, not one of {SPLITS}")
    return [r for r in repos if split is None or r.split == split]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mercury-lsp-bench" / "completion"


# ---------------------------------------------------------------------------- mirrors and checkouts
def mirror_of(mirrors: Path, repo: Repo) -> Path:
    """The bare git directory of ``repo`` under ``mirrors`` (the fetch tool's layout,
    ``<mirrors>/<owner+name>/repo``; a plain clone or ``<owner+name>.git`` also do)."""
    for cand in (mirrors / repo.slug / "repo", mirrors / repo.slug, mirrors / f"{repo.slug}.git"):
        if (cand / "HEAD").is_file() or (cand / ".git").exists():
            return cand
    raise BenchmarkError(
        f"no mirror of {repo.name} under {mirrors} (looked for {mirrors / repo.slug / 'repo'}): fetch it "
        f"by hand with the search tool's fetch, source github:{repo.name} (it lands in "
        f"/work/.mirror/{repo.slug}/repo), then run the case builder again; the benchmark uses "
        f"commit {repo.commit} of it")


def _git(git_dir: Path, *args: str, binary: bool = False):
    r = subprocess.run(["git", "--git-dir", str(git_dir / ".git" if (git_dir / ".git").exists() else git_dir),
                        *args], capture_output=True)
    if r.returncode != 0:
        raise BenchmarkError(f"git {' '.join(args)} in {git_dir}: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout if binary else r.stdout.decode("utf-8", errors="replace")


@contextlib.contextmanager
def checkout_lock(root: Path, repo: Repo) -> Iterator[None]:
    """Exclusive use of ``repo``'s checkout under ``root`` (a run writes cut files into it): a
    second runner or builder on the same folder stops with an error instead of reading them."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{repo.slug}.lock", "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BenchmarkError(f"another run is using the checkout of {repo.name} in {root} (it cuts files "
                                 "there): wait for it, or build your own copy with `python -m "
                                 "benchmarks.completion.cases --out DIR` and run with --cases-dir DIR") from None
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def blob_id(data: bytes) -> str:
    """Git's object id of a blob with these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def modified_files(git_dir: Path, commit: str, checkout: Path) -> list[str]:
    """Files of ``commit`` whose bytes in ``checkout`` differ (or are missing)."""
    out = []
    for ln in _git(git_dir, "ls-tree", "-r", commit).splitlines():
        meta, path = ln.split("\t", 1)
        _, kind, oid = meta.split()
        if kind != "blob" or meta.startswith("120000"):
            continue
        f = checkout / path
        if not f.is_file() or blob_id(f.read_bytes()) != oid:
            out.append(path)
    return out


def export(mirrors: Path, repo: Repo, root: Path, fresh: bool = False) -> Path:
    """The checkout of ``repo`` at its pinned commit under ``root`` (exported when missing, of
    another commit, modified — a run stopped mid-case leaves a cut file — or ``fresh``)."""
    dest = root / repo.slug
    stamp = root / f"{repo.slug}.commit"
    git_dir = mirror_of(mirrors, repo)
    if not fresh and dest.is_dir() and stamp.is_file() and stamp.read_text().strip() == repo.commit:
        changed = modified_files(git_dir, repo.commit, dest)
        if not changed:
            return dest
        print(f"{repo.name}: {len(changed)} files of the checkout differ from {repo.commit[:12]} "
              f"(e.g. {changed[0]}): exporting it again", file=sys.stderr)
    try:
        _git(git_dir, "cat-file", "-e", f"{repo.commit}^{{commit}}")
    except BenchmarkError:
        raise BenchmarkError(f"the mirror {git_dir} of {repo.name} lacks the pinned commit {repo.commit}: "
                             "fetch it again, or pin its new HEAD in repos.json (and rebuild the cases)") from None
    archive = _git(git_dir, "archive", "--format=tar", repo.commit, binary=True)
    if dest.exists():
        shutil.rmtree(dest)
    tmp = root / f"{repo.slug}.part"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        names = {m.name for m in tar.getmembers() if m.isfile() or m.issym()}
        tar.extractall(tmp, filter="data")
    listed = {ln.split("\t", 1)[1] for ln in _git(git_dir, "ls-tree", "-r", repo.commit).splitlines()
              if ln.split()[1] == "blob"}
    if listed - names:  # an export-ignore attribute left files out: the checkout would not be the commit
        raise BenchmarkError(f"git archive of {repo.name} left out {len(listed - names)} files "
                             f"(export-ignore?), e.g. {sorted(listed - names)[:3]}")
    tmp.rename(dest)
    stamp.write_text(repo.commit + "\n")
    return dest


# ---------------------------------------------------------------------------- source files
def sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def is_test_path(path: str) -> bool:
    parts = path.split("/")
    return any(p.lower() in TEST_DIRS for p in parts[:-1]) or bool(TEST_NAME.match(parts[-1]))


def language_of(path: str) -> str | None:
    return LANGUAGE_IDS.get(os.path.splitext(path)[1].lower())


def report_language(language_id: str) -> str:
    return REPORT_LANGUAGE.get(language_id, language_id)


def source_text(path: str, data: bytes) -> tuple[str | None, str]:
    """(text, "") for a source file the benchmark uses, else (None, why it is skipped)."""
    if language_of(path) is None:
        return None, "not a source file"
    if MINIFIED.search(path):
        return None, "minified or declarations"
    if len(data) > MAX_FILE_BYTES:
        return None, "huge"
    if b"\0" in data:
        return None, "binary"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8"
    if "\r" in text:
        return None, "CR line endings"
    lines = text.split("\n")
    if not text.strip():
        return None, "empty"
    if max(map(len, lines)) > MAX_LINE_CHARS or len(text) / len(lines) > MAX_MEAN_LINE_CHARS:
        return None, "minified or data"
    if GENERATED.search("\n".join(lines[:GENERATED_HEAD_LINES])):
        return None, "generated"
    return text, ""


def source_files(checkout: Path) -> tuple[dict[str, str], dict[str, int]]:
    """The checkout's source files (relative POSIX path -> text, sorted by path) and the count of
    files skipped per reason."""
    files: dict[str, str] = {}
    skipped: dict[str, int] = {}
    for dirpath, dirnames, filenames in os.walk(checkout):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for fn in filenames:
            full = Path(dirpath) / fn
            rel = full.relative_to(checkout).as_posix()
            if language_of(rel) is None or full.is_symlink() or not full.is_file():
                continue
            text, why = source_text(rel, full.read_bytes())
            if text is None:
                skipped[why] = skipped.get(why, 0) + 1
            else:
                files[rel] = text
    return dict(sorted(files.items())), skipped
