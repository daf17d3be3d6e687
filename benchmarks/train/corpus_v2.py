"""Corpus v2's size, measured: build it from the lock and count its tokens.

    python -m benchmarks.train.corpus_v2 [--out /tmp/corpus-v2] [--workers 2]   build; count every token
    python -m benchmarks.train.corpus_v2 --sample 0.02 [--reuse]   build the documents; count a sample
    python -m benchmarks.train.corpus_v2 --report-only --out DIR    the figures of a finished full build

Builds corpus v2 (mercury_train/corpus_v2.py: the standard library and every archive pinned in
mercury_train/corpus_v2.lock.json, licences re-read from their metadata, filters, 13-gram
contamination check against HumanEval-infilling, exact dedup). The default tokenizes all of it
with the embedded model's tokenizer: the token count is exact. ``--sample F`` (for machines too
slow for that) tokenizes a deterministic random sample of a fraction F of the kept files and
gives a ratio estimate of the total with its 95 % confidence interval; files and bytes stay
exact (``--reuse``: the documents already built in ``--out``). The corpus goes to ``--out``
(outside the repository). Prints the largest sources, writes benchmarks/results/corpus_v2.json
(totals, and name==version, licence, files, bytes and SHA-256 of every source), the same table
as benchmarks/results/corpus_v2_sources.md, and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import time
from pathlib import Path

import numpy as np

from benchmarks import RESULTS as RESULTS_DIR
from mercury_train.corpus import read_documents
from mercury_train.corpus_v2 import TOKENIZER, build_pinned, build_v2
from mercury_train.decontam import ContaminationIndex
from mercury_train.gpu_args import EVAL_CANDIDATES
from mercury_train.pins import load_lock

RESULTS = RESULTS_DIR / "corpus_v2.json"
SOURCES_MD = RESULTS.with_name("corpus_v2_sources.md")
EVAL_DATA = next((p for p in EVAL_CANDIDATES if p.exists()), EVAL_CANDIDATES[0])
GOAL_TOKENS = 150_000_000  # issue 11: at least 150 M unique tokens
TOP = 20
Z95 = 1.959964  # the normal quantile of a two-sided 95 % interval


def _sources(manifest: dict, tokens: dict[str, int] | None) -> list[dict]:
    pins = {p["spec"]: p for p in manifest.get("pins", [])}
    rows = [{"source": name, "license": s["license"], "files": s["files"], "bytes": s["bytes"],
             "tokens": None if tokens is None else tokens.get(name, 0), "sha256": pins.get(name, {}).get("sha256")}
            for name, s in manifest["report"]["sources"].items()]
    return sorted(rows, key=lambda r: -r["bytes"])


def _totals(manifest: dict) -> dict:
    r = manifest["report"]
    return {"sources": len(r["sources"]), "files": r["train_files"] + r["heldout_files"],
            "bytes": r["train_bytes"] + r["heldout_bytes"], "dropped_contaminated": r["dropped_contaminated"],
            "dropped_duplicates": r["dropped_duplicates"], "dropped_size_or_generated": r["dropped_size_or_generated"],
            "dropped_tests": r["dropped_tests"], "contamination_check": r["contamination_check"],
            "refused": r["refused"], "build_s": round(r["seconds"], 1), "python": manifest["python"],
            "goal_tokens": GOAL_TOKENS}


def summarise(out: Path, wall_s: float | None) -> dict:
    """The figures of a full build: every token counted."""
    stats = json.loads((out / "tokens.json").read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    totals = _totals(manifest)
    totals.update({k: stats[k] for k in ("unique_tokens", "train_tokens", "heldout_tokens")},
                  method="exact: every kept file tokenized", meets_goal=stats["unique_tokens"] >= GOAL_TOKENS,
                  bytes_per_token=round(totals["bytes"] / max(1, stats["unique_tokens"]), 3), wall_s=wall_s)
    return {"totals": totals, "sources": _sources(manifest, stats["source_tokens"])}


def in_sample(path: str, frac: float) -> bool:
    h = int.from_bytes(hashlib.sha256(f"sample:{path}".encode()).digest()[:8], "big")
    return h / 2**64 < frac


def sample_estimate(out: Path, frac: float, wall_s: float | None) -> dict:
    """A ratio estimate of the token count from a random sample of the kept files: tokens =
    (sampled tokens / sampled bytes) x all bytes, plus one ``<|endoftext|>`` per file; the
    interval is the ratio estimator's normal 95 % interval with the finite-population factor."""
    from tokenizers import Tokenizer

    manifest = json.loads((out / "manifest.json").read_text())
    totals = _totals(manifest)
    tok = Tokenizer.from_file(str(TOKENIZER))
    texts = [d["text"] for split in ("train", "heldout") for d in read_documents(out / f"{split}.jsonl.gz")
             if in_sample(d["path"], frac)]
    b = np.array([len(t.encode()) for t in texts], dtype=np.float64)
    t = np.array([len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False)], dtype=np.float64)
    n, N, B = b.size, totals["files"], totals["bytes"]
    if n < 2:
        raise SystemExit(f"--sample {frac}: {n} of {N} files sampled; a larger fraction is needed")
    ratio = t.sum() / b.sum()
    resid = t - ratio * b
    se = B / b.mean() * math.sqrt((1 - n / N) * (resid ** 2).sum() / (n - 1) / n)
    est = ratio * B + N  # text tokens, plus the end-of-text token after each file
    totals.update(method=f"ratio estimate from a {frac:.3%} random sample of the kept files", sample_files=n,
                  sample_bytes=int(b.sum()), sample_tokens=int(t.sum()), unique_tokens=round(float(est)),
                  unique_tokens_ci95=[int(est - Z95 * se), int(est + Z95 * se)],
                  meets_goal=bool(est - Z95 * se >= GOAL_TOKENS), bytes_per_token=round(1 / ratio, 3), wall_s=wall_s)
    return {"totals": totals, "sources": _sources(manifest, None)}


def _tokens_cell(n: int | None) -> str:
    return "" if n is None else f"{n:,}"


def sources_markdown(result: dict) -> str:
    t = result["totals"]
    rows = [f"| {s['source']} | {s['license']} | {s['files']} | {s['bytes'] / 1e6:.2f} | {_tokens_cell(s['tokens'])} |"
            for s in result["sources"]]
    refused = [f"| {spec} | {lic} |" for spec, lic in sorted(t["refused"].items())]
    ci = t.get("unique_tokens_ci95")
    count = f"**{t['unique_tokens']:,} tokens**" + (f" (95 % interval {ci[0]:,} to {ci[1]:,})" if ci else "")
    return "\n".join([
        "# Corpus v2: every source (written by `python -m benchmarks.train.corpus_v2`)", "",
        f"{t['sources']} sources, {t['files']:,} files, {t['bytes'] / 1e6:.1f} MB, {count}: {t['method']}; "
        "embedded tokenizer, one `<|endoftext|>` per file included. Kept after dropping "
        f"{t['dropped_tests']:,} test, {t['dropped_size_or_generated']:,} huge/tiny/generated, "
        f"{t['dropped_contaminated']:,} contaminated ({t['contamination_check']}) and "
        f"{t['dropped_duplicates']:,} duplicate files.", "",
        "| source (name==version) | licence (from its metadata) | files | MB | tokens |", "|---|---|---:|---:|---:|",
        *rows, "", "Refused (licence not permissive, or naming a restriction):", "",
        "| package | licence |", "|---|---|", *refused, ""])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/corpus-v2"))
    ap.add_argument("--wheels", type=Path, default=Path.home() / ".cache" / "mercury-lsp" / "wheels-v2")
    ap.add_argument("--eval-data", type=Path, default=EVAL_DATA)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sample", type=float, default=0.0, help="count a random fraction of the files (0: all)")
    ap.add_argument("--reuse", action="store_true", help="with --sample: the documents already in --out")
    ap.add_argument("--report-only", action="store_true", help="summarise a finished full build in --out")
    args = ap.parse_args()
    if not 0 <= args.sample < 1:
        raise SystemExit("--sample: a fraction in (0, 1)")
    wall = None
    if not args.report_only and not args.reuse:
        index = ContaminationIndex.load(args.eval_data)
        if not index.active:
            raise SystemExit(f"{args.eval_data}: no evaluation data: the contamination check is required")
        t0 = time.perf_counter()
        if args.sample:
            build_pinned(args.out, index, args.workers, load_lock(), args.wheels, builder="pypi-v2")
        else:
            build_v2(args.out, index, args.workers, cache=args.wheels)
        wall = round(time.perf_counter() - t0, 1)
    result = sample_estimate(args.out, args.sample, wall) if args.sample else summarise(args.out, wall)
    print(f"{'source':<40}{'licence':<34}{'files':>7}{'MB':>8}{'tokens':>12}")
    for s in result["sources"][:TOP]:
        print(f"{s['source']:<40}{s['license'][:32]:<34}{s['files']:>7}{s['bytes'] / 1e6:>8.1f}"
              f"{_tokens_cell(s['tokens']):>12}")
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    SOURCES_MD.write_text(sources_markdown(result))
    print(json.dumps({k: v for k, v in result["totals"].items() if k != "refused"}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
