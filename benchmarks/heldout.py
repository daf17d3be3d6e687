"""In-distribution quality: masked-span exact match on held-out standard-library files.

    python -m benchmarks.heldout [--model DIR] [--spans 300] [--kinds line,rest_of_line]
        [--decode KEY=VALUE ...] [--out benchmarks/results/heldout.json]

The training corpus holds out every file whose ``sha256(path)`` falls in the low 3%
(engine/train/corpus.py); this benchmark rebuilds that list from the running interpreter's
standard library (no cache needed), picks spans deterministically — a whole line, or the rest
of a line from a column inside it — masks each one and asks the engine to fill it. Exact
match compares the filled text with the original span (trailing whitespace ignored). Prints a
table and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import sysconfig
import time
from pathlib import Path

from benchmarks.quality import parse_decode, write_atomic
from engine.train.corpus import heldout, is_test_path, looks_generated

KINDS = ("line", "rest_of_line")


def heldout_files(frac: float = 0.03) -> list[tuple[str, str]]:
    root = Path(sysconfig.get_paths()["stdlib"])
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = "stdlib/" + path.relative_to(root).as_posix()
        if "site-packages/" in rel or is_test_path(rel) or not heldout(rel, frac):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if 64 <= len(text) <= 200_000 and not looks_generated(text):
            out.append((rel, text))
    return out


def pick_spans(files: list[tuple[str, str]], n: int, kind: str) -> list[dict]:
    """Deterministic spans: lines with real code (>= 8 non-blank characters, not comments)."""
    spans = []
    for rel, text in files:
        offset = 0
        for i, line in enumerate(text.splitlines(keepends=True)):
            body = line.strip()
            h = int(hashlib.sha256(f"{rel}:{i}:{kind}".encode()).hexdigest()[:8], 16)
            if len(body) >= 8 and not body.startswith(("#", '"', "'")) and h % 23 == 0:
                if kind == "line":
                    a = offset
                else:
                    indent = len(line) - len(line.lstrip())
                    a = offset + indent + (h // 23) % max(1, len(line.rstrip()) - indent)
                spans.append({"file": rel, "start": a, "end": offset + len(line), "text": text})
            offset += len(line)
    spans.sort(key=lambda s: hashlib.sha256(f"{s['file']}:{s['start']}".encode()).hexdigest())
    return spans[:n]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.heldout", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=None)
    p.add_argument("--spans", type=int, default=300, help="spans per kind")
    p.add_argument("--kinds", default=",".join(KINDS))
    p.add_argument("--max-tokens", type=int, default=48)
    p.add_argument("--decode", nargs="*", default=[], metavar="KEY=VALUE")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/heldout.json"))
    args = p.parse_args(argv)
    from engine import Engine

    decode = parse_decode(args.decode)
    engine = Engine.load(args.model)
    files = heldout_files()
    results = {}
    for kind in [k for k in args.kinds.split(",") if k]:
        if kind not in KINDS:
            print(f"heldout: unknown kind {kind!r} (choose from {', '.join(KINDS)})", file=sys.stderr)
            return 2
        spans = pick_spans(files, args.spans, kind)
        exact = 0
        t0 = time.perf_counter()
        for s in spans:
            text = s["text"]
            r = engine.infill(text[: s["start"]], text[s["end"]:], args.max_tokens, **decode)
            want = text[s["start"]: s["end"]]
            exact += int(r.text.rstrip() == want.rstrip())
        secs = time.perf_counter() - t0
        results[kind] = {"spans": len(spans), "exact_match": exact / max(1, len(spans)),
                         "seconds": round(secs, 2)}
    engine.close()
    print(f"{'kind':<15}{'spans':>7}{'exact':>9}")
    for kind, r in results.items():
        print(f"{kind:<15}{r['spans']:>7}{r['exact_match'] * 100:>8.1f}%")
    out = {"model": str(engine.path), "files": len(files), "decode": decode, "results": results,
           "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(out, indent=2) + "\n")
    print(json.dumps({f"heldout_{k}_exact": round(v["exact_match"], 4) for k, v in results.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
