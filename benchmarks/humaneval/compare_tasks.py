"""Compare two runs of benchmarks/humaneval/quality task by task (an A/B on the same tasks).

    python -m benchmarks.humaneval.compare_tasks A.tasks.jsonl B.tasks.jsonl [--out result.json]

Prints, for the tasks both runs hold (matched by run, benchmark and task id): how many
completions are identical, passes and exact matches of each side, the tasks only one side
passes, and ends with one JSON line of these counts (also written to ``--out``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.common.report import write_atomic


def load(path: Path) -> dict[tuple[str, str, str], dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {(r["run"], r["benchmark"], r["task_id"]): r for r in rows}


def compare(a: dict, b: dict) -> dict:
    keys = [k for k in a if k in b]
    only = {side: sorted(k[2] for k in keys if x[k]["passed"] and not y[k]["passed"])
            for side, x, y in (("a", a, b), ("b", b, a))}
    return {"tasks": len(keys),
            "identical": sum(a[k]["completion"] == b[k]["completion"] for k in keys),
            "a_passed": sum(a[k]["passed"] for k in keys), "b_passed": sum(b[k]["passed"] for k in keys),
            "a_exact": sum(a[k]["exact"] for k in keys), "b_exact": sum(b[k]["exact"] for k in keys),
            "only_a_passed": only["a"], "only_b_passed": only["b"]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.humaneval.compare_tasks", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", type=Path)
    p.add_argument("b", type=Path)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    try:
        result = {"a": str(args.a), "b": str(args.b), **compare(load(args.a), load(args.b))}
    except (OSError, ValueError, KeyError) as exc:
        print(f"compare_tasks: cannot read the task files: {exc!r}", file=sys.stderr)
        return 2
    print(f"{result['tasks']} common tasks, {result['identical']} identical completions; "
          f"passed {result['a_passed']} / {result['b_passed']}, exact {result['a_exact']} / {result['b_exact']}")
    if args.out is not None:
        write_atomic(args.out, json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
