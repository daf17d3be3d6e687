"""In-distribution quality: masked-span exact match on held-out standard-library files.

    python -m benchmarks.train.heldout [--model DIR] [--spans 300] [--kinds line,rest_of_line]
        [--decode KEY=VALUE ...] [--ce] [--out benchmarks/results/heldout.json]

The training corpus holds out every file whose ``sha256(path)`` falls in the low 3%
(mercury_train/corpus.py); this benchmark rebuilds that list from the running interpreter's
standard library (no cache needed), picks spans deterministically — a whole line, or the rest
of a line from a column inside it — masks each one and asks the engine to fill it. Exact
match compares the filled text with the original span (trailing whitespace ignored). Prints a
table and ends with one JSON line.

``--ce`` adds a likelihood probe on the same spans, the quantity a left-to-right decode of the
span rests on: with the span's first k tokens written and the rest (``--max-tokens`` positions
in all, as the sampler's canvas) still masked, the cross-entropy of token k — averaged over
every k up to and including the padding token that ends the span (nats/token) — and the share
of those tokens that are the model's top guess. A finer learning-curve measure than exact
match, which a small model rarely reaches.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import sysconfig
import time
from pathlib import Path

from benchmarks.humaneval.quality import decode_options, parse_decode, write_atomic
from mercury_train.corpus import heldout, is_test_path, looks_generated

KINDS = ("line", "rest_of_line")
CE_BATCH = 16  # canvases per forward in the --ce probe


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


def span_ce(engine, spans: list[dict], max_tokens: int) -> dict:
    """Left-to-right teacher-forced cross-entropy of each span's tokens and its end (see the
    module doc). Returns {"l2r_ce": nats/token, "l2r_top1": share, "l2r_tokens": count}."""
    import torch
    import torch.nn.functional as F

    from mercury_engine.canvas import build_canvas
    from mercury_engine.decode import shift_logits

    tok, model = engine.tokenizer, engine.model
    rows: list[tuple[list[int], int, int]] = []  # (canvas ids, position, target)
    for s in spans:
        text = s["text"]
        prefix, middle, suffix = text[: s["start"]], text[s["start"]: s["end"]], text[s["end"]:]
        heal = build_canvas(tok, prefix, suffix, 1, engine.context_tokens).heal_bytes
        target = tok.encode(heal.decode("utf-8", errors="replace") + middle) + [tok.pad_id]
        canvas = build_canvas(tok, prefix, suffix, max(max_tokens, len(target)) - (1 if heal else 0),
                              engine.context_tokens)
        if canvas.span_len < len(target) or (heal and not tok.decode_bytes(target[:1]).startswith(heal)):
            continue  # cut by the context budget, or a byte-level mismatch: not comparable
        base = canvas.ids(tok.mask_id)
        for k, t in enumerate(target):
            ids = list(base)
            ids[canvas.span_start: canvas.span_start + k] = target[:k]
            rows.append((ids, canvas.span_start + k, t))
    total, top1 = 0.0, 0
    with torch.inference_mode():
        for i in range(0, len(rows), CE_BATCH):
            chunk = rows[i: i + CE_BATCH]
            width = max(len(r[0]) for r in chunk)
            x = torch.full((len(chunk), width), tok.pad_id, dtype=torch.long, device=engine.device)
            keys = torch.zeros(len(chunk), width, dtype=torch.bool, device=engine.device)
            for j, (ids, _, _) in enumerate(chunk):
                x[j, : len(ids)] = torch.tensor(ids)
                keys[j, : len(ids)] = True
            logits = shift_logits(model(x, key_mask=keys), model.config.logits_shift)  # [B, T, V]
            pos = torch.tensor([r[1] for r in chunk], device=engine.device)
            want = torch.tensor([r[2] for r in chunk], device=engine.device)
            picked = logits[torch.arange(len(chunk)), pos].float()  # [B, V]
            picked[:, tok.mask_id] = float("-inf")
            total += float(F.cross_entropy(picked, want, reduction="sum"))
            top1 += int((picked.argmax(-1) == want).sum())
    n = max(1, len(rows))
    return {"l2r_ce": total / n, "l2r_top1": top1 / n, "l2r_tokens": len(rows)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.train.heldout", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=None)
    p.add_argument("--spans", type=int, default=300, help="spans per kind")
    p.add_argument("--kinds", default=",".join(KINDS))
    p.add_argument("--max-tokens", type=int, default=48)
    p.add_argument("--decode", nargs="*", default=[], metavar="KEY=VALUE")
    p.add_argument("--ce", action="store_true", help="also the left-to-right span cross-entropy probe")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/heldout.json"))
    args = p.parse_args(argv)
    from mercury_engine import Engine

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
            r = engine.infill(text[: s["start"]], text[s["end"]:], args.max_tokens, decode_options(decode))
            want = text[s["start"]: s["end"]]
            exact += int(r.text.rstrip() == want.rstrip())
        secs = time.perf_counter() - t0
        results[kind] = {"spans": len(spans), "exact_match": exact / max(1, len(spans)),
                         "seconds": round(secs, 2)}
        if args.ce:
            results[kind].update(span_ce(engine, spans, args.max_tokens))
    engine.close()
    ce_cols = f"{'l2r CE':>9}{'top-1':>8}" if args.ce else ""
    print(f"{'kind':<15}{'spans':>7}{'exact':>9}{ce_cols}")
    for kind, r in results.items():
        ce = f"{r['l2r_ce']:>9.3f}{r['l2r_top1'] * 100:>7.1f}%" if args.ce else ""
        print(f"{kind:<15}{r['spans']:>7}{r['exact_match'] * 100:>8.1f}%{ce}")
    out = {"model": str(engine.path), "files": len(files), "decode": decode, "results": results,
           "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(out, indent=2) + "\n")
    head = {f"heldout_{k}_exact": round(v["exact_match"], 4) for k, v in results.items()}
    if args.ce:
        head.update({f"heldout_{k}_l2r_ce": round(v["l2r_ce"], 4) for k, v in results.items()})
    print(json.dumps(head))
    return 0


if __name__ == "__main__":
    sys.exit(main())
