"""Next-edit benchmark: after a first edit, are the remaining required edits predicted?

    python -m benchmarks.next_edit.synthetic [--model DIR] [--cases N] [--kinds rename_parameter,...]
        [--out benchmarks/results/next_edit.json] [--device auto] [--dtype auto] [--threads N]

Cases come from Python standard-library files of this interpreter
(``sysconfig.get_paths()["stdlib"]``): first the files the training corpus held out
(``mercury_train.corpus.heldout("stdlib/<relpath>", 0.03)``), then, only if a kind still needs
cases, the other files in sha256(path) order. The ground truth comes from Python's ``ast``
(independent of the tree-sitter analysis under test). Kinds:

* ``rename_parameter`` / ``rename_local`` — a function's parameter / local variable renamed at its
  definition (``x`` -> ``new_x``); required: every other use of it in the function. Names that
  nested scopes (functions, lambdas, classes, comprehensions) mention are skipped.
* ``rename_attribute`` — ``self.a = ...`` renamed at its first assignment; required: every
  ``.a`` in the file (attribute names used in only one class, never as a plain name).
* ``rename_method`` — ``def m(self, ...)`` renamed; required: every ``.m`` in the file.
* ``add_parameter`` — ``extra_flag`` appended to a module-level function's parameters and
  ``None`` to its first call; required: every other call gets ``None`` appended.

Per kind: location recall and precision (a predicted range overlapping a required one counts;
micro-averaged over locations), exact match (the predicted text at a required location is the
required text), "model refill" exact (the model's own refill was the required text: no user text
scored), the share of edits whose text was the user's, scored ("scored"), and latency per case.
Prints a table, writes ``--out``, and ends with one JSON line of headline figures.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import RESULTS as RESULTS_DIR
from benchmarks.next_edit.synthetic_cases import KINDS, RENAMES, Case, build_cases
from mercury_lsp.documents import PositionEncoding
from mercury_lsp.next_edit import DocState, EngineEdits, NextEditQuery, apply_edits, predict
from mercury_lsp.syntax import Grammars

DEFAULT_OUT = RESULTS_DIR / "next_edit.json"
URI = "file:///bench/case.py"
__all__ = ["KINDS", "Case", "build_cases", "main"]


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None

@dataclass
class KindStats:
    cases: int = 0
    required: int = 0
    found: int = 0
    predicted: int = 0
    correct_locations: int = 0
    exact: int = 0
    model_exact: int = 0
    scored: int = 0
    syntax_only: int = 0
    latencies: list[float] = field(default_factory=list)

    def summary(self) -> dict:
        lat = sorted(self.latencies)

        def pct(q: float) -> float | None:
            return round(lat[min(len(lat) - 1, int(len(lat) * q))], 1) if lat else None

        return {
            "cases": self.cases, "required_locations": self.required, "predicted_edits": self.predicted,
            "location_recall": _ratio(self.found, self.required),
            "location_precision": _ratio(self.correct_locations, self.predicted),
            "exact_match": _ratio(self.exact, self.required),
            "model_refill_exact": _ratio(self.model_exact, self.required),
            "scored_share": _ratio(self.scored, self.predicted),
            "unchecked_share": _ratio(self.syntax_only, self.predicted),
            "latency_ms_p50": pct(0.5), "latency_ms_p95": pct(0.95),
        }




# ---------------------------------------------------------------------------- scoring
def score_case(case: Case, preds, stats: KindStats) -> dict:
    stats.cases += 1
    stats.required += len(case.expected)
    stats.predicted += len(preds)
    stats.scored += sum(1 for p in preds if p.source == "scored")
    stats.syntax_only += sum(1 for p in preds if p.source == "syntax")
    found = exact = model_exact = 0
    for s, e, new in case.expected:
        hits = [p for p in preds if p.start < e and s < p.end or (p.start == p.end == s)]
        if not hits:
            continue
        found += 1
        best = hits[0]
        region = apply_edits(case.after[s:e], [(best.start - s, best.end - s, best.new_text)]) \
            if s <= best.start and best.end <= e else None
        if region == new:
            exact += 1
        if best.model_text.strip() == new.strip() or (
                s <= best.start and best.end <= e and
                apply_edits(case.after[s:e], [(best.start - s, best.end - s, best.model_text)]) == new):
            model_exact += 1
    correct = sum(1 for p in preds if any(p.start < e and s < p.end for s, e, _ in case.expected))
    stats.found += found
    stats.exact += exact
    stats.model_exact += model_exact
    stats.correct_locations += correct
    return {"kind": case.kind, "path": case.path, "heldout": case.heldout, "required": len(case.expected),
            "predicted": len(preds), "found": found, "correct": correct, "exact": exact,
            "model_exact": model_exact}


def format_table(summary: dict[str, dict]) -> str:
    cols = ["cases", "location_recall", "location_precision", "exact_match", "model_refill_exact",
            "scored_share", "unchecked_share", "latency_ms_p50", "latency_ms_p95"]
    head = ["kind", "cases", "recall", "precision", "exact", "model exact", "scored", "unchecked", "p50 ms",
            "p95 ms"]
    rows = [head]
    for kind, s in summary.items():
        rows.append([kind] + ["-" if s[c] is None else (f"{s[c]:.1%}" if isinstance(s[c], float) and c not in (
            "latency_ms_p50", "latency_ms_p95") else str(s[c])) for c in cols])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.next_edit.synthetic", description=__doc__.split("\n")[0])
    p.add_argument("--model", default=None, help="model directory or hub id (default: the embedded model)")
    p.add_argument("--cases", type=int, default=250, help="total cases, split evenly over the kinds")
    p.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated subset of {','.join(KINDS)}")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--device", default="auto")
    p.add_argument("--dtype", default="auto")
    p.add_argument("--threads", type=int, default=None)
    return p


def run(args: argparse.Namespace) -> int:
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        print(f"error: unknown kind(s) {', '.join(bad) or '(none)'}; choose from {', '.join(KINDS)}", file=sys.stderr)
        return 2
    if args.cases < len(kinds):
        print(f"error: --cases must be at least {len(kinds)}", file=sys.stderr)
        return 2
    from mercury_engine import Engine

    t0 = time.perf_counter()
    cases = build_cases(kinds, -(-args.cases // len(kinds)))
    print(f"[next_edit] {len(cases)} cases ({sum(c.heldout for c in cases)} from held-out files) "
          f"in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    engine = Engine.load(args.model, device=args.device, dtype=args.dtype, threads=args.threads)
    model = EngineEdits(engine)
    grammars = Grammars()
    # one untimed warm-up
    warm = cases[0]
    predict(NextEditQuery((DocState(URI, warm.after, "python", None, (warm.before,), 1.0),), URI, warm.cursor),
            model, grammars)
    stats = {k: KindStats() for k in kinds}
    per_case = []
    for i, case in enumerate(cases):
        query = NextEditQuery((DocState(URI, case.after, "python", None, (case.before,), 1.0),), URI,
                              case.cursor, PositionEncoding.UTF16)
        t = time.perf_counter()
        outcome = predict(query, model, grammars)
        stats[case.kind].latencies.append((time.perf_counter() - t) * 1000)
        per_case.append(score_case(case, outcome.predictions, stats[case.kind]))
        if (i + 1) % 25 == 0:
            print(f"[next_edit] {i + 1}/{len(cases)}", file=sys.stderr, flush=True)
    summary = {k: stats[k].summary() for k in kinds}
    renames = KindStats()
    for k in kinds:
        if k in RENAMES:
            s = stats[k]
            for f in ("cases", "required", "found", "predicted", "correct_locations", "exact", "model_exact",
                      "scored", "syntax_only"):
                setattr(renames, f, getattr(renames, f) + getattr(s, f))
            renames.latencies += s.latencies
    if renames.cases:
        summary["all_renames"] = renames.summary()
    result = {
        "benchmark": "next_edit", "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "model": str(engine.path or args.model or "embedded"), "device": str(engine.device),
        "dtype": str(engine.dtype).removeprefix("torch."), "python": platform.python_version(),
        "cases": len(cases), "heldout_cases": sum(c.heldout for c in cases), "kinds": summary,
        "per_case": per_case,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(format_table(summary))
    print(f"\nwrote {args.out}")
    head = {"model": result["model"], "cases": len(cases)}
    for k, s in summary.items():
        head[f"{k}_recall"] = s["location_recall"]
        head[f"{k}_precision"] = s["location_precision"]
        head[f"{k}_exact"] = s["exact_match"]
        head[f"{k}_model_exact"] = s["model_refill_exact"]
    print(json.dumps(head))
    return 0


def main(argv: list[str] | None = None) -> int:
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
