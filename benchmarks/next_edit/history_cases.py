"""Build the real-history cases of the next-edit benchmark v2 (``benchmarks/next_edit/histories.py``).

    python -m benchmarks.next_edit.history_cases --manifest benchmarks/data/next_edit_v2/SET.json
        [--mirrors /work/.mirror] [--out FILE] [--pin]

A set's manifest (``benchmarks/next_edit/manifest.py``) names its repositories, each permissively
licensed and pinned to a commit, and the builder's one argument, ``target_cases``; the cases come
from the history of the pinned commit (never the mirror's HEAD: a mirror that moved on gives the
same set) and go to the set's file in the cache, ``$XDG_CACHE_HOME/mercury-lsp-bench/next_edit/
SET.jsonl.gz``, outside git. The build is deterministic (no randomness; commits in a stable
sha256 order; the gzip stream carries no time stamp), and is checked against the case count and
the sha256 of the records the manifest pins; ``--pin`` writes them for a new set (or after a
deliberate change of the rules below, which changes every set's figures). Mirrors are git
directories under ``--mirrors`` as the fetch tool lays them out (``<owner+name>/repo``); a
missing one is named with the fetch tool's source to bring it. Repositories reserved for the
outside evaluation are refused.

**Replay.** A commit's source files (supported languages only) are diffed line by line
(``difflib``, no junk heuristic) into hunks, ordered by path and then top to bottom. Hunk ``k``
is predicted from the parent's files with hunks ``1..k-1`` applied and the cursor at the end of
hunk ``k-1``. Hunk coordinates are those of the text the hunk applies to (the state after the
hunks before it), so hunks replay as ``didChange`` calls in order.

**Which commits.** Not merges; 1–4 files of a supported language, each at most
``MAX_FILE_CHARS`` and UTF-8 without CR; 2–``MAX_HUNKS`` hunks, none longer than
``MAX_HUNK_LINES`` lines on either side. Commits are taken in sha256(repo, commit) order (a
stable shuffle), at most ``MAX_CASES_PER_COMMIT`` cases each (k = 2, 3, ...), at most
``target_cases`` in all (``ceil(target_cases / repositories)`` from each, in the manifest's
order), Python at most half.

**Typed prefix (complete-line).** For one single-line insertion per commit (at least
``MIN_SPLIT_CHARS`` characters), a variant replays the line half typed: the hunk inserts the line
up to a word boundary near its middle, the target hunk completes it. These cases are marked
``variant: "typed-prefix"``.

**Kind of a case** (of its target hunk ``k``, first rule that holds):

1. ``import`` — every changed line (removed or added, not blank) is an import (``import``,
   ``from ... import``, ``use``, ``require(``, ``#include``, a quoted path inside a Go
   ``import (...)`` block).
2. ``rename`` — old and new lines have the same token sequence except identifiers, and every
   changed identifier maps consistently to one new one.
3. ``signature`` — the changed region (common prefix/suffix removed) lies inside one
   parenthesised list that follows an identifier (a call's or a definition's arguments), on a
   single line.
4. ``repeat`` — the token-level change (deleted and inserted tokens) equals that of an earlier
   hunk of the same commit.
5. ``complete-line`` — the typed-prefix variant, or a one-line change within
   ``NEAR_LINES`` lines of the cursor.
6. ``other``.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common.mirrors import DEFAULT_MIRRORS, MirrorError, mirror_of, require_commit
from benchmarks.next_edit import manifest

LANGUAGES = {".py": "python", ".ts": "typescript", ".tsx": "typescriptreact", ".js": "javascript",
             ".mjs": "javascript", ".cjs": "javascript", ".go": "go", ".rs": "rust"}
MAX_FILE_CHARS = 60_000  # keeps the stored set small and the daemon's files ordinary
MAX_FILES = 4
MAX_HUNKS = 16  # more: a rewrite, not a sequence of edits
MAX_HUNK_LINES = 12
MAX_CASES_PER_COMMIT = 4
MIN_SPLIT_CHARS = 16
NEAR_LINES = 3
PYTHON_SHARE = 0.5
KINDS = ("rename", "signature", "repeat", "complete-line", "import", "other")
TOKEN = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*|\d[\w.]*|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|\S")
IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")
IMPORT_LINE = re.compile(r"^\s*(import\b|from\s+\S+\s+import\b|use\s|pub\s+use\s|extern\s+crate\b|#include\b"
                         r"|(const|let|var)\s+.*=\s*require\(|export\s+.*\s+from\s|[\w\s]*\"[\w./-]+\"\s*$|\)\s*$)")
KEYWORDS = frozenset("""False None True and as assert async await break class continue def del elif else except
finally for from global if import in is lambda nonlocal not or pass raise return try while with yield
const let var function new this typeof instanceof export default extends interface type enum implements
func package go defer chan map struct select case switch fallthrough range fn mut pub impl trait use mod
crate self Self super where match loop ref static unsafe dyn move""".split())


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, encoding="utf-8", errors="replace").stdout


def _blob(repo: Path, rev: str, path: str) -> str | None:
    r = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{path}"], capture_output=True)
    if r.returncode != 0:
        return None
    try:
        return r.stdout.decode("utf-8")
    except UnicodeDecodeError:
        return None


@dataclass
class Hunk:
    path: str
    line: int  # 0-based first line in the text it applies to
    old: list[str]  # lines (with their newlines)
    new: list[str]

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "old": "".join(self.old), "new": "".join(self.new)}


def file_hunks(path: str, before: str, after: str) -> list[Hunk]:
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    return [Hunk(path, j1, a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in ops if tag != "equal"]


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def _delta(h: Hunk) -> tuple[tuple[str, ...], tuple[str, ...]]:
    ta, tb = tokens("".join(h.old)), tokens("".join(h.new))
    sm = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    dele, ins = [], []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "equal":
            dele += ta[i1:i2]
            ins += tb[j1:j2]
    return tuple(dele), tuple(ins)


def _is_import_hunk(h: Hunk) -> bool:
    changed = [ln for ln in h.old + h.new if ln.strip()]
    return bool(changed) and all(IMPORT_LINE.match(ln) for ln in changed)


def _is_rename(h: Hunk) -> bool:
    ta, tb = tokens("".join(h.old)), tokens("".join(h.new))
    if not ta or len(ta) != len(tb) or ta == tb:
        return False
    mapping: dict[str, str] = {}
    for x, y in zip(ta, tb, strict=True):
        if x == y:
            continue
        if not (IDENT.match(x) and IDENT.match(y)) or x in KEYWORDS or y in KEYWORDS:
            return False
        if mapping.setdefault(x, y) != y:
            return False
    return True


def _is_signature(h: Hunk) -> bool:
    if len(h.old) != 1 or len(h.new) != 1:
        return False
    a, b = h.old[0], h.new[0]
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    # the innermost '(' before p, preceded by an identifier, whose ')' closes at or after the change
    depth = 0
    for i in range(p - 1, -1, -1):
        if b[i] == ")":
            depth += 1
        elif b[i] == "(":
            if depth:
                depth -= 1
                continue
            if not re.search(r"[A-Za-z0-9_$>]\s*$", b[:i]):
                return False
            close, d = None, 0
            for j in range(i, len(b)):
                d += {"(": 1, ")": -1}.get(b[j], 0)
                if d == 0:
                    close = j
                    break
            return close is not None and close >= len(b) - s - 1
    return False


def classify(hunks: list[Hunk], k: int, cursor_line: int, typed_prefix: bool) -> str:
    """Kind of the case predicting ``hunks[k]`` (rules in the module docstring)."""
    h = hunks[k]
    if _is_import_hunk(h):
        return "import"
    if _is_rename(h):
        return "rename"
    if _is_signature(h):
        return "signature"
    d = _delta(h)
    if any(_delta(e) == d for e in hunks[:k]):
        return "repeat"
    if typed_prefix or (len(h.new) <= 1 and len(h.old) <= 1 and abs(h.line - cursor_line) <= NEAR_LINES
                        and h.path == hunks[k - 1].path):
        return "complete-line"
    return "other"


def cursor_after(h: Hunk) -> tuple[int, int]:
    """(line, character) at the end of hunk ``h`` once applied (its last new line, before the newline)."""
    if not h.new:
        return h.line, 0
    last = h.new[-1].rstrip("\r\n")
    return h.line + len(h.new) - 1, len(last)


def typed_prefix_variant(hunks: list[Hunk]) -> tuple[list[Hunk], int] | None:
    """The commit's hunks with one single-line insertion typed in two steps, and the index of the
    completing hunk; None when no insertion qualifies."""
    for i, h in enumerate(hunks):
        if h.old or len(h.new) != 1 or len(h.new[0].strip()) < MIN_SPLIT_CHARS or not h.new[0].endswith("\n"):
            continue
        line = h.new[0]
        indent = len(line) - len(line.lstrip())
        body = line.rstrip("\n")
        mid = indent + (len(body) - indent) // 2
        cut = next((j for j in range(mid, len(body)) if not (body[j].isalnum() or body[j] == "_")), None)
        if cut is None or cut <= indent:
            continue
        first = Hunk(h.path, h.line, [], [body[:cut] + "\n"])
        rest = Hunk(h.path, h.line, [body[:cut] + "\n"], [line])
        return hunks[:i] + [first, rest] + hunks[i + 1:], i + 1
    return None


def commit_records(name: str, repo: Path, licence: str, commit: str) -> list[dict]:
    parents = _git(repo, "rev-list", "--parents", "-n", "1", commit).split()[1:]
    if len(parents) != 1:
        return []
    parent = parents[0]
    changed = [ln.split("\t") for ln in _git(repo, "diff", "--name-status", "--no-renames", parent, commit).splitlines()]
    paths = sorted(p[1] for p in changed if len(p) == 2 and p[0] == "M" and Path(p[1]).suffix in LANGUAGES)
    if not paths or len(paths) > MAX_FILES:
        return []
    files, hunks = {}, []
    for path in paths:
        before, after = _blob(repo, parent, path), _blob(repo, commit, path)
        if before is None or after is None or "\r" in before + after:
            return []
        if max(len(before), len(after)) > MAX_FILE_CHARS:
            return []
        files[path] = before
        hunks += file_hunks(path, before, after)
    if not 2 <= len(hunks) <= MAX_HUNKS or any(max(len(h.old), len(h.new)) > MAX_HUNK_LINES for h in hunks):
        return []
    base = {"repo": name, "commit": commit, "licence": licence, "files": files}
    langs = {LANGUAGES[Path(p).suffix] for p in paths}
    language = LANGUAGES[Path(hunks[0].path).suffix] if len(langs) > 1 else langs.pop()
    out = []
    ks = list(range(1, len(hunks)))[:MAX_CASES_PER_COMMIT]
    out.append({**base, "variant": "commit", "language": language,
                "hunks": [h.to_json() for h in hunks],
                "cases": [{"k": k, "kind": classify(hunks, k, cursor_after(hunks[k - 1])[0], False)} for k in ks]})
    split = typed_prefix_variant(hunks)
    if split is not None:
        sh, k = split
        out.append({**base, "variant": "typed-prefix", "language": language,
                    "hunks": [h.to_json() for h in sh[: k + 1]],
                    "cases": [{"k": k, "kind": classify(sh, k, cursor_after(sh[k - 1])[0], True)}]})
    return out


def _order(name: str, commit: str) -> str:
    return hashlib.sha256(f"{name}:{commit}".encode()).hexdigest()


@dataclass(frozen=True)
class Source:
    name: str  # owner/name
    git_dir: Path
    commit: str  # the pinned commit: its history (never the mirror's HEAD) gives the cases
    licence: str


def build(sources: list[Source], total: int) -> list[dict]:
    per_repo = -(-total // len(sources))
    chosen: list[dict] = []
    for src in sources:
        commits = sorted(_git(src.git_dir, "rev-list", "--no-merges", src.commit).split(),
                         key=lambda c, name=src.name: _order(name, c))
        taken = 0
        for c in commits:
            if taken >= per_repo:
                break
            for rec in commit_records(src.name, src.git_dir, src.licence, c):
                if rec["variant"] == "typed-prefix" and taken % 3:
                    continue  # about a third of commits also give a typed-prefix case
                room = per_repo - taken
                rec["cases"] = rec["cases"][:room]
                if rec["cases"]:
                    chosen.append(rec)
                    taken += len(rec["cases"])
    python = [r for r in chosen if r["language"] == "python"]
    if len(python) == len(chosen):
        return chosen  # a Python-only build (a test): no other language to balance
    cap = int(PYTHON_SHARE * sum(len(r["cases"]) for r in chosen))
    while sum(len(r["cases"]) for r in python) > cap:
        victim = python.pop()
        chosen.remove(victim)
        cap = int(PYTHON_SHARE * sum(len(r["cases"]) for r in chosen))
    return chosen


# ---------------------------------------------------------------------------- a set from its manifest
class SetMismatch(RuntimeError):
    """The build gave other cases than the manifest pinned (the builder or a mirror changed)."""


@dataclass
class BuiltSet:
    path: Path
    records: list[dict]
    content_sha256: str

    @property
    def cases(self) -> int:
        return sum(len(r["cases"]) for r in self.records)

    def counts(self) -> tuple[dict[str, int], dict[str, int]]:
        """Cases per language and per kind (all one may read of a set kept unseen)."""
        languages: dict[str, int] = {}
        kinds: dict[str, int] = {}
        for r in self.records:
            languages[r["language"]] = languages.get(r["language"], 0) + len(r["cases"])
            for c in r["cases"]:
                kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
        return dict(sorted(languages.items())), {k: kinds[k] for k in KINDS if k in kinds}


def record_lines(records: list[dict]) -> list[str]:
    return [json.dumps(r, ensure_ascii=False) for r in records]


def content_digest(records: list[dict]) -> str:
    """sha256 of the records as stored, one JSON line each (the header left out)."""
    h = hashlib.sha256()
    for line in record_lines(records):
        h.update(line.encode("utf-8") + b"\n")
    return h.hexdigest()


def write_cases(path: Path, header: dict, records: list[dict]) -> None:
    """The header record, then one record a line, gzipped with no timestamp or name in the gzip
    header (the same cases give the same bytes); written beside and renamed, never half there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.part")  # two runners building at once never share one
    try:
        with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                                                   compresslevel=9) as gz:
            gz.write((json.dumps({"header": header}) + "\n").encode("utf-8"))
            for line in record_lines(records):
                gz.write(line.encode("utf-8") + b"\n")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def build_set(man: manifest.Manifest, mirrors: Path, out: Path | None = None) -> BuiltSet:
    """Build the set of ``man`` from the mirrors under ``mirrors`` into ``out`` (its cache file by
    default). MirrorError when a mirror or a pinned commit is missing; SetMismatch (nothing
    written) when the cases differ from the pinned count or digest."""
    sources, missing = [], []
    for pin in man.repos:
        try:
            git_dir = mirror_of(mirrors, pin.name)
            require_commit(git_dir, pin.name, pin.commit)
        except MirrorError as e:
            missing.append(str(e))
            continue
        sources.append(Source(pin.name, git_dir, pin.commit, pin.licence))
    if missing:
        raise MirrorError("\n  ".join([f"{len(missing)} of {len(man.repos)} mirrors missing:", *missing]))
    records = build(sources, man.target_cases)
    built = BuiltSet(out or man.cache_path, records, content_digest(records))
    if man.content_sha256 is not None and built.content_sha256 != man.content_sha256:
        raise SetMismatch(
            f"{man.name}: the build gave {built.cases} cases (sha256 {built.content_sha256[:12]}), the manifest "
            f"pins {man.cases} (sha256 {man.content_sha256[:12]}): the builder's rules changed since the set was "
            f"pinned. If that was meant, re-pin with --pin (and say so: the set's figures change)")
    if man.cases is not None and built.cases != man.cases:
        raise SetMismatch(f"{man.name}: the build gave {built.cases} cases, the manifest pins {man.cases}")
    header = {"format": manifest.BUILD_FORMAT, "set": man.name, "manifest_key": man.key,
              "content_sha256": built.content_sha256, "repos": {p.name: p.commit for p in man.repos}}
    write_cases(built.path, header, records)
    return built


def read_header(path: Path) -> dict | None:
    """The header record of a built set, None when the file is missing or unreadable."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return json.loads(f.readline())["header"]
    except (OSError, EOFError, ValueError, KeyError, TypeError):
        return None


def cached_set(man: manifest.Manifest, mirrors: Path) -> Path:
    """The built cases of ``man`` in the cache, built first when absent or stale (another manifest,
    another builder format, another digest); a message on stderr says so."""
    header = read_header(man.cache_path)
    if header is not None and header.get("manifest_key") == man.key and (
            man.content_sha256 is None or header.get("content_sha256") == man.content_sha256):
        return man.cache_path
    why = "not built yet" if header is None else "built from another manifest"
    print(f"next-edit set {man.name}: {why}; building it from {man.path.name} into {man.cache_path}",
          file=sys.stderr, flush=True)
    return build_set(man, mirrors).path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", type=Path, required=True, help="a set's manifest (benchmarks/data/next_edit_v2/*.json)")
    ap.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS,
                    help="folder of git mirrors (<owner+name>/repo), default %(default)s")
    ap.add_argument("--out", type=Path, default=None,
                    help="where the cases go (default: the set's file in the cache, where the runner looks)")
    ap.add_argument("--pin", action="store_true",
                    help="write the build's case count and digest into the manifest (a new set, or rules changed on purpose)")
    args = ap.parse_args(argv)
    try:
        man = manifest.load(args.manifest)
        if args.pin:
            man = dataclasses.replace(man, cases=None, content_sha256=None)
        built = build_set(man, args.mirrors, args.out)
    except (manifest.ManifestError, MirrorError, SetMismatch) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    languages, kinds = built.counts()
    if args.pin:
        manifest.pin(man, cases=built.cases, content_sha256=built.content_sha256, languages=languages, kinds=kinds)
    print(f"{man.name}: {built.cases} cases in {len(built.records)} records -> {built.path} "
          f"({built.path.stat().st_size / 1e6:.2f} MB)")
    print("languages:", languages, "kinds:", kinds)
    print(json.dumps({"set": man.name, "cases": built.cases, "content_sha256": built.content_sha256,
                      "languages": languages, "kinds": kinds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
