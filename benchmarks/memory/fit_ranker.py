"""Fit the completion ranker and choose the precision gate's default, on dev repositories only.

    python -m benchmarks.memory.fit_ranker [--cases-dir DIR] [--model] [--write]
        [--ranker trees|linear] [--min-precision 0.7] [--length-weight W] [--out benchmarks/results/completion_ranker.json]

Cases: the completion benchmark's case builder run on the dev split with more cases per
repository than the benchmark's own (the same repositories; see ``docs/memory.md``)::

    python -m benchmarks.completion.cases --split dev --per-repo 300 --seed 1 \\
        --out ~/.cache/mercury-lsp-bench/memory-fit

For every case the document is the file with the rest of the cursor's line cut (as the
benchmark's client sends it), the memory is built over the repository's checkout, and the
memory's candidates (and, with ``--model``, the embedded model's draft and its scores) get the
ranker's features (``completion.rank.candidate_rows``); a candidate is right when the line it
makes equals the original line (trailing blanks aside). ``--ranker trees`` (the default, as the
daemon's) fits boosted trees (``benchmarks/memory/trees.py``, scikit-learn: the ``fit`` extra),
``linear`` the logistic model by Newton's method with an L2 penalty; both are scored leaving each
repository out (never fitted on the repository they are scored on), the other kind printed
beside at its own gate for comparison, and the gate's threshold is the lowest whose held-out precision reaches
``--min-precision``. The gate compares ``rank.gate_score`` (the probability weighed by the
candidate's length, ``--length-weight``, default ``completion.lengthWeight``'s), and the curve
reports characters saved as the benchmark counts them (target characters of the exactly right
cases over all target characters). ``--write`` saves the ranker fitted on every case to
``mercury_lsp/completion/ranker_trees.json`` (trees) or ``ranker.json`` (linear). Refuses any split but dev.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import msgspec
import numpy as np

from benchmarks.memory import trees
from mercury_lsp.completion.rank import (
    FEATURES,
    WEIGHTS_FILE,
    DocNames,
    RankerWeights,
    candidate_rows,
    gate_score,
)
from mercury_lsp.completion.trees import TREES_FILE
from mercury_lsp.config import CompletionOptions
from mercury_lsp.memory import Context, Memory, MemoryOptions
from mercury_lsp.memory.sources import is_test_path
from mercury_lsp.syntax import EXTENSIONS

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULTS = REPO_ROOT / "benchmarks" / "results"
L2 = 1.0  # the penalty on the weights (in units of one case's log-likelihood)
NEWTON_STEPS = 30
THRESHOLDS = np.round(np.arange(0.0, 1.0, 0.01), 2)


def default_cases_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mercury-lsp-bench" / "memory-fit"


def load_cases(root: Path) -> list[dict]:
    path = root / "cases.dev.jsonl"
    if not path.is_file():
        raise SystemExit(f"no dev cases at {path}: build them with the command in this module's docstring")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def cut_case(checkout: Path, case: dict) -> tuple[Path, str, int, str]:
    """(path, the cut document, the cursor, the original line)."""
    path = checkout / case["path"]
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    start = sum(len(x) + 1 for x in lines[:case["line"]])
    cursor = start + case["character"]
    line = lines[case["line"]]
    return path, text[:cursor] + text[start + len(line):], cursor, line


def collect(root: Path, cases: list[dict], model) -> list[dict]:
    """Per case: its repository, language, test flag and candidate rows (features, label)."""
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for c in cases:
        by_repo[c["repo"]].append(c)
    out = []
    for repo, repo_cases in by_repo.items():
        checkout = root / repo.replace("/", "+")
        t0 = time.monotonic()
        mem = Memory([checkout], MemoryOptions(persist=False))
        mem.start()
        mem.wait_built()
        for c in repo_cases:
            path, doc, cursor, line = cut_case(checkout, c)
            ctx = Context(path.as_uri(), doc, cursor, EXTENSIONS.get(path.suffix.lower(), ""),
                          is_test_path(c["path"]))
            cands = mem.candidates(ctx)
            draft, scores = model(path, doc, cursor, [x.text for x in cands]) if model else (None, None)
            rows = candidate_rows(cands, draft, c["prefix_line_text"], scores, DocNames.of(doc, cursor, ctx.language))
            want = line.rstrip()
            out.append({"repo": repo, "language": c["language"], "test": c["test_file"],
                        "target_chars": len(c["target"].rstrip()),
                        "rows": [(x, (c["prefix_line_text"] + text).rstrip() == want, source, text)
                                 for text, x, source in rows]})
        mem.close()
        print(f"{repo}: {len(repo_cases)} cases, {time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
    return out


def design(cases: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, case index per row)."""
    xs, ys, owner = [], [], []
    for i, c in enumerate(cases):
        for x, y, *_ in c["rows"]:
            xs.append([x[k] for k in FEATURES])
            ys.append(float(y))
            owner.append(i)
    return np.array(xs, np.float64).reshape(-1, len(FEATURES)), np.array(ys), np.array(owner, np.int64)


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2) -> np.ndarray:
    """Logistic regression (intercept first) by Newton's method with an L2 penalty."""
    a = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(a.shape[1])
    penalty = np.full(a.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(NEWTON_STEPS):
        p = 1 / (1 + np.exp(-np.clip(a @ w, -60, 60)))
        grad = a.T @ (p - y) + penalty * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return w


def best_per_case(cases: list[dict], probs: np.ndarray, owner: np.ndarray,
                  length_weight: float = 0.0) -> list[tuple[float, bool, int]]:
    """(gate score of the top candidate, whether it is right, the case's target characters) per
    case (0, False: none)."""
    out = [(0.0, False, c.get("target_chars", 0)) for c in cases]
    flat = [(y, text) for c in cases for _, y, _, text in c["rows"]]
    for r, (p, i) in enumerate(zip(probs, owner, strict=True)):
        score = gate_score(float(p), flat[r][1], length_weight)
        if score > out[i][0]:
            out[i] = (score, bool(flat[r][0]), out[i][2])
    return out


def curve(best: list[tuple[float, bool, int]]) -> list[dict]:
    n = len(best)
    chars = sum(tc for _, _, tc in best) or 1
    rows = []
    for t in THRESHOLDS:
        shown = [(ok, tc) for p, ok, tc in best if p > 0 and p >= t]
        exact = sum(ok for ok, _ in shown)
        rows.append({"threshold": float(t), "shown": len(shown) / n, "exact": exact / n,
                     "precision": exact / len(shown) if shown else None,
                     "chars_saved": sum(tc for ok, tc in shown if ok) / chars})
    return rows


LOSSES = ("saved", "right first, gated", "wrong first, shown", "wrong first, gated", "no right candidate")


def losses(cases: list[dict], best: list[tuple[float, bool, int]], threshold: float) -> dict[str, dict]:
    """Where the target characters go at the gate: saved, the right candidate ranked first but
    gated, a wrong one first (shown or gated) while a right one was among the candidates, or no
    right candidate at all; each as a share of all target characters and of the cases."""
    chars = sum(c["target_chars"] for c in cases) or 1
    out = {k: {"chars": 0.0, "cases": 0.0} for k in LOSSES}
    for c, (score, right, tc) in zip(cases, best, strict=True):
        shown = score > 0 and score >= threshold
        if not any(y for _, y, *_ in c["rows"]):
            kind = "no right candidate"
        elif right:
            kind = "saved" if shown else "right first, gated"
        else:
            kind = "wrong first, shown" if shown else "wrong first, gated"
        out[kind]["chars"] += tc / chars
        out[kind]["cases"] += 1 / len(cases)
    return out


def cross_validated(cases: list[dict], kind: str = "linear") -> np.ndarray:
    """Each case's candidate probabilities from a ranker of that kind fitted without its repository."""
    x, y, owner = design(cases)
    repos = np.array([cases[i]["repo"] for i in owner])
    probs = np.zeros(len(y))
    for repo in sorted(set(repos)):
        held = repos == repo
        if kind == "trees":
            probs[held] = trees.fit(x[~held], y[~held]).predict_proba(x[held])[:, 1]
        else:
            w = fit(x[~held], y[~held])
            probs[held] = 1 / (1 + np.exp(-np.clip(w[0] + x[held] @ w[1:], -60, 60)))
    return probs


def gate_at(rows: list[dict], min_precision: float) -> dict:
    """The curve's lowest threshold whose precision reaches ``min_precision`` (else the highest)."""
    ok = [r for r in rows if r["precision"] is not None and r["precision"] >= min_precision]
    return ok[0] if ok else rows[-1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases-dir", type=Path, default=None)
    ap.add_argument("--model", action="store_true", help="the embedded model's draft and scores as features")
    ap.add_argument("--min-precision", type=float, default=0.7)
    ap.add_argument("--length-weight", type=float, default=CompletionOptions().length_weight,
                    help="the gate's length weight (completion.lengthWeight; 0: the probability alone)")
    ap.add_argument("--ranker", choices=("trees", "linear"), default="trees",
                    help="the kind fitted, scored and written (the other is scored beside it)")
    ap.add_argument("--write", action="store_true",
                    help=f"save the ranker to {TREES_FILE.relative_to(REPO_ROOT)} (trees) or "
                         f"{WEIGHTS_FILE.relative_to(REPO_ROOT)} (linear)")
    ap.add_argument("--out", type=Path, default=RESULTS / "completion_ranker.json")
    args = ap.parse_args(argv)
    root = args.cases_dir or default_cases_dir()
    cases = load_cases(root)
    model = None
    if args.model:
        from benchmarks.memory.model_features import ModelFeatures

        model = ModelFeatures()
    data = collect(root, cases, model)
    x, y, owner = design(data)
    probs = cross_validated(data, args.ranker)
    best = best_per_case(data, probs, owner, args.length_weight)
    rows = curve(best)
    chosen = gate_at(rows, args.min_precision)
    other = "linear" if args.ranker == "trees" else "trees"
    beside = gate_at(curve(best_per_case(data, cross_validated(data, other), owner, args.length_weight)),
                     args.min_precision)
    any_right = sum(any(y for _, y, *_ in c["rows"]) for c in data) / len(data)
    all_chars = sum(c["target_chars"] for c in data) or 1
    any_right_chars = sum(c["target_chars"] for c in data if any(y for _, y, *_ in c["rows"])) / all_chars
    top1 = curve(best)[0]
    print(f"{len(data)} cases, {len(y)} candidates; right among them: {any_right:.1%} "
          f"({any_right_chars:.1%} of the target characters)")
    print(f"ranked, all shown:        exact {top1['exact']:.1%} precision {top1['precision']:.1%} "
          f"chars saved {top1['chars_saved']:.1%}")
    print(f"{args.ranker}: gate at {chosen['threshold']:.2f}, length weight {args.length_weight:g} (precision >= "
          f"{args.min_precision:.0%} held out): shown {chosen['shown']:.1%} exact {chosen['exact']:.1%} "
          f"precision {chosen['precision'] or 0:.1%} chars saved {chosen['chars_saved']:.1%}")
    print(f"{other} beside it: gate at {beside['threshold']:.2f}: shown {beside['shown']:.1%} exact "
          f"{beside['exact']:.1%} precision {beside['precision'] or 0:.1%} chars saved {beside['chars_saved']:.1%}")
    lost = losses(data, best, chosen["threshold"])
    print("target characters (cases) at the gate: " + ", ".join(
        f"{k} {v['chars']:.1%} ({v['cases']:.1%})" for k, v in lost.items()))
    groups: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(data):
        groups[c["language"]].append(i)
        groups["test files" if c["test"] else "other files"].append(i)
    for name, idx in sorted(groups.items()):
        sub = [best[i] for i in idx]
        shown = [ok for p, ok, _ in sub if p > 0 and p >= chosen["threshold"]]
        print(f"  {name:<12} {len(idx):>5} cases: exact {sum(shown) / len(idx):.1%} "
              f"precision {sum(shown) / max(1, len(shown)):.1%} (ranked, all shown: "
              f"{sum(ok for _, ok, _ in sub) / len(idx):.1%})")
    w = fit(x, y)
    weights = RankerWeights(bias=float(w[0]), **{k: float(v) for k, v in zip(FEATURES, w[1:], strict=True)})
    if args.write and args.ranker == "linear":
        WEIGHTS_FILE.write_text(json.dumps({"bias": weights.bias, **{k: getattr(weights, k) for k in FEATURES}},
                                           indent=1) + "\n")
        print(f"-> {WEIGHTS_FILE}")
    if args.write and args.ranker == "trees":
        TREES_FILE.write_bytes(msgspec.json.encode(trees.export(trees.fit(x, y), FEATURES)) + b"\n")
        print(f"-> {TREES_FILE}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = {"benchmark": "completion_ranker", "cases": len(data), "candidates": int(len(y)),
              "right_among_candidates": any_right, "right_among_candidates_chars": any_right_chars,
              "ranker": args.ranker, "ranked_all_shown": top1, "gate": chosen, f"{other}_gate": beside, "losses": lost, "length_weight": args.length_weight,
              "min_precision": args.min_precision, "model": args.model, "curve": rows,
              "weights": {"bias": weights.bias, **{k: getattr(weights, k) for k in FEATURES}}}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({"completion_ranker": {"exact": chosen["exact"], "precision": chosen["precision"],
                                            "chars_saved": chosen["chars_saved"],
                                            "threshold": chosen["threshold"], "ranked_exact": top1["exact"]}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
