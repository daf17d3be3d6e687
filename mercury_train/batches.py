"""Training batches made by tensor operations on the training device (no per-example loop).

The token stream lives on the device; a batch is B random windows of L tokens. Rows are of
three kinds, chosen per row:

* **masked diffusion**: the window, each token masked with probability t ~ U(t_min, 1);
* **infill**: the sampler's canvas built at the token level — prefix, span, 0..``max_pad``
  padding tokens (what ends a span), suffix — with the span masked at rate t, or (a share
  ``tail_frac``) from a random cut to its end (what a left-to-right decode sees). Spans are a
  line, the rest of a line, 2-6 lines, a token run, or empty (the kinds of the retired
  text-level example maker that trained the embedded model, with a token run for its
  character span).
  Line ends are tokens that hold a line break; a token that merges the break with the next
  line's indentation (``"\\n    "``) ends the span with that indentation, where the sampler's
  canvas (prefix, span and suffix tokenized separately) would end it at the break;
* **retrieval** (a share ``retrieval_frac`` of the diffusion rows, when rows are given): an
  infill canvas prepared with chunks of other files of the same package before the prefix
  (``mercury_train/retrieval.py``), its span masked like an infill row's;
* **fill-in-the-middle, autoregressive** (``ar`` batches only): the same canvas reordered as
  suffix, ``<|endoftext|>``, prefix, span, padding — the causal model learns to write a span
  after seeing both sides.

Loss weights: masked positions weigh 1/max(t, ``weight_t_floor``) / (tokens eligible for
masking in the row), the MDLM bound's weighting with its spike cap; autoregressive rows weigh
1/L. Everything is [B, L] and static-shaped (no masked gather, so no host sync).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from mercury_train.retrieval import RetrievalRows

# (kind, probability): the retired text-level example maker's mix (the embedded model's training).
SPAN_KINDS = (("line", 0.35), ("rest_of_line", 0.2), ("lines", 0.25), ("tokens", 0.12), ("empty", 0.08))
MAX_RUN_TOKENS = 40  # a "tokens" span: 1..40 tokens from a random position


@dataclass
class TensorBatch:
    tokens: Tensor  # [B, L] targets
    inputs: Tensor  # [B, L] model inputs (masks applied, or the same tokens for AR rows)
    weight: Tensor  # [B, L] float32 loss weight per target (0: no loss)


@dataclass(frozen=True)
class BatchSpec:
    seq_len: int
    mask_id: int
    pad_id: int
    eot_id: int
    max_span: int = 128
    max_pad: int = 64
    t_min: float = 0.0  # the masking-rate floor: t ~ U(t_min, 1)
    weight_t_floor: float = 0.05
    tail_frac: float = 0.5
    shift: bool = False  # logits shifted by one (position i predicts token i + 1): never mask 0


class DeviceBatcher:
    """Batches from a token stream held on ``device``; ``newline`` marks the vocabulary's ids
    whose text holds a line break."""

    def __init__(self, stream: Tensor, newline: Tensor, spec: BatchSpec, seed: int,
                 retrieval: RetrievalRows | None = None) -> None:
        if stream.numel() <= spec.seq_len + 1:
            raise ValueError(f"the token stream ({stream.numel()} tokens) is shorter than one window "
                             f"({spec.seq_len} tokens)")
        self.stream = stream
        self.device = stream.device
        self.newline = newline.to(self.device)
        self.spec = spec
        self.gen = torch.Generator(device=self.device).manual_seed(seed)
        self.ar = torch.arange(spec.seq_len, device=self.device)
        probs = torch.tensor([p for _, p in SPAN_KINDS], device=self.device)
        self.kind_cdf = torch.cumsum(probs, 0) / probs.sum()
        if retrieval is not None and retrieval.tokens.shape[1] != spec.seq_len:
            raise ValueError(f"retrieval rows of {retrieval.tokens.shape[1]} tokens for windows of {spec.seq_len}")
        self.retrieval = retrieval.to(self.device) if retrieval is not None else None

    def _u(self, *shape: int) -> Tensor:
        return torch.rand(shape, generator=self.gen, device=self.device)

    def _randint(self, lo: Tensor | int, hi: Tensor | int, n: int) -> Tensor:
        """Per-row integers in [lo, hi) (hi > lo)."""
        return (lo + (self._u(n) * (hi - lo)).long()).long()

    def windows(self, b: int) -> Tensor:
        # float64 draws: a float32 one would only reach every 16th start in a 200 M-token stream
        u = torch.rand(b, generator=self.gen, device=self.device, dtype=torch.float64)
        starts = (u * (self.stream.numel() - self.spec.seq_len)).long()
        return self.stream[starts[:, None] + self.ar].long()  # [B, L]

    def state(self) -> Tensor:
        return self.gen.get_state()

    def set_state(self, state: Tensor) -> None:
        self.gen.set_state(state)

    # ------------------------------------------------------------------ canvases
    def canvas(self, win: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """Infill canvases from windows: (tokens [B, L], span start a, span tokens n, pads p)."""
        s, (b, L) = self.spec, win.shape
        nl = self.newline[win].long()  # [B, L]
        cs = torch.cumsum(nl, 1)  # [B, L] line breaks up to and including each position
        rows = torch.arange(b, device=self.device)
        c = self._randint(L // 2, L - L // 8, b)  # a pivot: the suffix is what follows the span
        before = cs[rows, c] - nl[rows, c]  # line breaks before the pivot
        last_nl = torch.searchsorted(cs, before[:, None], side="left")[:, 0]
        line_start = torch.where(before == 0, torch.zeros_like(c), last_nl + 1)

        def end_after(k: Tensor) -> Tensor:  # one past the k-th line break at or after the pivot
            return (torch.searchsorted(cs, (before + k)[:, None], side="left")[:, 0] + 1).clamp(max=L)

        kind = torch.searchsorted(self.kind_cdf, self._u(b), right=True).clamp(max=len(SPAN_KINDS) - 1)
        one = torch.ones_like(c)
        line_end = end_after(one)
        lines_end = end_after(self._randint(2, 7, b))
        rest_start = self._randint(line_start, torch.maximum(line_end, line_start + 1), b)
        run_end = c + self._randint(1, MAX_RUN_TOKENS + 1, b)
        a = torch.stack([line_start, rest_start, line_start, c, c], 1).gather(1, kind[:, None])[:, 0]
        e = torch.stack([line_end, line_end, lines_end, run_end, c], 1).gather(1, kind[:, None])[:, 0]
        half = L // 2
        n = (e - a).clamp(min=0, max=min(s.max_span, half))
        p = self._randint(0, s.max_pad + 1, b)
        p = torch.minimum(p, torch.clamp(half - n, min=0))
        p = torch.minimum(p, L - a - n)
        p = torch.where(n + p == 0, torch.ones_like(p), p)  # a span holds at least one token
        a = torch.minimum(a, L - n - p)
        j = self.ar[None, :]
        span_end = (a + n)[:, None]
        src = torch.where(j < span_end, j, j - p[:, None]).clamp(min=0)
        tokens = win.gather(1, src)
        pads = (j >= span_end) & (j < span_end + p[:, None])
        return tokens.masked_fill(pads, s.pad_id), a, n, p

    # ------------------------------------------------------------------ batches
    def diffusion(self, b: int, infill_frac: float, t: float | None = None,
                  retrieval_frac: float = 0.0) -> TensorBatch:
        """Masked-diffusion rows, a share ``infill_frac`` of them infill canvases and a share
        ``retrieval_frac`` retrieval rows (taken first, when the batcher has them); ``t`` fixes
        the masking rate (an evaluation probe; no tail rows then)."""
        s, L = self.spec, self.spec.seq_len
        win = self.windows(b)
        canvas, a, n, p = self.canvas(win)
        infill = self._u(b) < infill_frac
        if self.retrieval is not None and retrieval_frac > 0:
            rows = self.retrieval
            pick = (self._u(b) * len(rows)).long().clamp(max=len(rows) - 1)
            ret = self._u(b) < retrieval_frac
            canvas = torch.where(ret[:, None], rows.tokens[pick].long(), canvas)
            a, n, p = (torch.where(ret, col[pick], x) for col, x in ((rows.start, a), (rows.span, n), (rows.pads, p)))
            infill = infill | ret
        tokens = torch.where(infill[:, None], canvas, win)
        lo = torch.where(infill, a, torch.zeros_like(a))
        span = torch.where(infill, n + p, torch.full_like(a, L))
        j = self.ar[None, :]
        region = (j >= lo[:, None]) & (j < (lo + span)[:, None])
        if s.shift:
            region &= j > 0
            span = torch.where(lo == 0, span - 1, span)
            lo = torch.where(lo == 0, torch.ones_like(lo), lo)
        if t is None:
            rate = s.t_min + (1 - s.t_min) * self._u(b)
            tail = infill & (self._u(b) < s.tail_frac)
        else:
            rate = torch.full((b,), float(t), device=self.device)
            tail = torch.zeros_like(infill)
        rate = rate.clamp(min=1e-3)
        masked = (self._u(b, L) < rate[:, None]) & region
        cut = lo + (self._u(b) * span).long()
        masked = torch.where(tail[:, None], region & (j >= cut[:, None]), masked)
        rate = torch.where(tail, (lo + span - cut).float() / span, rate)
        # At least one masked position per row.
        none = ~masked.any(1)
        pick = lo + (self._u(b) * span).long()
        masked |= none[:, None] & (j == pick[:, None])
        weight = masked.float() / (rate.clamp(min=s.weight_t_floor) * span.float())[:, None]
        return TensorBatch(tokens, tokens.masked_fill(masked, s.mask_id), weight)

    def autoregressive(self, b: int) -> TensorBatch:
        """Fill-in-the-middle rows in suffix-first order for a causal model (targets are the
        inputs; the shift is the loss's)."""
        L = self.spec.seq_len
        canvas, a, n, p = self.canvas(self.windows(b))
        suffix_len = (L - (a + n + p))[:, None]  # [B, 1]
        j = self.ar[None, :]
        src = torch.where(j < suffix_len, (a + n + p)[:, None] + j, j - suffix_len - 1).clamp(0, L - 1)
        rows = canvas.gather(1, src).masked_fill(j == suffix_len, self.spec.eot_id)
        weight = torch.full(rows.shape, 1.0 / L, device=self.device)
        return TensorBatch(rows, rows, weight)


def newline_table(tokenizer, vocab_size: int) -> Tensor:
    """[V] bool: ids whose decoded text holds a line break (from a ``tokenizers`` Tokenizer)."""
    out = torch.zeros(vocab_size, dtype=torch.bool)
    for i in range(min(vocab_size, tokenizer.get_vocab_size())):
        out[i] = "\n" in tokenizer.decode([i], skip_special_tokens=False)
    return out
