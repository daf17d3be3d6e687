"""Does the model read what is retrieved? Span cross-entropy with the row's own retrieved block
against the same row with another package's block in its place.

    python -m benchmarks.train.retrieval_reading --corpus CORPUS [--model DIR ...] [--rows 400]
        [--out benchmarks/results/retrieval_reading.json]

The rows are ``train fit --retrieval-share``'s (mercury_lsp/cli/train_retrieval.py: the real
memory over a package's files, the backend's comment block before the prefix, a line or rest
of a line as the span), built from the prepared corpus's **held-out** files (``train prepare``'s
3 %, never trained on). For each row the span and its padding are masked whole and scored
(nats per span token, padding left out); the control row keeps everything but puts, in the
block's positions, the last as many tokens of the block of a row from another package (same
length, same format, unrelated code). A model that ignores its block scores both the same; the
gap (control minus own) is what reading the retrieved chunks is worth to it. Each ``--model``
is scored on the same rows, side by side; the default is the embedded model. Ends with one
JSON line.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import torch
import torch.nn.functional as F

DEFAULT_OUT = Path("benchmarks/results/retrieval_reading.json")
SEQ_LEN = 320  # the CPU run's window (mercury_train/recipe.py CPU_SEQ_LEN)
BATCH = 16


def control_rows(rows, sources, seed: int = 0) -> torch.Tensor:
    """Each row with its block's positions taken by another package's block tail (same length)."""
    rng = random.Random(seed)
    out = rows.tokens.clone()
    for i in range(len(rows)):
        need = int(rows.block[i])
        donors = [j for j in range(len(rows)) if sources[j].package != sources[i].package and int(rows.block[j]) >= need]
        if need == 0 or not donors:
            continue
        j = rng.choice(donors)
        bj = int(rows.block[j])
        out[i, :need] = rows.tokens[j, bj - need:bj]
    return out


def span_ce(model, tokens: torch.Tensor, rows, mask_id: int) -> float:
    """Mean cross-entropy (nats) of the span's tokens, span and padding fully masked."""
    from mercury_engine.decode import shift_logits

    total = count = 0.0
    pos = torch.arange(tokens.shape[1])
    with torch.inference_mode():
        for i in range(0, len(rows), BATCH):
            x = tokens[i:i + BATCH].long()
            start, span, pads = rows.start[i:i + BATCH, None], rows.span[i:i + BATCH, None], rows.pads[i:i + BATCH, None]
            region = (pos >= start) & (pos < start + span + pads)
            scored = (pos >= start) & (pos < start + span)
            logits = shift_logits(model(x.masked_fill(region, mask_id)), model.config.logits_shift).float()
            ce = F.cross_entropy(logits.transpose(1, 2), x, reduction="none")
            total += float(ce[scored].sum())
            count += float(scored.sum())
    return total / max(count, 1.0)


def main(argv: list[str] | None = None) -> int:
    from mercury_engine.loader import load_checkpoint
    from mercury_lsp.cli.train_retrieval import build_rows

    p = argparse.ArgumentParser(prog="python -m benchmarks.train.retrieval_reading", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, required=True, help="a corpus `mercury-lsp train prepare` wrote")
    p.add_argument("--model", action="append", default=None, help="a model directory (repeatable; default: embedded)")
    p.add_argument("--rows", type=int, default=400)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    tok_json = (args.corpus / "tokenizer.json").read_text(encoding="utf-8")
    rows, sources = build_rows(args.corpus, tok_json, SEQ_LEN, args.rows, seed=7, log=lambda *_: None,
                               split="heldout")
    control = control_rows(rows, sources)
    results = {}
    for name in args.model or [None]:
        loaded = load_checkpoint(name, torch.float32, torch.device("cpu"))
        model = loaded.model.eval()
        mask_id = loaded.tokenizer.mask_id
        own, other = span_ce(model, rows.tokens, rows, mask_id), span_ce(model, control, rows, mask_id)
        results[str(name or "embedded")] = {"own_block_ce": round(own, 4), "other_block_ce": round(other, 4),
                                            "gap": round(other - own, 4)}
    print(f"{'model':<60}{'own block':>11}{'other block':>13}{'gap':>8}")
    for name, r in results.items():
        print(f"{name[-60:]:<60}{r['own_block_ce']:>11.3f}{r['other_block_ce']:>13.3f}{r['gap']:>8.3f}")
    out = {"benchmark": "retrieval_reading", "rows": len(rows), "packages": len({s.package for s in sources}),
           "seq_len": SEQ_LEN, "split": "corpus held-out files", "results": results,
           "seconds": round(time.perf_counter() - t0, 1)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({"retrieval_reading": {k: v["gap"] for k, v in results.items()}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
