"""Corpus v2's size, measured: build it from the lock and count every token.

    python -m benchmarks.corpus_v2 [--out /tmp/corpus-v2] [--workers 2]
    python -m benchmarks.corpus_v2 --report-only --out DIR     the figures of a finished build

Builds corpus v2 (engine/train/corpus_v2.py: the standard library and every archive pinned in
engine/train/corpus_v2.lock.json, licences re-read from their metadata, filters, 13-gram
contamination check against HumanEval-infilling, exact dedup) and tokenizes all of it with the
embedded model's tokenizer: the token count is exact, not estimated. The corpus goes to
``--out`` (outside the repository). Prints the largest sources, writes
benchmarks/results/corpus_v2.json (totals, and name==version, licence, files, bytes and tokens
of every source), the same per-source table as benchmarks/results/corpus_v2_sources.md, and
ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from engine.train.corpus_v2 import build_v2
from engine.train.decontam import ContaminationIndex
from engine.train.gpu_args import EVAL_CANDIDATES

RESULTS = Path(__file__).resolve().parent / "results" / "corpus_v2.json"
SOURCES_MD = RESULTS.with_name("corpus_v2_sources.md")
EVAL_DATA = next((p for p in EVAL_CANDIDATES if p.exists()), EVAL_CANDIDATES[0])
GOAL_TOKENS = 150_000_000  # issue 11: at least 150 M unique tokens
TOP = 20


def summarise(out: Path, wall_s: float | None) -> dict:
    stats = json.loads((out / "tokens.json").read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    files = {p["spec"]: p for p in manifest.get("pins", [])}
    sources = [{"source": name, "license": s["license"], "files": s["files"], "bytes": s["bytes"],
                "tokens": stats["source_tokens"].get(name, 0), "sha256": files.get(name, {}).get("sha256")}
               for name, s in manifest["report"]["sources"].items()]
    sources.sort(key=lambda s: -s["tokens"])
    totals = {k: stats[k] for k in ("unique_tokens", "train_tokens", "heldout_tokens", "sources", "files",
                                    "bytes", "dropped_contaminated", "dropped_duplicates",
                                    "contamination_check")}
    totals.update(goal_tokens=GOAL_TOKENS, meets_goal=stats["unique_tokens"] >= GOAL_TOKENS,
                  bytes_per_token=round(stats["bytes"] / max(1, stats["unique_tokens"]), 3),
                  refused=stats["refused"], build_s=stats["build_s"], wall_s=wall_s,
                  python=manifest["python"])
    return {"totals": totals, "sources": sources}


def sources_markdown(result: dict) -> str:
    t = result["totals"]
    rows = [f"| {s['source']} | {s['license']} | {s['files']} | {s['bytes'] / 1e6:.2f} | {s['tokens']:,} |"
            for s in result["sources"]]
    refused = [f"| {spec} | {lic} |" for spec, lic in sorted(t["refused"].items())]
    return "\n".join([
        "# Corpus v2: every source (written by `python -m benchmarks.corpus_v2`)", "",
        f"{t['sources']} sources, {t['files']:,} files, {t['bytes'] / 1e6:.1f} MB, "
        f"**{t['unique_tokens']:,} tokens** (embedded tokenizer, one `<|endoftext|>` per file included), "
        f"after dropping {t['dropped_duplicates']:,} duplicate and {t['dropped_contaminated']:,} "
        f"contaminated files ({t['contamination_check']}).", "",
        "| source (name==version) | licence (from its metadata) | files | MB | tokens |", "|---|---|---:|---:|---:|",
        *rows, "", "Refused (licence not permissive, or naming a restriction):", "",
        "| package | licence |", "|---|---|", *refused, ""])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/corpus-v2"))
    ap.add_argument("--wheels", type=Path, default=Path.home() / ".cache" / "mercury-lsp" / "wheels-v2")
    ap.add_argument("--eval-data", type=Path, default=EVAL_DATA)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--report-only", action="store_true", help="summarise a finished build in --out")
    args = ap.parse_args()
    wall = None
    if not args.report_only:
        index = ContaminationIndex.load(args.eval_data)
        if not index.active:
            raise SystemExit(f"{args.eval_data}: no evaluation data: the contamination check is required")
        t0 = time.perf_counter()
        build_v2(args.out, index, args.workers, cache=args.wheels)
        wall = round(time.perf_counter() - t0, 1)
    result = summarise(args.out, wall)
    print(f"{'source':<40}{'licence':<34}{'files':>7}{'MB':>8}{'M tokens':>10}")
    for s in result["sources"][:TOP]:
        print(f"{s['source']:<40}{s['license'][:32]:<34}{s['files']:>7}{s['bytes'] / 1e6:>8.1f}"
              f"{s['tokens'] / 1e6:>10.2f}")
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    SOURCES_MD.write_text(sources_markdown(result))
    print(json.dumps(result["totals"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
