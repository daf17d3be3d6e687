"""Which length policy: every candidate length decoded once per task, the policies compared offline.

    python -m benchmarks.engine.length_select [--model DIR] [--limit 120] [--lengths 1-20] [--max-tokens 48]
        [--out benchmarks/results/length_select.json] [--rows FILE.jsonl] [--analyse-only]
        [--prior-only 48,24]

Per HumanEval single-line task (``--limit`` evenly spaced) this records, with the engine's own
code (mercury_engine/length.py, the scheduler, the sandbox of benchmarks/humaneval/tasks):

* the true span length ``n*`` (``benchmarks.humaneval.quality.oracle_tokens``);
* the **length prior**: one forward of the all-mask ``--max-tokens`` canvas and the model's
  stop (padding/EOS) probability at every span offset (training pads every middle, so this is
  the model's belief that the middle has ended there);
* a fixed-length fill for **every** candidate length in ``--lengths`` (length search's
  candidates), each with its mean log-confidence, its join score (mercury_engine/length.py), its text,
  exact match, first-line edit similarity and — executed in the sandbox — pass/fail.

Rows go to ``--rows`` (JSONL, one per task, appended as they finish, so a long run can be
analysed while it runs: ``--analyse-only``). Then every policy — a rule that picks one
candidate from these features — is scored on the same rows: pass@1, exact match, mean edit
similarity, how often it picks ``n*`` exactly / within one token, and how many candidates it
decodes (its cost). A policy scored here decodes the same fills the engine would, so its
figures are what ``benchmarks.humaneval.quality --decode length=...`` gets on these tasks. Prints a table,
writes ``--out`` and ends with one JSON line.

``--prior-only 48,24`` records only ``n*`` and the stop curve at those span budgets (one forward
per task and budget, no decoding) and scores the prior's rule at several levels, absolute or a
share of the curve's top: exact length, within 1 and 2 tokens, mean signed and absolute error.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common.report import git_state, write_atomic
from benchmarks.engine.context_reuse import edit_similarity
from benchmarks.humaneval import tasks as humaneval

SEARCH_LENGTHS = (3, 5, 7, 9, 12, 16, 22)  # mercury_engine.length.DEFAULT_LENGTHS before this experiment


def parse_lengths(spec: str) -> list[int]:
    out: set[int] = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    if not out or min(out) <= 0:
        raise SystemExit(f"length_select: --lengths must name positive integers, got {spec!r}")
    return sorted(out)


# ---------------------------------------------------------------------------- recording
def stop_curve(engine, canvas) -> list[float]:
    """P(stop token) at every span offset of ``canvas`` with all its span masked (one forward)."""
    import torch

    from mercury_engine.decode import shift_logits

    tok, model = engine.tokenizer, engine.model
    ids = torch.tensor(canvas.ids(tok.mask_id), device=engine.device)[None]
    with torch.inference_mode():
        logits = shift_logits(model(ids), model.config.logits_shift)[0]  # [L, V]
        span = logits[canvas.span_start:canvas.span_start + canvas.span_len].float()
        span[:, tok.mask_id] = float("-inf")
        probs = torch.softmax(span, dim=-1)[:, list(tok.stop_ids)].sum(-1)  # [span]
    return [round(float(p), 5) for p in probs]


def record(engine, prob, lengths: list[int], max_tokens: int, workers: int) -> dict:
    from benchmarks.humaneval.quality import oracle_tokens
    from mercury_engine import length as L
    from mercury_engine.canvas import build_canvas
    from mercury_engine.options import InfillOptions

    opts = InfillOptions()
    canvas = build_canvas(engine.tokenizer, prob.prompt, prob.suffix, max_tokens, engine.context_tokens,
                          opts.heal, opts.heal_tail)
    t0 = time.perf_counter()
    curve = stop_curve(engine, canvas)
    prior_ms = (time.perf_counter() - t0) * 1000
    cands = L.plan(canvas, InfillOptions(length="search", length_candidates=tuple(lengths)))
    sub = L.candidate_options(opts)
    t0 = time.perf_counter()
    futures = [engine.scheduler.submit(c, sub) for c in cands]
    results = [f.result() for f in futures]
    decode_ms = (time.perf_counter() - t0) * 1000
    join = L.join_scores(engine.model, engine.tokenizer, cands, results)
    texts = [r.text for r in results]
    distinct = sorted(set(texts))
    outcomes = humaneval.run_tasks([prob] * len(distinct), distinct, workers=workers)
    passed = {t: o.passed for t, o in zip(distinct, outcomes, strict=True)}
    extra = 1 if canvas.heal_bytes else 0
    return {
        "task_id": prob.task_id, "oracle": oracle_tokens(engine, prob), "heal": extra,
        "tail": bool(canvas.tail_bytes), "stop_curve": curve, "prior_ms": round(prior_ms, 2),
        "decode_ms": round(decode_ms, 2),
        "cands": [{"n": c.span_len - extra, "text": r.text, "tokens": len(r.token_ids),
                   "conf": [round(x, 5) for x in r.confidences], "join": round(j, 5),
                   "passed": passed[r.text], "exact": humaneval.exact_match(r.text, prob.canonical_solution),
                   "sim": round(edit_similarity(r.text, prob.canonical_solution), 4)}
                  for c, r, j in zip(cands, results, join, strict=True)],
    }


def record_prior(engine, prob, budgets: list[int]) -> dict:
    """The length prior alone (no decoding): the true length and the stop curve per budget."""
    from benchmarks.humaneval.quality import oracle_tokens
    from mercury_engine.canvas import build_canvas

    row = {"task_id": prob.task_id, "oracle": oracle_tokens(engine, prob), "curves": {}}
    for budget in budgets:
        canvas = build_canvas(engine.tokenizer, prob.prompt, prob.suffix, budget, engine.context_tokens)
        row["heal"] = 1 if canvas.heal_bytes else 0
        row["curves"][str(budget)] = stop_curve(engine, canvas)
    return row


PRIOR_LEVELS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6)


def analyse_prior(rows: list[dict]) -> dict[str, dict]:
    """Per budget and level (absolute, or relative to the curve's top): how often the prior's
    length is n* exactly, within 1 and 2 tokens, its mean signed error (positive: too long) and
    its mean absolute error."""
    out: dict[str, dict] = {}
    for budget, level, relative in itertools.product(rows[0]["curves"], PRIOR_LEVELS, (False, True)):
        errs = [prior_length({"stop_curve": r["curves"][budget], "heal": r["heal"]}, level, relative)
                - r["oracle"] for r in rows]
        n = len(errs)
        out[f"budget{budget}_{'rel' if relative else 'abs'}{level:g}"] = {
            "hit": round(sum(e == 0 for e in errs) / n, 4), "within1": round(sum(abs(e) <= 1 for e in errs) / n, 4),
            "within2": round(sum(abs(e) <= 2 for e in errs) / n, 4), "bias": round(sum(errs) / n, 3),
            "mae": round(sum(abs(e) for e in errs) / n, 3)}
    return out


# ---------------------------------------------------------------------------- policies
def mean_log(conf: list[float]) -> float:
    return sum(math.log(max(c, 1e-9)) for c in conf) / len(conf) if conf else -math.inf


def prior_length(row: dict, level: float = 0.3, relative: bool = True) -> int:
    """mercury_engine.length.prior_length on a recorded stop curve: the first content offset whose stop
    probability reaches ``level`` (times the curve's top when ``relative``), at least 1."""
    content = row["stop_curve"][row["heal"]:]
    bar = level * max(content) if relative else level
    return max(1, next((i for i, p in enumerate(content) if p >= bar), len(content)))


def prior_logp(row: dict, n: int) -> float:
    """log P(the middle ends after ``n`` tokens) from the stop curve read as a CDF."""
    cdf = [0.0]
    for p in row["stop_curve"][row["heal"]:]:
        cdf.append(max(cdf[-1], p))
    hi = cdf[min(n, len(cdf) - 1)]
    lo = cdf[min(n - 1, len(cdf) - 1)] if n >= 1 else 0.0
    return math.log(max(hi - lo, 1e-4))


Policy = Callable[[dict], tuple[list[dict], dict]]  # row -> (candidates decoded, the chosen one)


def among(row: dict, lengths) -> list[dict]:
    """The decoded candidates of ``lengths`` (a length not decoded: the nearest one), shortest first."""
    picked = {nearest(row, n, 1)[0]["n"] for n in lengths}
    return [c for c in row["cands"] if c["n"] in picked]


def nearest(row: dict, n: int, k: int) -> list[dict]:
    """The ``k`` decoded candidates closest in length to ``n``."""
    return sorted(row["cands"], key=lambda c: (abs(c["n"] - n), c["n"]))[:k]


def best(cands: list[dict], score: Callable[[dict], float]) -> dict:
    return max(enumerate(cands), key=lambda ic: (score(ic[1]), -ic[0]))[1]


def scorer(join_w: float = 1.0, prior_w: float = 0.0, row: dict | None = None) -> Callable[[dict], float]:
    def score(c: dict) -> float:
        s = mean_log(c["conf"]) + join_w * c["join"]
        if prior_w and row is not None:
            s += prior_w * prior_logp(row, c["n"])
        return s
    return score


def policies(lengths: list[int]) -> dict[str, Policy]:
    out: dict[str, Policy] = {}

    def oracle(r):
        hit = [c for c in r["cands"] if c["n"] == r["oracle"]]
        return hit, (hit[0] if hit else nearest(r, r["oracle"], 1)[0])
    out["oracle"] = oracle
    for name, lens in (("search7", SEARCH_LENGTHS), ("search_all", lengths), ("search4", (4, 7, 10, 14)),
                       ("search3", (4, 8, 14))):
        for jw in (0.0, 0.5, 1.0, 2.0):
            def pol(r, lens=lens, jw=jw):
                cs = among(r, lens)
                return cs, best(cs, scorer(jw))
            out[f"{name}_join{jw:g}"] = pol
    for level in (0.3, 0.5, 0.7):
        def pri(r, level=level):
            c = nearest(r, prior_length(r, level), 1)
            return c, c[0]
        out[f"prior{level:g}"] = pri
    for k in (2, 3, 5):
        for jw in (0.0, 1.0):
            for pw in (0.0, 0.5, 1.0):
                def mix(r, k=k, jw=jw, pw=pw):
                    cs = nearest(r, prior_length(r), k)
                    return cs, best(cs, scorer(jw, pw, r))
                out[f"prior_k{k}_join{jw:g}_pw{pw:g}"] = mix
    for pw in (0.5, 1.0, 2.0):
        def allp(r, pw=pw):
            cs = among(r, SEARCH_LENGTHS)
            return cs, best(cs, scorer(1.0, pw, r))
        out[f"search7_join1_pw{pw:g}"] = allp
    return out


def analyse(rows: list[dict], lengths: list[int]) -> dict[str, dict]:
    table = {}
    for name, pol in policies(lengths).items():
        n = len(rows)
        passed = exact = hit = near = decoded = 0
        sim = 0.0
        for r in rows:
            cs, c = pol(r)
            passed += c["passed"]
            exact += c["exact"]
            sim += c["sim"]
            hit += c["n"] == r["oracle"]
            near += abs(c["n"] - r["oracle"]) <= 1
            decoded += len(cs)
        table[name] = {"tasks": n, "passed": passed, "pass@1": round(passed / n, 4), "exact": exact,
                       "edit_sim": round(sim / n, 4), "length_hit": round(hit / n, 4),
                       "length_within1": round(near / n, 4), "candidates": round(decoded / n, 2)}
    any_pass = sum(any(c["passed"] for c in r["cands"]) for r in rows)
    table["_any_candidate"] = {"tasks": len(rows), "passed": any_pass}
    return table


def format_rows(table: dict[str, dict]) -> str:
    head = f"{'policy':<30}{'pass':>6}{'exact':>7}{'sim':>7}{'len=':>7}{'len±1':>7}{'cands':>7}"
    lines = [head, "-" * len(head)]
    for name, t in sorted(table.items(), key=lambda kv: (-kv[1].get("pass@1", 0), -kv[1].get("edit_sim", 0))):
        if name.startswith("_"):
            continue
        lines.append(f"{name:<30}{t['passed']:>6}{t['exact']:>7}{t['edit_sim']:>7.3f}{t['length_hit']:>7.3f}"
                     f"{t['length_within1']:>7.3f}{t['candidates']:>7.1f}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- main
@dataclass
class Args:
    limit: int
    lengths: list[int]
    max_tokens: int
    out: Path
    rows: Path
    analyse_only: bool
    workers: int


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.engine.length_select", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=None, help="model directory (default: the embedded model)")
    p.add_argument("--limit", type=int, default=120, help="HumanEval single-line tasks, evenly spaced")
    p.add_argument("--lengths", default="1-20", help="candidate lengths decoded per task (e.g. 1-20 or 3,5,8)")
    p.add_argument("--max-tokens", type=int, default=48, help="span budget (the prior's all-mask canvas)")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/length_select.json"))
    p.add_argument("--rows", type=Path, default=None, help="per-task JSONL (default: <out stem>.rows.jsonl)")
    p.add_argument("--analyse-only", action="store_true", help="score the policies on the rows already recorded")
    p.add_argument("--workers", type=int, default=1, help="sandbox processes")
    p.add_argument("--prior-only", default=None, metavar="B1,B2",
                   help="record only the length prior at these span budgets (no decoding) and score its levels")
    ns = p.parse_args(argv)
    if ns.prior_only:
        return prior_only(ns, [int(b) for b in ns.prior_only.split(",")], argv)
    args = Args(ns.limit, parse_lengths(ns.lengths), ns.max_tokens, ns.out,
                ns.rows or ns.out.with_name(ns.out.stem + ".rows.jsonl"), ns.analyse_only, ns.workers)
    done = [json.loads(line) for line in args.rows.read_text().splitlines()] if args.rows.exists() else []
    if not args.analyse_only:
        reason = humaneval.data_unavailable_reason()
        if reason:
            print(f"length_select: {reason}", file=sys.stderr)
            return 2
        from mercury_engine import Engine

        engine = Engine.load(ns.model)
        have = {r["task_id"] for r in done}
        probs = humaneval.take_subset(humaneval.load_benchmark("single-line"), args.limit)
        args.rows.parent.mkdir(parents=True, exist_ok=True)
        with args.rows.open("a") as fh:
            for i, prob in enumerate(probs):
                if prob.task_id in have:
                    continue
                row = record(engine, prob, args.lengths, args.max_tokens, args.workers)
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                done.append(row)
                print(f"[length_select] {i + 1}/{len(probs)} {prob.task_id} n*={row['oracle']} "
                      f"decode {row['decode_ms']:.0f} ms", file=sys.stderr, flush=True)
        engine.close()
    if not done:
        print("length_select: no rows recorded", file=sys.stderr)
        return 2
    table = analyse(done, args.lengths)
    print(format_rows(table))
    result = {"benchmark": "length_select", "git": git_state(), "command": ["python", "-m", "benchmarks.engine.length_select",
                                                                             *(argv or sys.argv[1:])],
              "tasks": len(done), "lengths": args.lengths, "max_tokens": args.max_tokens,
              "rows": args.rows.name, "policies": table}
    write_atomic(args.out, json.dumps(result, indent=2) + "\n")
    keys = ("oracle", "search7_join1", "prior0.3")
    print(json.dumps({k: table[k]["pass@1"] for k in keys if k in table}))
    return 0


def prior_only(ns: argparse.Namespace, budgets: list[int], argv: list[str] | None) -> int:
    from mercury_engine import Engine

    rows_path = ns.rows or ns.out.with_name(ns.out.stem + ".rows.jsonl")
    if ns.analyse_only:
        rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    else:
        engine = Engine.load(ns.model)
        probs = humaneval.take_subset(humaneval.load_benchmark("single-line"), ns.limit)
        rows = []
        for i, prob in enumerate(probs):
            rows.append(record_prior(engine, prob, budgets))
            if i % 100 == 0:
                print(f"[length_select] prior {i + 1}/{len(probs)}", file=sys.stderr, flush=True)
        write_atomic(rows_path, "".join(json.dumps(r) + "\n" for r in rows))
    table = analyse_prior(rows)
    for name, t in table.items():
        print(f"{name:<24}" + "".join(f"{k}={v:<8}" for k, v in t.items()))
    write_atomic(ns.out, json.dumps({"benchmark": "length_select --prior-only", "git": git_state(),
                                     "command": ["python", "-m", "benchmarks.engine.length_select", *(argv or sys.argv[1:])],
                                     "tasks": len(rows), "budgets": budgets, "levels": table}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
