"""How often a span's boundary falls inside a token of the joint tokenization.

    python -m benchmarks.engine.token_boundary [--out benchmarks/results/token_boundary.json]

A byte-level BPE token can merge a line break with the next line's indentation; then the end
of a line span (the text-level boundary between span and suffix) lies inside that token. Counted
on the held-out line spans of ``benchmarks/train/heldout`` and on all HumanEval single-line tasks,
with the embedded tokenizer. Prints one JSON line per set and writes them to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks import REPO
from benchmarks.common.report import write_atomic
from benchmarks.humaneval.tasks import load_benchmark
from benchmarks.train.heldout import heldout_files, pick_spans

TOKENIZER = REPO / "mercury_engine" / "models" / "mercury-coder-tiny" / "tokenizer.json"


def straddling(tok, text: str, b: int) -> str | None:
    """The token of ``text``'s joint tokenization that contains offset ``b`` strictly inside."""
    enc = tok.encode(text, add_special_tokens=False)
    for tid, (s, e) in zip(enc.ids, enc.offsets, strict=True):
        if s < b < e:
            return tok.decode([tid], skip_special_tokens=False)
    return None


def measure(tok, items: list[tuple[str, int, int]], name: str) -> dict:
    end = start = nl_end = 0
    for text, a, b in items:
        x = straddling(tok, text, b)
        end += x is not None
        nl_end += x is not None and "\n" in x
        start += straddling(tok, text, a) is not None
    n = max(1, len(items))
    return {"set": name, "spans": len(items), "end_inside_token": round(end / n, 4),
            "end_inside_newline_token": round(nl_end / n, 4), "start_inside_token": round(start / n, 4)}


def main(argv: list[str] | None = None) -> int:
    from tokenizers import Tokenizer

    p = argparse.ArgumentParser(prog="python -m benchmarks.engine.token_boundary", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/token_boundary.json"))
    args = p.parse_args(argv)
    tok = Tokenizer.from_file(str(TOKENIZER))
    spans = pick_spans(heldout_files(), 300, "line")
    rows = [measure(tok, [(s["text"], s["start"], s["end"]) for s in spans], "heldout stdlib lines")]
    probs = load_benchmark("single-line")
    rows.append(measure(tok, [(q.prompt + q.canonical_solution + q.suffix, len(q.prompt),
                               len(q.prompt) + len(q.canonical_solution)) for q in probs], "HumanEval single-line"))
    for r in rows:
        print(json.dumps(r))
    write_atomic(args.out, json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
