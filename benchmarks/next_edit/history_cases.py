"""Build the real-history cases of the next-edit benchmark v2 (``benchmarks/next_edit/histories.py``).

    python -m benchmarks.next_edit.history_cases --repo NAME=GIT_DIR:LICENCE [--repo ...]
        [--out benchmarks/data/next_edit_v2/cases.jsonl.gz] [--cases 360]

Each ``--repo`` is a local git directory (a clone, or a bare mirror) of a permissively licensed
public project; ``NAME`` is its ``owner/name`` and ``LICENCE`` the SPDX id read from its licence
file (stored with every case). The committed set was built from these (``git log -1`` of each
mirror at build time is recorded in the file's header record):

    python -m benchmarks.next_edit.history_cases \\
        --repo pallets/itsdangerous=/work/.mirror/pallets+itsdangerous/repo:BSD-3-Clause \\
        --repo more-itertools/more-itertools=/work/.mirror/more-itertools+more-itertools/repo:MIT \\
        --repo spf13/cobra=/work/.mirror/spf13+cobra/repo:Apache-2.0 \\
        --repo go-chi/chi=/work/.mirror/go-chi+chi/repo:MIT \\
        --repo sindresorhus/ky=/work/.mirror/sindresorhus+ky/repo:MIT \\
        --repo tj/commander.js=/work/.mirror/tj+commander.js/repo:MIT \\
        --repo sharkdp/fd=/work/.mirror/sharkdp+fd/repo:MIT

**Replay.** A commit's source files (supported languages only) are diffed line by line
(``difflib``, no junk heuristic) into hunks, ordered by path and then top to bottom. Hunk ``k``
is predicted from the parent's files with hunks ``1..k-1`` applied and the cursor at the end of
hunk ``k-1``. Hunk coordinates are those of the text the hunk applies to (the state after the
hunks before it), so hunks replay as ``didChange`` calls in order.

**Which commits.** Not merges; 1–4 files of a supported language, each at most
``MAX_FILE_CHARS`` and UTF-8 without CR; 2–``MAX_HUNKS`` hunks, none longer than
``MAX_HUNK_LINES`` lines on either side. Commits are taken in sha256(repo, commit) order (a
stable shuffle), at most ``MAX_CASES_PER_COMMIT`` cases each (k = 2, 3, ...), at most
``--cases`` in all, Python at most half, spread evenly over the repositories.

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
import difflib
import gzip
import hashlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmarks import DATA

DEFAULT_OUT = DATA / "next_edit_v2" / "cases.jsonl.gz"
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


def build(repos: list[tuple[str, Path, str]], total: int) -> list[dict]:
    per_repo = -(-total // len(repos))
    python_repos = 0
    chosen: list[dict] = []
    for name, repo, licence in repos:
        commits = sorted(_git(repo, "rev-list", "--no-merges", "HEAD").split(), key=lambda c: _order(name, c))
        taken = 0
        for c in commits:
            if taken >= per_repo:
                break
            for rec in commit_records(name, repo, licence, c):
                if rec["variant"] == "typed-prefix" and taken % 3:
                    continue  # about a third of commits also give a typed-prefix case
                room = per_repo - taken
                rec["cases"] = rec["cases"][:room]
                if rec["cases"]:
                    chosen.append(rec)
                    taken += len(rec["cases"])
        python_repos += any(r["language"] == "python" for r in chosen if r["repo"] == name)
    python = [r for r in chosen if r["language"] == "python"]
    if len(python) == len(chosen):
        return chosen  # a Python-only build (a test): no other language to balance
    cap = int(PYTHON_SHARE * sum(len(r["cases"]) for r in chosen))
    while sum(len(r["cases"]) for r in python) > cap:
        victim = python.pop()
        chosen.remove(victim)
        cap = int(PYTHON_SHARE * sum(len(r["cases"]) for r in chosen))
    return chosen


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", action="append", required=True, metavar="NAME=GIT_DIR:LICENCE")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--cases", type=int, default=360)
    args = ap.parse_args(argv)
    repos = []
    for spec in args.repo:
        name, _, rest = spec.partition("=")
        path, _, licence = rest.rpartition(":")
        repos.append((name, Path(path), licence))
    records = build(repos, args.cases)
    heads = {name: _git(repo, "rev-parse", "HEAD").strip() for name, repo, _ in repos}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(json.dumps({"header": {"format": 1, "repos": heads}}) + "\n")
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    counts: dict[str, int] = {}
    kinds: dict[str, int] = {}
    for r in records:
        counts[r["language"]] = counts.get(r["language"], 0) + len(r["cases"])
        for c in r["cases"]:
            kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
    n = sum(counts.values())
    print(f"{n} cases in {len(records)} records -> {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")
    print("languages:", counts, "kinds:", kinds)
    print(json.dumps({"cases": n, "languages": counts, "kinds": kinds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
