"""The repository memory at scale: build time, memory, size on disk and query latency at 1 000,
10 000 and 50 000 files of real code.

    python -m benchmarks.memory.scale [--sizes 1000 10000 50000] [--queries 300]
        [--mirrors /work/.mirror] [--out benchmarks/results/memory_scale.json]

The workspace of each size is the first N eligible files (``memory.sources``) of real code on this
machine — the Python of the project's virtual environment and of the interpreter it runs on,
then the VS Code extension's ``node_modules`` (JavaScript/TypeScript), then (this machine has
about 23 000 such files) three large public repositories at pinned commits, exported from their
git mirrors (``MIRRORED``: the ``fetch`` tool's ``github:babel/babel``, ``github:prettier/prettier``,
``github:python/typeshed``; a missing mirror is skipped, and the table says how many files a size
really had) — copied once into
``$XDG_CACHE_HOME/mercury-lsp-bench/memory-scale/<N>/`` (a plain folder, like a checkout). Each
measurement runs in a fresh process (``--child``), so its RSS is the memory's own plus the
interpreter and numpy (reported apart: ``baseline_mb``, the same process before the memory is
made):

* **cold build** — a ``Memory`` with no saved index: from ``start()`` to the end of the first
  build (listing, reading, tokenizing, suffix arrays, saving);
* **RSS** — VmRSS after the build, and after the queries, with its parts: RssAnon (the heap)
  and RssFile (the pages of the memory-mapped shards that queries touched, which the kernel can
  drop and read again);
* **after idle** — VmRSS and RssFile once the indexer's next idle pass has run (it unmaps the
  shard pages the queries touched: ``Shard.release``);
* **warm start** — a second process opening the saved index (``stat`` of every file, nothing
  read);
* **queries** — ``Memory.candidates`` at random token boundaries of random files (the file
  opened as the document, as the editor would), p50/p95/max ms; and ``Memory.retrieve``.

Prints a table, writes the JSON, ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULTS = REPO_ROOT / "benchmarks" / "results"
SIZES = (1000, 10_000, 50_000)
QUERIES = 300
SEED = 0
MIRRORS = Path("/work/.mirror")  # where the fetch tool puts git mirrors (--mirrors elsewhere)
SETTLE_S = 60.0  # the longest wait for the indexer's idle pass after the queries


def sources() -> list[Path]:
    """Folders of real code on this machine, in order."""
    venv = Path(sys.prefix) / "lib"
    base = Path(sys.base_prefix) / "lib"
    out = sorted(venv.glob("python3*/site-packages")) + sorted(p for p in base.glob("python3*") if p.is_dir())
    node = REPO_ROOT / "editors" / "vscode" / "node_modules"
    for cand in (node, Path("/work/main/editors/vscode/node_modules")):
        if cand.is_dir():
            out.append(cand.resolve())
            break
    return out


# Large repositories that bring a workspace past 50 000 files (licences read from their LICENSE
# files at these commits), exported with `git archive` after the local folders of ``sources()``.
MIRRORED = (
    ("babel/babel", "1da3cfa1a25503c7ecba7304f8738933e6d16dca"),  # MIT
    ("prettier/prettier", "4f84a934201322ca87750e2b9b25baf296da6560"),  # MIT
    ("python/typeshed", "21dff5c0ca9a6cc18f70dac51b36e1f08e30be5d"),  # Apache-2.0
)


def workspace_folders(mirrors: Path = MIRRORS) -> list[Path]:
    """Where a workspace's files come from, in order: ``sources()``, then ``MIRRORED``."""
    return sources() + mirrored_sources(mirrors)


def mirrored_sources(mirrors: Path) -> list[Path]:
    """``MIRRORED`` exported (once) under the cache; those without a mirror here are left out."""
    out = []
    for name, commit in MIRRORED:
        git_dir = mirrors / name.replace("/", "+") / "repo"
        dest = cache_dir() / "mirrored" / f"{name.replace('/', '+')}-{commit[:12]}"
        if not dest.is_dir() and git_dir.is_dir():
            tmp = dest.with_suffix(".part")
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", commit],
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
            tmp.rename(dest)
        if dest.is_dir():
            out.append(dest)
        else:
            print(f"memory scale: no mirror of {name} under {mirrors} (fetch github:{name}); left out",
                  file=sys.stderr)
    return out


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mercury-lsp-bench" / "memory-scale"


def materialize(n: int, folders: list[Path]) -> Path:
    """A folder of the first ``n`` eligible files of ``folders`` (copied once; again when the
    folders change)."""
    from mercury_lsp.memory.sources import SKIP_DIRS, language_of, read_source

    dest = cache_dir() / str(n)
    stamp = dest.with_suffix(".done")
    key = json.dumps({"folders": [str(f) for f in folders], "eligible": "memory listing"})
    if stamp.is_file() and stamp.read_text().partition("\n")[2] == key:
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    copied = 0
    for i, src in enumerate(folders):
        for f in walk(src):
            if copied >= n:
                break
            if language_of(f) is None or SKIP_DIRS.intersection(f.relative_to(src).parts[:-1]) \
                    or read_source(f) is None:  # what the memory itself would leave out
                continue
            target = dest / f"s{i}" / f.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, target)
            copied += 1
        if copied >= n:
            break
    stamp.write_text(f"{copied}\n{key}")
    return dest


def walk(top: Path):
    """Every file under ``top`` in a stable order (no git rules: these folders are ignored by
    the repository they sit in), no symbolic links, no caches."""
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if not p.is_symlink():
                yield p


def rss_mb(field: str = "VmRSS") -> float:
    """A line of /proc/self/status in MB: VmRSS, or its parts RssAnon (the heap: what the memory
    holds) and RssFile (pages of mapped files: the shards' pages that queries touched, which the
    kernel can drop and read again)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def child(root: Path, cache: Path, queries: int) -> dict:
    """One measurement in this (fresh) process; ``cache``: the memory's cache folder."""
    os.environ["MERCURY_LSP_CACHE"] = str(cache)
    import numpy  # noqa: F401  (in the baseline, as the daemon always has it)

    from mercury_lsp.memory import Context, Memory, MemoryOptions
    from mercury_lsp.memory.sources import is_test_path, language_of
    from mercury_lsp.memory.tokens import tokenize

    baseline = rss_mb()
    summaries = []
    t0 = time.perf_counter()
    mem = Memory([root], MemoryOptions(max_files=10_000_000), on_done=summaries.append)
    mem.start()
    mem.wait_built()
    build_s = time.perf_counter() - t0
    after_build = rss_mb()
    files = [Path(p) for p in mem.stores[0].where]
    rng = random.Random(SEED)
    lat, ret = [], []
    for _ in range(queries):
        f = rng.choice(files)
        text = f.read_text(encoding="utf-8")
        data = text.encode("utf-8")
        toks = tokenize(data)
        if len(toks) < 2:
            continue
        cut = int(toks.ends[rng.randrange(len(toks) - 1)])
        cursor = len(data[:cut].decode("utf-8", errors="ignore"))
        ctx = Context(f.as_uri(), text, cursor, language_of(f) or "", is_test_path(str(f)))
        t1 = time.perf_counter()
        mem.candidates(ctx)
        lat.append((time.perf_counter() - t1) * 1000)
        t1 = time.perf_counter()
        mem.retrieve(ctx)
        ret.append((time.perf_counter() - t1) * 1000)
    after_queries = rss_mb()
    anon, mapped = rss_mb("RssAnon"), rss_mb("RssFile")
    mem.settle(SETTLE_S)  # the indexer's next idle pass unmaps the shard pages queries touched
    idle, idle_mapped = rss_mb(), rss_mb("RssFile")
    stats = mem.stats()
    mem.close()
    s = summaries[0]
    return {"files": stats["files"], "megabytes_text": stats["megabytes"], "shards": stats["shards"],
            "read": s.read, "build_s": round(build_s, 2), "baseline_mb": round(baseline, 1),
            "rss_after_build_mb": round(after_build, 1), "rss_after_queries_mb": round(after_queries, 1),
            "memory_mb": round(after_queries - baseline, 1), "rss_anon_mb": round(anon, 1),
            "rss_file_mb": round(mapped, 1), "rss_after_idle_mb": round(idle, 1),
            "rss_file_after_idle_mb": round(idle_mapped, 1),
            "query_p50_ms": round(percentile(lat, 0.5), 2), "query_p95_ms": round(percentile(lat, 0.95), 2),
            "query_max_ms": round(max(lat, default=0), 2), "retrieve_p50_ms": round(percentile(ret, 0.5), 2),
            "retrieve_p95_ms": round(percentile(ret, 0.95), 2), "queries": len(lat)}


def run_child(root: Path, cache: Path, queries: int) -> dict:
    out = subprocess.run([sys.executable, "-m", "benchmarks.memory.scale", "--child", str(root),
                          str(cache), str(queries)], capture_output=True, text=True, cwd=REPO_ROOT,
                         env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    if out.returncode != 0:
        raise SystemExit(f"the measurement failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def disk_mb(folder: Path) -> float:
    return round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20, 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--queries", type=int, default=QUERIES)
    ap.add_argument("--out", type=Path, default=RESULTS / "memory_scale.json")
    ap.add_argument("--mirrors", type=Path, default=MIRRORS,
                    help="git mirrors of MIRRORED (the fetch tool's layout: <owner+name>/repo)")
    ap.add_argument("--child", nargs=3, metavar=("ROOT", "CACHE", "QUERIES"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(Path(args.child[0]), Path(args.child[1]), int(args.child[2]))))
        return 0
    rows = []
    load = [os.getloadavg()[0]]
    folders = workspace_folders(args.mirrors)
    for n in args.sizes:
        root = materialize(n, folders)
        cache = cache_dir() / f"cache-{n}"
        shutil.rmtree(cache, ignore_errors=True)
        cold = run_child(root, cache, args.queries)
        warm = run_child(root, cache, 0)
        rows.append({"size": n, **cold, "warm_start_s": warm["build_s"], "warm_read": warm["read"],
                     "disk_mb": disk_mb(cache)})
        print(f"{n:>7} files: cold {cold['build_s']:.1f} s, warm {warm['build_s']:.2f} s, memory "
              f"{cold['memory_mb']:.0f} MB (RSS {cold['rss_after_queries_mb']:.0f}), disk {rows[-1]['disk_mb']:.0f} MB, "
              f"query p50/p95 {cold['query_p50_ms']:.1f}/{cold['query_p95_ms']:.1f} ms", file=sys.stderr, flush=True)
    load.append(os.getloadavg()[0])
    head = f"{'files':>8}{'text MB':>9}{'cold s':>8}{'warm s':>8}{'mem MB':>8}{'RSS MB':>8}{'anon MB':>9}" \
           f"{'file MB':>9}{'idle MB':>9}{'disk MB':>9}{'q p50':>8}{'q p95':>8}{'ret p95':>9}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['files']:>8}{r['megabytes_text']:>9.1f}{r['build_s']:>8.1f}{r['warm_start_s']:>8.2f}"
              f"{r['memory_mb']:>8.0f}{r['rss_after_queries_mb']:>8.0f}{r['rss_anon_mb']:>9.0f}{r['rss_file_mb']:>9.0f}"
              f"{r['rss_after_idle_mb']:>9.0f}{r['disk_mb']:>9.0f}"
              f"{r['query_p50_ms']:>8.1f}{r['query_p95_ms']:>8.1f}{r['retrieve_p95_ms']:>9.1f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"benchmark": "memory_scale", "load_avg": load, "cpus": os.cpu_count(),
                                    "rows": rows}, indent=1) + "\n")
    print(json.dumps({"memory_scale": {str(r["size"]): {"build_s": r["build_s"], "memory_mb": r["memory_mb"],
                                                        "rss_after_idle_mb": r["rss_after_idle_mb"],
                                                        "query_p95_ms": r["query_p95_ms"]} for r in rows}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
