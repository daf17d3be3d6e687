"""Build the cases of the real-repository completion benchmark.

    python -m benchmarks.completion.cases [--mirrors /work/.mirror] [--out DIR] [--per-repo 64]
        [--seed 0] [--split dev|heldout|heldout2|heldout3|heldout4] [--fresh]

Each repository of ``repos.json`` is exported at its pinned commit from its mirror (fetched by
hand beforehand, see ``docs/benchmarks/completion.md``) into a checkout under ``DIR`` (default
``$XDG_CACHE_HOME/mercury-lsp-bench/completion/``), its source files are listed (``sources``:
vendored, generated, minified, binary, huge and CR files skipped) and ``--per-repo`` cases are
sampled, half from test files where the repository has enough:

* a file: the test (or non-test) files in a seeded shuffle, taken round-robin, at most
  ``MAX_CASES_PER_FILE`` cases per file;
* a line of it: not blank, not only a comment (by its first characters), at most
  ``MAX_CASE_LINE_CHARS`` long, with at least two tokens; drawn uniformly;
* a cursor in it at a token boundary (``text.boundaries``: after at least one token, before at
  least one more), drawn uniformly; the target is the rest of the line.

The draws use ``random.Random(f"{seed}:{owner/name}")``, so a build is the same on every machine.
Writes ``cases.<split>.jsonl`` (dev, heldout, heldout2, ...) (one case per line: repo, path, line
(0-based), character (code points), prefix_line_text, target, language, test_file, sha1 of the
file) and ``cases.meta.json`` (commits, files, skips, counts) into ``DIR``; never into git.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from benchmarks.completion.sources import (
    SPLITS,
    BenchmarkError,
    Repo,
    cache_dir,
    checkout_lock,
    export,
    is_test_path,
    language_of,
    load_repos,
    report_language,
    sha1,
    source_files,
)
from benchmarks.completion.text import boundaries

DEFAULT_MIRRORS = Path("/work/.mirror")
PER_REPO = 64
MAX_CASES_PER_FILE = 3  # spreads a repository's cases over its files
MAX_CASE_LINE_CHARS = 200  # longer lines are data or generated tables
TEST_SHARE = 0.5  # of a repository's cases, from test files (when it has enough)
COMMENT_STARTS = {"python": ("#", '"""', "'''"), "default": ("//", "/*", "*", "*/")}


def is_comment(language: str, stripped: str) -> bool:
    starts = COMMENT_STARTS["python"] if language == "python" else COMMENT_STARTS["default"]
    return stripped.startswith(starts)


def eligible_lines(path: str, text: str) -> list[int]:
    lang = report_language(language_of(path) or "")
    out = []
    for i, line in enumerate(text.split("\n")):
        s = line.strip()
        if s and len(line) <= MAX_CASE_LINE_CHARS and not is_comment(lang, s) and boundaries(line):
            out.append(i)
    return out


def case_record(repo: Repo, path: str, text: str, line: int, character: int) -> dict:
    ln = text.split("\n")[line]
    return {"repo": repo.name, "path": path, "line": line, "character": character,
            "prefix_line_text": ln[:character], "target": ln[character:],
            "language": report_language(language_of(path) or "plaintext"), "test_file": is_test_path(path),
            "sha1": sha1(text.encode("utf-8"))}


def sample(repo: Repo, files: dict[str, str], n: int, seed: int) -> list[dict]:
    """``n`` cases of ``repo`` (fewer when its files run out), deterministic for a seed."""
    rng = random.Random(f"{seed}:{repo.name}")
    pools = {True: [p for p in files if is_test_path(p)], False: [p for p in files if not is_test_path(p)]}
    lines: dict[str, list[int]] = {}
    taken: dict[str, int] = {}

    def draw(pool: list[str], want: int) -> list[dict]:
        order = pool[:]
        rng.shuffle(order)
        got: list[dict] = []
        for _ in range(MAX_CASES_PER_FILE):
            for path in order:
                if len(got) >= want:
                    return got
                if path not in lines:
                    lines[path] = eligible_lines(path, files[path])
                if not lines[path] or taken.get(path, 0) >= MAX_CASES_PER_FILE:
                    continue
                line = lines[path].pop(rng.randrange(len(lines[path])))
                ln = files[path].split("\n")[line]
                got.append(case_record(repo, path, files[path], line, rng.choice(boundaries(ln))))
                taken[path] = taken.get(path, 0) + 1
        return got

    want_test = round(n * TEST_SHARE)
    test = draw(pools[True], want_test)
    rest = draw(pools[False], n - len(test))
    if len(test) + len(rest) < n:  # too few non-test lines: more test cases
        test += draw([p for p in pools[True] if lines.get(p)], n - len(test) - len(rest))
    return sorted(test + rest, key=lambda c: (c["path"], c["line"], c["character"]))


def counts(cases: list[dict]) -> dict:
    out = {"cases": len(cases), "test": sum(c["test_file"] for c in cases), "languages": {}}
    out["non_test"] = out["cases"] - out["test"]
    for c in cases:
        out["languages"][c["language"]] = out["languages"].get(c["language"], 0) + 1
    return out


def build(repos: list[Repo], mirrors: Path, out: Path, per_repo: int, seed: int, fresh: bool) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    by_split: dict[str, list[dict]] = {s: [] for s in SPLITS}
    meta: dict = {"format": 1, "seed": seed, "per_repo": per_repo, "repos": {}}
    for repo in repos:
        with checkout_lock(out, repo):
            checkout = export(mirrors, repo, out, fresh=fresh)
            files, skipped = source_files(checkout)
        cases = sample(repo, files, per_repo, seed)
        by_split[repo.split] += cases
        meta["repos"][repo.name] = {
            "split": repo.split, "language": repo.language, "licence": repo.licence, "commit": repo.commit,
            "checkout": str(checkout), "source_files": len(files),
            "test_files": sum(map(is_test_path, files)), "skipped": skipped, **counts(cases)}
        print(f"{repo.name:<30}{repo.split:>8}{repo.language:>11}{len(files):>7} files"
              f"{meta['repos'][repo.name]['test_files']:>5} test{len(cases):>5} cases"
              f"{meta['repos'][repo.name]['test']:>4} test", file=sys.stderr, flush=True)
    for split, cases in by_split.items():
        if not any(r.split == split for r in repos):
            continue
        path = out / f"cases.{split}.jsonl"
        path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")
        meta[split] = counts(cases)
    old = out / "cases.meta.json"
    if old.is_file() and set(SPLITS) - {r.split for r in repos}:  # a one-split build keeps the other's meta
        prev = json.loads(old.read_text())
        meta["repos"] = {**{k: v for k, v in prev.get("repos", {}).items() if k not in meta["repos"]},
                         **meta["repos"]}
        meta.update({s: prev[s] for s in SPLITS if s not in meta and s in prev})
    old.write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS,
                    help="folder of git mirrors (<owner+name>/repo), default %(default)s")
    ap.add_argument("--out", type=Path, default=None, help="cases and checkouts (default: the cache folder)")
    ap.add_argument("--repos", type=Path, default=None, help="repos.json to use (default: the committed one)")
    ap.add_argument("--per-repo", type=int, default=PER_REPO)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--split", choices=SPLITS, default=None, help="only this split (default: both)")
    ap.add_argument("--fresh", action="store_true", help="export every checkout again")
    args = ap.parse_args(argv)
    out = args.out or cache_dir()
    try:
        repos = load_repos(*([args.repos] if args.repos else []), split=args.split)
        meta = build(repos, args.mirrors, out, args.per_repo, args.seed, args.fresh)
    except BenchmarkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = {s: meta[s] for s in SPLITS if s in meta}
    for s, c in summary.items():
        print(f"{s}: {c['cases']} cases ({c['test']} in test files, {c['non_test']} elsewhere) "
              f"-> {out / f'cases.{s}.jsonl'}")
    print(json.dumps({"completion_cases": {s: c["cases"] for s, c in summary.items()},
                      "test": {s: c["test"] for s, c in summary.items()},
                      "languages": {s: c["languages"] for s, c in summary.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
