"""Infill rows that carry retrieved context: what ``train fit --retrieval-share`` mixes in.

The daemon hands the embedded model chunks of other files of the repository as a comment
block before the prefix (``mercury_lsp/backend/retrieved.py``). A model trained only on single
files has never seen such a block refer to the span it writes, and ignores it (the completion
benchmark's ablation: ``+retrieval`` adds nothing to ``both``). These rows are the sampler's
canvas with that block in front: ``block + prefix``, the span (a line or the rest of a line
after the cursor, like the benchmark's cases), 0..``max_pad`` padding tokens that end it, and
the suffix, in exactly ``seq_len`` tokens.

The rows are built by the daemon's side (``mercury_lsp/cli/train_retrieval.py``: the real memory
over a package's files, the backend's own ``comment_block``), since training never imports the
daemon; here they are only laid out, stored (``retrieval.npz`` beside the corpus: never
committed) and loaded. The batcher (``batches.DeviceBatcher``) masks their span like any infill
row's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

ROWS_FILE = "retrieval.npz"


@dataclass
class RetrievalRows:
    """``tokens`` [N, L] canvases; ``start`` [N] where the span begins, ``span`` [N] its tokens,
    ``pads`` [N] the padding tokens after it (the masked region is start .. start+span+pads);
    ``block`` [N] how many of the leading tokens are the retrieved block."""

    tokens: Tensor
    start: Tensor
    span: Tensor
    pads: Tensor
    block: Tensor

    def __len__(self) -> int:
        return int(self.tokens.shape[0])

    def to(self, device: torch.device | str) -> RetrievalRows:
        return RetrievalRows(*(t.to(device) for t in (self.tokens, self.start, self.span, self.pads, self.block)))

    def save(self, path: Path, meta: dict | None = None) -> None:
        tmp = Path(path).with_suffix(".tmp.npz")
        np.savez_compressed(tmp, tokens=self.tokens.numpy().astype(np.uint16), start=self.start.numpy(),
                            span=self.span.numpy(), pads=self.pads.numpy(), block=self.block.numpy(),
                            meta=np.asarray(repr(meta or {})))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> RetrievalRows:
        with np.load(path) as z:
            return cls(torch.from_numpy(z["tokens"].astype(np.int32)),
                       *(torch.from_numpy(z[k].astype(np.int64)) for k in ("start", "span", "pads", "block")))


def lay_out(head: list[int], block_tokens: int, span: list[int], suffix: list[int], pads: int,
            seq_len: int, pad_id: int) -> tuple[list[int], int, int, int, int] | None:
    """One row of ``seq_len`` tokens: ``head`` (the block and the prefix tokenized together, as
    the engine tokenizes its prompt; its first ``block_tokens`` are the block, and they are what
    is cut when the row is full, as ``comment_block``'s room trims the block first), the span,
    ``pads`` padding tokens, the suffix cut at its end. Returns (row, span start, span tokens,
    pads, block tokens kept), or None when the span and one token of context do not fit."""
    if not span and not pads:
        pads = 1  # a span holds at least one token (an empty span is ended by one pad)
    room = seq_len - len(span) - pads
    prefix = len(head) - block_tokens
    if room < 2 or prefix < 0:
        return None
    suffix = suffix[: max(0, room - prefix - 1)]
    head = head[-(room - len(suffix)):]
    row = head + span + [pad_id] * pads + suffix
    row += [pad_id] * (seq_len - len(row))  # a short file: the canvas ends in padding
    return row, len(head), len(span), pads, max(0, len(head) - prefix)


def stack(rows: list[tuple[list[int], int, int, int, int]]) -> RetrievalRows:
    if not rows:
        raise ValueError("no retrieval rows were built (no package had two or more files to retrieve from)")
    tokens = torch.tensor([r[0] for r in rows], dtype=torch.int32)
    cols = [torch.tensor([r[k] for r in rows], dtype=torch.int64) for k in range(1, 5)]
    return RetrievalRows(tokens, *cols)
