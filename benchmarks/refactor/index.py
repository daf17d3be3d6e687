"""The refactor CLI's persistent word index: ``refactor propagate`` over a large tree, without the
index, with a cold one and with a warm one.

    python -m benchmarks.refactor.index [--files N] [--runs 3] [--out benchmarks/results/refactor_index.json]

The tree is a copy of this interpreter's standard library (``N`` ``.py`` files at most, under
``lib/`` of a temporary directory, no git: the files are listed by walking). The edit renames one function at
its ``def`` (``shutil.get_archive_formats``, a line naming nothing else: an edit whose lines name
common words, ``path``, ``length``, mentions most files, and the index can spare none) and is given
as a patch file. The tree's files are dated a minute back (a checkout, not files written this
second). Each arm runs ``mercury-lsp refactor propagate TREE --diff PATCH --no-model
--format summary`` as its own process (start-up included), ``--runs`` times: ``no index``
(``--no-index``), ``cold`` (an empty cache directory each run) and ``warm`` (the cache of a
previous run, the tree unchanged). The files read come from the summary's last line. Prints a
table, writes ``--out`` and ends with one JSON line (warm against no index, in one run).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from benchmarks import RESULTS as RESULTS_DIR
from benchmarks.common.report import git_state, write_atomic

DEFAULT_OUT = RESULTS_DIR / "refactor_index.json"
# A definition whose line names nothing common (a line naming 'length' or 'path' mentions most files)
DEFINITION = ("shutil.py", "def get_archive_formats(", "def archive_formats(")
READ = re.compile(r"(\d+) file\(s\) read")
TIMEOUT_S = 600
SETTLED_NS = 60 * 10**9  # how far back the tree's files are dated


def make_tree(dest: Path, limit: int) -> int:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    n = 0
    first = stdlib / DEFINITION[0]  # the edited file, then the rest
    for src in [first, *(p for p in sorted(stdlib.rglob("*.py")) if p != first)]:
        rel = src.relative_to(stdlib)
        if any(part == "site-packages" or part.startswith(".") for part in rel.parts):
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest / rel)
        n += 1
        if n >= limit:
            break
    return n


def run(tree: Path, patch: Path, cache: Path, flags: list[str]) -> tuple[float, int]:
    env = {**os.environ, "MERCURY_LSP_CACHE": str(cache)}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mercury_lsp.cli", "refactor", "propagate", "lib", "--diff", str(patch),
                           "--no-model", "--format", "summary", *flags], capture_output=True, text=True, env=env,
                          timeout=TIMEOUT_S, cwd=tree.parent)
    seconds = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        raise SystemExit(f"propagate failed ({done.returncode}): {done.stderr[-500:]}")
    m = READ.search(done.stdout + done.stderr)
    return seconds, int(m.group(1)) if m else -1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=1500)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mercury-index-bench-") as tmp:
        work, caches = Path(tmp) / "work", Path(tmp) / "caches"
        tree = work / "lib"  # (not the working directory itself: its modules would shadow the stdlib)
        tree.mkdir(parents=True)
        n = make_tree(tree, args.files)
        name, old, new = DEFINITION
        target = tree / name
        text = target.read_text()
        if old not in text:
            raise SystemExit(f"{name} has no {old!r} in this Python")
        target.write_text(text.replace(old, new, 1))
        past = time.time_ns() - SETTLED_NS
        for f in tree.rglob("*.py"):
            os.utime(f, ns=(past, past))
        patch = Path(tmp) / "rename.diff"
        lines_old, lines_new = text.splitlines(keepends=True), text.replace(old, new, 1).splitlines(keepends=True)
        i = next(k for k, (a, b) in enumerate(zip(lines_old, lines_new, strict=True)) if a != b)
        patch.write_text(f"--- a/lib/{name}\n+++ b/lib/{name}\n@@ -{i + 1},1 +{i + 1},1 @@\n-{lines_old[i]}+{lines_new[i]}")
        arms: dict[str, list[tuple[float, int]]] = {"no index": [], "cold": [], "warm": []}
        warm_cache = caches / "warm"
        run(tree, patch, warm_cache, [])  # builds the warm arm's index
        for r in range(args.runs):  # the arms interleaved, run by run
            arms["no index"].append(run(tree, patch, caches / "none", ["--no-index"]))
            arms["cold"].append(run(tree, patch, caches / f"cold{r}", []))
            arms["warm"].append(run(tree, patch, warm_cache, []))
    summary = {arm: {"median_s": round(statistics.median(s for s, _ in got), 3),
                     "min_s": round(min(s for s, _ in got), 3), "files_read": got[-1][1]}
               for arm, got in arms.items()}
    base = summary["no index"]["median_s"]
    print(f"refactor propagate over {n} stdlib files (rename {DEFINITION[1]!r}), {args.runs} runs each")
    print(f"{'arm':10s} {'median s':>9s} {'min s':>7s} {'files read':>11s} {'vs no index':>12s}")
    for arm, row in summary.items():
        print(f"{arm:10s} {row['median_s']:9.2f} {row['min_s']:7.2f} {row['files_read']:11d} "
              f"{base / row['median_s']:11.2f}x")
    result = {"benchmark": "refactor_index", "files": n, "runs": args.runs, "arms": summary,
              "git": git_state(), "python": sys.version.split()[0]}
    write_atomic(args.out, json.dumps(result, indent=2) + "\n")
    print(json.dumps({"refactor_index_files": n, "warm_speedup": round(base / summary["warm"]["median_s"], 2),
                      "warm_files_read": summary["warm"]["files_read"],
                      "no_index_files_read": summary["no index"]["files_read"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
