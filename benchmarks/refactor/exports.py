"""Export-machinery cases of the refactor benchmark: real repositories (``exports.json``, pinned,
built from the fetch tool's mirrors, never committed), a module-level definition renamed at its
definition, and every place its language's export machinery spells the name must follow.

The ground truth does not resolve a single import: a target is a name the repository *defines
once* and uses for nothing else, so every occurrence of it in code is the definition's and must
be renamed (``lexers`` finds the code apart from comments and strings, by its own lexer; Python
by ``ast``). Python's ``__all__`` strings are sites too; other strings and all comments are
prose, scored apart. Each site is labelled with the export form it stands in, from the
statement around it:

* Python (``ast``) — ``__all__`` list / tuple / ``+=`` / ``.append``, an ``__init__`` re-export
  (``from .m import old``, and ``as old``), ``from m import old as x``, a star import's user, a
  module attribute ``m.old``, a plain ``from m import old``;
* Rust — a ``pub use`` tree, a private ``use``, a path ``m::old`` (``crate::``, the crate's name);
* Go — a package-qualified use ``pkg.Old`` in another package, a bare use in another file of the
  package (the module path from ``go.mod``);
* JavaScript / TypeScript — an export list, ``export {…} from``, ``import {…}`` from the defining
  file or through a re-export, ``module.exports = {…}`` / ``exports.old``, ``require``
  destructured or dotted, a namespace's member ``ns.old``.

A name qualifies when it is defined once (at the top of its file), is used in another file or
in an export form, and no use of it reads as another thing's (a member ``x.old`` of something
not a module, a local or parameter of that name, an object key where no export list stands). The cases are
chosen per form: the first names (in order) whose sites include the form, ``per_form`` of them.
The finders are in ``truth``.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common.mirrors import DEFAULT_MIRRORS, mirror_of, require_commit
from benchmarks.refactor.cases import GIT, Site
from benchmarks.refactor.lexers import prose_spans
from benchmarks.refactor.truth import FINDERS, SUFFIXES, Files, Target, source_files

__all__ = ["DEFAULT_MIRRORS", "FORM_ORDER", "MANIFEST", "SUFFIXES", "Repo", "Target", "checkout", "choose", "rename",
           "repos", "score", "source_files", "targets"]

MANIFEST = Path(__file__).with_name("exports.json")
FORM_ORDER = (
    "python __all__ list", "python __all__ tuple", "python __all__ +=", "python __all__.append",
    "python __init__ re-export", "python re-export as itself", "python import as alias", "python star import",
    "python module attribute", "python from-import",
    "rust pub use", "rust use", "rust path",
    "go qualified", "go package file",
    "js export list", "js re-export", "js import", "js import via re-export", "js module.exports", "js require",
    "js namespace member",
)


@dataclass(frozen=True)
class Repo:
    name: str
    language: str
    dir: str
    commit: str
    licence: str


def repos(manifest: Path = MANIFEST) -> list[Repo]:
    data = json.loads(manifest.read_text(encoding="utf-8"))
    return [Repo(r["name"], r["language"], r["dir"], r["commit"], r["licence"]) for r in data["repos"]]


def checkout(repo: Repo, root: Path, mirrors: Path = DEFAULT_MIRRORS) -> Path:
    """The pinned tree of ``repo`` in ``root/<dir>``, committed to a fresh git repository."""
    git_dir = mirror_of(mirrors, repo.name)
    require_commit(git_dir, repo.name, repo.commit)
    dest = root / repo.dir
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", repo.commit], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    subprocess.run([*GIT, "-C", str(dest), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(dest), "commit", "-qm", f"{repo.name} at {repo.commit[:12]}"], check=True)
    return dest


def targets(proj: Path, language: str) -> list[Target]:
    return FINDERS[language](Files(proj, language))


def choose(found: list[Target], per_form: int) -> list[Target]:
    """Per export form, the first ``per_form`` targets (by file and name) whose sites include it."""
    chosen: list[Target] = []
    ordered = sorted(found, key=lambda t: (t.file, t.name))
    for form in FORM_ORDER:
        have = sum(1 for t in chosen if form in t.form_set)
        for t in ordered:
            if have >= per_form:
                break
            if form in t.form_set and t not in chosen:
                chosen.append(t)
                have += 1
    return chosen


def rename(proj: Path, t: Target) -> None:
    """The first edit: the definition's name replaced in its file."""
    path = proj / t.file
    text = path.read_text(encoding="utf-8")
    assert text[t.at:t.at + len(t.name)] == t.name, f"{t.file}: no {t.name} at {t.at}"
    path.write_text(text[:t.at] + t.new + text[t.at + len(t.name):], encoding="utf-8")


class Prose:
    """Which positions of a project's files are comments or strings (cached per file)."""

    def __init__(self, proj: Path, language: str) -> None:
        self.proj, self.language = proj, language
        self._files: dict[str, tuple[str, list[int], list[tuple[int, int]]] | None] = {}

    def _read(self, rel: str) -> tuple[str, list[int], list[tuple[int, int]]] | None:
        path = self.proj / rel
        if path.suffix not in SUFFIXES[self.language] or not path.is_file():
            return None
        text = path.read_text(encoding="utf-8")
        starts = [0]
        for ln in text.splitlines(keepends=True):
            starts.append(starts[-1] + len(ln))
        return text, starts, prose_spans(text, self.language)

    def __call__(self, site: Site) -> bool:
        rel, line, col = site
        if rel not in self._files:
            self._files[rel] = self._read(rel)
        got = self._files[rel]
        if got is None:
            return True
        text, starts, spans = got
        if line >= len(starts) - 1:
            return True
        row = text[starts[line]:starts[line + 1]]
        offset = starts[line] + len(row.encode("utf-16-le")[:2 * col].decode("utf-16-le", "replace"))
        return any(s <= offset < e for s, e in spans)


def score(t: Target, predicted: dict[Site, str], proj: Path) -> dict:
    """Site precision and recall of one case, its code edits only (an edit in a comment, a string
    other than an expected ``__all__`` entry, or a file of another kind is prose, counted apart),
    and the recall per export form."""
    prose = Prose(proj, t.language)
    code = {k: v for k, v in predicted.items() if k in t.expected or not prose(k)}
    right = {k for k, v in code.items() if t.expected.get(k) == v}
    forms: dict[str, list[int]] = {}
    for k, form in t.forms.items():
        got = forms.setdefault(form, [0, 0])
        got[0] += k in right
        got[1] += 1
    return {"correct": len(right), "predicted": len(code), "expected": len(t.expected),
            "prose_edits": len(predicted) - len(code), "forms": forms,
            "complete": len(right) == len(t.expected) == len(code)}
