"""Training examples for masked diffusion infilling.

Two kinds, mixed per batch:

* **masked diffusion** (``mdm``): a window of the token stream, every token masked with
  probability t ~ U(0, 1); loss = cross-entropy on masked tokens weighted 1/t.
* **infill** (``infill``): built at the *text* level exactly as the sampler builds its canvas —
  prefix, middle and suffix tokenized separately, the prefix's last token moved into the
  middle (boundary healing), the middle followed by a random number of padding tokens — then
  a fraction t of the span masked. The span is a line, the rest of a line from a random
  column, a few lines, a random character span, or empty.

  A share ``tail_frac`` of the infill rows is masked as a **tail** instead: everything from a
  random cut to the span's end, the context the samplers see when they decode a span left to
  right (block by block, most confident first) — the text before the cut already written, the
  rest still masks. Its loss weight uses t = the masked fraction of the span.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
from tokenizers import Tokenizer

SPAN_KINDS = (("line", 0.35), ("rest_of_line", 0.2), ("lines", 0.25), ("chars", 0.12), ("empty", 0.08))


@dataclass
class Batch:
    tokens: np.ndarray  # [B, L] int64 clean tokens (targets)
    inputs: np.ndarray  # [B, L] int64 with masks applied
    masked: np.ndarray  # [B, L] bool: positions the loss is taken on
    weight: np.ndarray  # [B, L] float32: 1/t on masked positions / normaliser
    key_mask: np.ndarray  # [B, L] bool: False on trailing filler positions


class ExampleMaker:
    def __init__(self, tok: Tokenizer, stream: np.ndarray, docs: list[str], seq_len: int,
                 mask_id: int, pad_id: int, seed: int, max_span: int = 128, max_pad: int = 64,
                 pad_weight: float = 1.0, weight_t_floor: float = 0.0, tail_frac: float = 0.0) -> None:
        self.tok = tok
        self.stream = stream
        self.docs = [d for d in docs if len(d) > 200]
        lengths = np.array([len(d) for d in self.docs], dtype=np.float64)
        self.doc_p = lengths / lengths.sum()
        self.seq_len = seq_len
        self.mask_id, self.pad_id = mask_id, pad_id
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.max_span, self.max_pad = max_span, max_pad
        self.pad_weight = pad_weight  # loss weight of padding targets (they are easy and many)
        # The 1/t weight is capped at 1/weight_t_floor: rows with a handful of masked tokens
        # otherwise get weights up to 1000 and make loss spikes (seen: one at step 280 that
        # the 25 M-token run never recovered from).
        self.weight_t_floor = weight_t_floor
        self.tail_frac = tail_frac

    # ------------------------------------------------------------------ batches
    def batch(self, size: int, infill_frac: float, t: float | None = None) -> Batch:
        """``size`` rows, a fraction ``infill_frac`` of them infill-shaped; ``t`` fixes the
        masking rate (an evaluation probe) instead of drawing it from U(0, 1)."""
        L = self.seq_len
        tokens = np.full((size, L), self.pad_id, dtype=np.int64)
        region = np.zeros((size, L), dtype=bool)  # positions eligible for masking
        key_mask = np.ones((size, L), dtype=bool)
        norm = np.zeros(size, dtype=np.float32)
        tails: dict[int, tuple[int, int]] = {}  # row -> (cut, end): rows masked from cut to end
        for b in range(size):
            if self.rng.random() < infill_frac:
                seq, start, end, used = self.infill_sequence()
                tokens[b, :used] = seq[:used]
                key_mask[b, used:] = False
                region[b, start:end] = True
                norm[b] = end - start
                if t is None and self.rng.random() < self.tail_frac:
                    tails[b] = (self.rng.randrange(start, end), end)
            else:
                s = int(self.np_rng.integers(0, len(self.stream) - L))
                tokens[b] = self.stream[s:s + L]
                region[b] = True
                norm[b] = L
        if t is None:
            t = self.np_rng.uniform(0.0, 1.0, size=(size, 1)).astype(np.float32)
        else:
            t = np.full((size, 1), t, dtype=np.float32)
        t = np.clip(t, 1e-3, 1.0)
        masked = (self.np_rng.random((size, L)) < t) & region
        for b, (cut, end) in tails.items():
            masked[b] = False
            masked[b, cut:end] = True
            t[b, 0] = (end - cut) / norm[b]
        # At least one masked position per row.
        for b in np.flatnonzero(~masked.any(1)):
            cand = np.flatnonzero(region[b])
            masked[b, cand[self.rng.randrange(len(cand))]] = True
        inputs = np.where(masked, self.mask_id, tokens)
        weight = np.where(masked, 1.0 / np.maximum(t, self.weight_t_floor) / norm[:, None], 0.0)
        if self.pad_weight != 1.0:
            weight = np.where(tokens == self.pad_id, weight * self.pad_weight, weight)
        weight = weight.astype(np.float32)
        return Batch(tokens, inputs, masked, weight, key_mask)

    # ------------------------------------------------------------------ infill
    def infill_sequence(self) -> tuple[list[int], int, int, int]:
        doc = self.docs[int(self.np_rng.choice(len(self.docs), p=self.doc_p))]
        a, b = self.pick_span(doc)
        prefix, middle, suffix = doc[:a], doc[a:b], doc[b:]
        # Keep text windows small before tokenizing (speed): ~6 chars per token is generous.
        prefix = prefix[-self.seq_len * 6:]
        suffix = suffix[: self.seq_len * 3]
        pre = self.tok.encode(prefix, add_special_tokens=False).ids if prefix else []
        heal = ""
        if pre:
            heal = self.tok.decode([pre[-1]])
            pre = pre[:-1]
            if not prefix.endswith(heal):  # byte-level decode mismatch: no healing for this one
                heal, pre = "", self.tok.encode(prefix, add_special_tokens=False).ids
        mid = self.tok.encode(heal + middle, add_special_tokens=False).ids if (heal + middle) else []
        mid = mid[: self.max_span]
        suf = self.tok.encode(suffix, add_special_tokens=False).ids if suffix else []
        n_pad = self.rng.randint(0, self.max_pad)
        span = mid + [self.pad_id] * n_pad
        span = span[: max(1, self.seq_len // 2)]
        room = self.seq_len - len(span)
        suf_keep = min(len(suf), self.rng.randint(room // 8, room // 2) if room >= 8 else 0)
        pre_keep = min(len(pre), room - suf_keep)
        seq = pre[len(pre) - pre_keep:] + span + suf[:suf_keep]
        start = pre_keep
        return seq, start, start + len(span), len(seq)

    @staticmethod
    def _line_end(doc: str, start: int) -> int:
        end = doc.find("\n", start)
        return len(doc) if end < 0 else end + 1

    def pick_span(self, doc: str) -> tuple[int, int]:
        r, acc = self.rng.random(), 0.0
        kind = SPAN_KINDS[-1][0]
        for name, p in SPAN_KINDS:
            acc += p
            if r < acc:
                kind = name
                break
        p = self.rng.randrange(len(doc))
        a = doc.rfind("\n", 0, p) + 1  # start of a random line
        line_end = self._line_end(doc, a)
        if kind == "line":
            return a, line_end
        if kind == "rest_of_line":
            return self.rng.randint(a, max(a, line_end - 1)), line_end
        if kind == "lines":
            b = a
            for _ in range(self.rng.randint(2, 6)):
                b = self._line_end(doc, b)
            return a, b
        if kind == "chars":
            a = self.rng.randrange(len(doc))
            return a, min(len(doc), a + self.rng.randint(1, 200))
        pos = self.rng.randrange(len(doc))
        return pos, pos  # empty
