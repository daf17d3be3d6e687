"""The length-policy table: several ``benchmarks.humaneval.quality`` runs side by side, with a second signal.

    python -m benchmarks.engine.length_table --row NAME=RESULT.json [--row ...] [--ceiling NAME]
        [--out benchmarks/results/length_policy.json]

Each ``--row`` is a ``benchmarks.humaneval.quality`` summary JSON of one single-line run (its per-task
``<stem>.tasks.jsonl`` next to it, as the harness writes it). Per row: tasks passed and pass@1,
exact match, the share of the ``--ceiling`` row's pass@1 (the oracle length), and — from the
per-task lines, finer than a handful of passes — the mean first-line edit similarity to the
canonical line, the blank completions, the tasks passed that the ceiling row also passed, the
passes and edit similarity of each half of the tasks (even and odd positions in the benchmark
file: a rule tuned on one half is checked on the other), and the median per-task generation time (separate runs on a shared machine: not an A/B; see
``benchmarks.engine.length_cost`` for that). Writes ``--out`` (JSON) and ``<stem>.md`` (the table), and
ends with one JSON line.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

from benchmarks.common.report import git_state, write_atomic
from benchmarks.engine.context_reuse import edit_similarity
from benchmarks.engine.speed import percentile
from benchmarks.humaneval import tasks as humaneval


def load_row(path: Path) -> tuple[dict, list[dict]]:
    summary = json.loads(path.read_text())
    tasks_path = path.with_name(path.stem + ".tasks.jsonl")
    if not tasks_path.exists():
        raise SystemExit(f"length_table: {tasks_path} is missing (re-run the quality command that wrote {path})")
    tasks = [json.loads(line) for line in tasks_path.read_text().splitlines()]
    return summary, [t for t in tasks if t["run"] == "main" and t["benchmark"] == "single-line"]


def canonical_lines() -> dict[str, str]:
    path = humaneval.resolve_data_dir() / humaneval.BENCHMARK_FILES["single-line"]
    with gzip.open(path, "rt") as fh:
        return {p["task_id"]: p["canonical_solution"] for p in map(json.loads, fh)}


def halves_cell(halves: list[dict]) -> str:
    def share(h: dict) -> str:
        return "-" if h["share_of_ceiling"] is None else f"{h['share_of_ceiling'] * 100:.0f} %"
    return " / ".join(f"{h['passed']}, {share(h)}, {h['edit_sim']:.3f}" for h in halves)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.engine.length_table", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--row", action="append", required=True, metavar="NAME=RESULT.json")
    p.add_argument("--ceiling", default="oracle", help="the row the others are a share of (default: oracle)")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/length_policy.json"))
    args = p.parse_args(argv)
    canon = canonical_lines()
    rows: dict[str, dict] = {}
    passed_ids: dict[str, set[str]] = {}
    for spec in args.row:
        name, _, file = spec.partition("=")
        summary, tasks = load_row(Path(file))
        bench = summary["benchmarks"]["single-line"]
        ms = [t["ms"] for t in tasks if "ms" in t]
        passed_ids[name] = {t["task_id"] for t in tasks if t["passed"]}
        halves = [tasks[h::2] for h in range(2)]  # even and odd positions
        rows[name] = {
            "file": Path(file).name, "command": summary["command"], "git": summary["git"],
            "decode": summary["decode"], "tasks": bench["tasks"], "passed": bench["passed"],
            "pass@1": bench["pass@1"], "exact": round(bench["exact_match"] * bench["tasks"]),
            "exact_match": bench["exact_match"],
            "edit_sim": round(sum(edit_similarity(t["completion"], canon[t["task_id"]]) for t in tasks) / len(tasks), 4),
            "blank": sum(not t["completion"].strip() for t in tasks),
            "p50_ms": round(percentile(ms, 50), 1) if ms else None,
            "halves": [{"tasks": len(h), "passed": sum(t["passed"] for t in h),
                        "edit_sim": round(sum(edit_similarity(t["completion"], canon[t["task_id"]]) for t in h)
                                          / max(1, len(h)), 4)} for h in halves],
        }
    if args.ceiling not in rows:
        raise SystemExit(f"length_table: --ceiling {args.ceiling!r} is not a --row name")
    top = rows[args.ceiling]
    for name, r in rows.items():
        r["share_of_ceiling"] = round(r["pass@1"] / top["pass@1"], 4) if top["pass@1"] else None
        r["passed_also_by_ceiling"] = len(passed_ids[name] & passed_ids[args.ceiling])
        for h, ceiling_half in zip(r["halves"], top["halves"], strict=True):
            h["share_of_ceiling"] = round(h["passed"] / ceiling_half["passed"], 4) if ceiling_half["passed"] else None
    head = (f"| length | tasks | pass@1 | exact | share of {args.ceiling} pass@1 | passed also by {args.ceiling} "
            f"| first-line edit similarity | blank | halves (even / odd): passed, share, edit similarity "
            f"| p50 ms/task (own run) | file |")
    lines = [head, "|" + "---|" * 11]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['tasks']} | {r['pass@1'] * 100:.2f} % ({r['passed']}) | "
                     f"{r['exact_match'] * 100:.2f} % ({r['exact']}) | {r['share_of_ceiling'] * 100:.0f} % | "
                     f"{r['passed_also_by_ceiling']} | {r['edit_sim']:.3f} | {r['blank']} | {halves_cell(r['halves'])} | "
                     f"{r['p50_ms']} | "
                     f"`{r['file']}` |")
    table = "\n".join(lines)
    print(table)
    out = {"benchmark": "length_table", "git": git_state(),
           "command": ["python", "-m", "benchmarks.engine.length_table", *(argv or sys.argv[1:])],
           "ceiling": args.ceiling, "rows": rows}
    write_atomic(args.out, json.dumps(out, indent=2) + "\n")
    write_atomic(args.out.with_suffix(".md"), table + "\n")
    print(json.dumps({f"{n}_pass@1": r["pass@1"] for n, r in rows.items()}
                     | {f"{n}_share_of_{args.ceiling}": r["share_of_ceiling"] for n, r in rows.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
