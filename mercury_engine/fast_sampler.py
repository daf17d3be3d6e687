"""The fast infill sampler: dual KV cache, confidence-threshold parallel unmasking, block-wise
span growth, and batched steps over requests in different phases.

How a request is decoded (Fast-dLLM's recipe, adapted to infilling):

* The span starts at ``initial_span`` masks (not ``max_tokens``) and is decoded **block by
  block**, left to right; when all are decided and no stop token (padding/EOS) ended the span,
  it **grows** by a block, up to ``max_tokens`` (short completions stay cheap).
* At the start of a block the whole canvas runs once (a *full* step) and the keys/values of
  every position outside the block — prefix, earlier blocks, later masks, suffix — are kept
  (the **dual cache**). The following steps recompute only the block's positions, attending to
  the cached context. ``refresh_every=N`` forces a full step every N steps; ``cache="none"``
  makes every step a full step (the exact, uncached path).
* Each step commits every undecided block position whose confidence is ``>= threshold``, and
  at least ``min_per_step`` (the most confident: a small model is rarely confident), or with
  ``threshold=None`` a fixed count that spreads the block over ``steps_per_block`` steps.
* The length prior (mercury_engine/length.py): the first full step of the all-mask span sizes it; its
  keys/values, the suffix's moved to the sized span's end, are the fill's first dual cache.
* The commit rule, padding order, boundary healing and single-line end are the decoding
  core's (mercury_engine/decode.py), so at temperature 0 with one token per step, no cache, no blocks
  and no growth (``mercury_engine.options.exact_options()``), this sampler reproduces the reference
  exactly. The schedule comes from ``InfillOptions.schedule()``.

Batching: ``FastDecoder.step(states)`` advances any set of requests by one step: block steps
in one padded forward, full steps grouped by canvas length (``full_step_groups``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial

import torch
import torch.nn.functional as F
from torch import Tensor

from mercury_engine import length as _length
from mercury_engine.batching import (
    BATCH_INVARIANT,
    FULL_STEP_PAD_SHARE,
    DecodeState,
    full_step_groups,
    slot_rows,
)
from mercury_engine.canvas import Canvas
from mercury_engine.context_cache import ContextCache, Reuse, join_kv
from mercury_engine.decode import (
    SpanState,
    commit_count,
    commit_step,
    make_generator,
    predict_rows,
    read_span,
)
from mercury_engine.errors import CancelledError
from mercury_engine.model import KV, Transformer
from mercury_engine.options import PRIVATE_SCOPE, WHOLE_SPAN, InfillOptions
from mercury_engine.tokenizer import Tokenizer
from mercury_engine.types import CancelToken, InfillResult, StepEvent


def stack_padded(ts: list[Tensor], length: int) -> Tensor:
    """Context keys or values [1, K, C_i, E] of each state -> [B, K, length, E], zero-padded
    (a lone unpadded tensor is used as it is: no copy)."""
    if len(ts) == 1 and ts[0].shape[2] == length:
        return ts[0]
    return torch.cat([F.pad(t, (0, 0, 0, length - t.shape[2])) for t in ts])


class FastDecoder:
    def __init__(self, model: Transformer, tok: Tokenizer) -> None:
        self.model = model
        self.tok = tok
        self.shift = model.config.logits_shift
        self.device = next(model.parameters()).device
        self.stop_ids = torch.tensor(tok.stop_ids, device=self.device)
        self.pad_share = FULL_STEP_PAD_SHARE.get(self.device.type, math.inf)
        self.invariant = BATCH_INVARIANT.get(self.device.type, False)
        self.context_cache = ContextCache()  # prefix keys/values reused across requests
        self.sized = partial(_length.sized, model, tok)  # the length prior (mercury_engine/length.py)

    # ------------------------------------------------------------------ requests
    def start(self, canvas: Canvas, opts: InfillOptions, cancel: CancelToken | None = None,
              callback: Callable[[StepEvent], None] | None = None) -> DecodeState:
        sched = opts.schedule()  # ``opts`` come resolved (validated) from the engine's entry
        max_span = canvas.span_len
        prior = _length.prior_applies(opts)
        span = max_span if prior or sched.initial_span == WHOLE_SPAN else min(max_span, sched.initial_span + (
            1 if canvas.heal_bytes else 0))
        first = replace(canvas, span_len=span)
        return DecodeState(canvas=first, opts=opts, schedule=sched, max_span=max_span,
                           spans=SpanState.new(first.layout(self.tok.mask_id), self.device),
                           generator=make_generator(opts.seed, self.device), cancel=cancel,
                           callback=callback, prior=prior,
                           own_context=ContextCache(replace(self.context_cache.policy, max_entries=1),
                                                    stats=self.context_cache.stats))

    @torch.inference_mode()
    def run(self, states: list[DecodeState]) -> list[InfillResult]:
        """Decode the states to the end, batching their steps; results in order."""
        active = list(states)
        while active:
            self.step(active)
            active = [s for s in active if not s.done]
        for s in states:
            if s.error is not None:
                raise s.error
        return [self.result(s) for s in states]

    # ------------------------------------------------------------------ one step
    @torch.inference_mode()
    def step(self, states: list[DecodeState]) -> None:
        """Advance every state by one denoising step.

        Cancel tokens and deadlines are checked first: a cancelled state is finished with
        ``error`` set and costs no compute from this step on.
        """
        live = []
        for s in states:
            if s.done:
                continue
            if s.cancel is not None:
                try:
                    s.cancel.check()
                except CancelledError as exc:
                    s.error, s.done = exc, True
                    continue
            live.append(s)
        full = [s for s in live if s.needs_full()]
        cached = [s for s in live if not s.needs_full()]
        for group in full_step_groups(full, self.pad_share):
            self._full_step(group)
        if cached:
            self._cached_step(cached)

    def _full_step(self, states: list[DecodeState]) -> None:
        plain = []
        for s in states:
            reuse = self._lookup(s)
            if reuse is None:
                plain.append(s)
            else:
                self._reuse_step(s, reuse)
        if not plain:
            return
        states = plain
        lengths = [int(s.ids.numel()) for s in states]
        L = slot_rows(max(lengths)) if self.invariant else max(lengths)
        batch = torch.full((len(states), L), self.tok.pad_id, dtype=torch.long, device=self.device)
        key_mask = torch.zeros(len(states), L, dtype=torch.bool, device=self.device)
        for i, s in enumerate(states):
            batch[i, : lengths[i]] = s.ids
            key_mask[i, : lengths[i]] = True
        want_kv = any(s.opts.cache == "dual" for s in states)
        windows = [s.query_window(self.shift) for s in states]
        outputs = [s.output_window(self.shift) for s in states]
        rows = None  # the exact path (cache "none") keeps the reference's full forward
        if all(s.opts.cache == "dual" for s in states):  # only the windows' outputs are read
            W = max(hi - lo for lo, hi in outputs)
            if self.invariant:
                W = slot_rows(W)  # whole GEMM row slots, as alone
            rows = torch.stack([(torch.arange(W, device=self.device) + lo).clamp_(max=n - 1)
                                for (lo, _), n in zip(outputs, lengths, strict=True)])  # [B, W]
        if self.invariant:
            hidden, kv = self.model.forward_hidden(batch, return_kv=want_kv, lengths=(lengths, None),
                                                   rows=rows)  # [B, L or W, D]
        else:
            hidden, kv = self.model.forward_hidden(batch, key_mask=None if min(lengths) == L else key_mask,
                                                   return_kv=want_kv, rows=rows)  # [B, L or W, D]
        from_hidden: list[tuple[DecodeState, Tensor]] = []
        self.context_cache.stats.computed_tokens += sum(n for n, s in zip(lengths, states, strict=True)
                                                        if s.opts.context_reuse)
        for i, (s, (lo, hi)) in enumerate(zip(states, windows, strict=True)):
            s.forwards += 1
            s.steps_since_full = 0
            mine = None if kv is None else [(k[i:i + 1, :, : lengths[i]], v[i:i + 1, :, : lengths[i]]) for k, v in kv]
            keep = s.opts.cache == "dual" and mine is not None
            if keep:
                self._store_context(s, mine, reuses=0)
            if s.prior and self._size(s, hidden[i], 0 if rows is None else lo, mine):
                continue  # the step sized the span: nothing to commit (its dual cache is the moved one)
            if keep:
                s.ctx_kv = self._block_context(s, mine)
            if s.opts.cache == "none":  # exact path: the same logits GEMM as the reference
                logits = self._lm_head(hidden[i, : lengths[i]])[lo:hi]  # [W, V]
                self._decide(s, logits=self._align(s, logits))
            else:
                window = hidden[i, lo:hi] if rows is None else hidden[i, : hi - lo]
                from_hidden.append((s, self._align(s, window)))
        self._decide_all(from_hidden)

    # ------------------------------------------------------------------ context reuse
    def _lookup(self, s: DecodeState) -> Reuse | None:
        """Cached prefix keys/values this full step may reuse (mercury_engine/context_cache.py): the
        request's own after its first full step, the shared cache's (earlier requests) before."""
        if s.opts.cache != "dual" or not s.opts.context_reuse:
            return None
        lo, _ = s.query_window(self.shift)
        own = s.own_context is not None and bool(s.own_context.entries)
        if not own and s.opts.context_scope == PRIVATE_SCOPE:
            return None
        cache = s.own_context if own else self.context_cache
        return cache.lookup(s.canvas.prefix_ids, min(lo, len(s.canvas.prefix_ids)), s.opts.context_scope)

    def _reuse_step(self, s: DecodeState, reuse: Reuse) -> None:
        """A full step that recomputes only the positions after the reused prefix."""
        c, length = reuse.length, int(s.ids.numel())
        pos = torch.arange(c, length, device=self.device)[None]  # [1, L - c]
        lo, hi = s.query_window(self.shift)
        out_hi = s.output_window(self.shift)[1]
        rows = torch.arange(lo - c, out_hi - c, device=self.device)[None]  # [1, W]: the window's outputs only
        hidden, kv = self.model.forward_hidden(s.ids[None, c:], pos, ctx_kv=reuse.kv, return_kv=True, rows=rows,
                                               lengths=([length - c], [c]) if self.invariant else None)
        self.context_cache.stats.computed_tokens += length - c
        s.forwards += 1
        s.steps_since_full = 0
        full = join_kv(reuse.kv, kv)
        self._store_context(s, full, reuses=reuse.reuses + 1)
        if not (s.prior and self._size(s, hidden[0], lo, full)):
            s.ctx_kv = self._block_context(s, full)
            self._decide(s, hidden=self._align(s, hidden[0, : hi - lo]))

    # ------------------------------------------------------------------ the length prior
    def _size(self, s: DecodeState, hidden: Tensor, first: int, kv: list[KV] | None) -> bool:
        """The length prior's step (mercury_engine/length.py): True when it sized the span (nothing to
        commit this step). The sized fill's first block then starts on a dual cache taken from
        this step's keys/values (``moved_context``) instead of a full step of its own."""
        before = s.canvas
        if not s.size_span(self.sized(before, hidden, first), self.tok.mask_id):
            return False
        if kv is not None and s.opts.cache == "dual":
            s.ctx_kv = self.moved_context(s, kv, before.span_len)
        return True

    def moved_context(self, s: DecodeState, kv: list[KV], old_span: int) -> list[KV]:
        """The dual cache of a sized fill's first block from the sizing step's keys/values ``kv``
        (per layer [1, K, L_old, E], the canvas with ``old_span`` masks).

        The canvas is the same up to the end of the shorter span (prefix, then masks); the suffix
        moves ``old_span - span_len`` positions to the left, and its keys are rotated there
        (``Rotary.move``). The context was computed attending to the longer all-mask span, the
        approximation the dual cache already makes for every block (Fast-dLLM); the quality
        against a fresh full step is measured by ``benchmarks/engine/ab`` (README, "Engine CPU cost").
        """
        lo, hi = s.query_window(self.shift)  # the first block's window
        end, old_end = s.start + s.span_len, s.start + old_span  # where the suffix starts, now and before
        delta = end - old_end  # <= 0
        out = []
        for k, v in kv:
            suffix_k = self.model.rotary.move(k[:, :, old_end:], delta)
            out.append((torch.cat([k[:, :, :lo], k[:, :, hi:end], suffix_k], dim=2),
                        torch.cat([v[:, :, :lo], v[:, :, hi:end], v[:, :, old_end:]], dim=2)))
        return out  # [1, K, L - (hi - lo), E] each

    def _block_context(self, s: DecodeState, kv: list[KV]) -> list[KV]:
        """After a full step: the block's dual cache (every position outside the query window)."""
        lo, hi = s.query_window(self.shift)
        return [(torch.cat([k[:, :, :lo], k[:, :, hi:]], dim=2), torch.cat([v[:, :, :lo], v[:, :, hi:]], dim=2))
                for k, v in kv]  # [1, K, L - (hi - lo), E]: two slices, no boolean gather

    def _store_context(self, s: DecodeState, kv: list[KV], reuses: int) -> None:
        """After a full step, with context reuse: the prefix's keys/values for later requests and blocks."""
        if s.opts.context_reuse:
            if s.opts.context_scope != PRIVATE_SCOPE:
                self.context_cache.store(s.canvas.prefix_ids, kv, reuses, s.opts.context_scope)
            if s.own_context is not None:
                s.own_context.store(s.canvas.prefix_ids, kv, reuses, s.opts.context_scope)

    def _cached_step(self, states: list[DecodeState]) -> None:
        windows = [s.query_window(self.shift) for s in states]
        W = max(hi - lo for lo, hi in windows)
        if self.invariant:
            W = slot_rows(W)  # padded positions: computed, never attended, never read
        C = max(s.ctx_kv[0][0].shape[2] for s in states)
        B = len(states)
        q_ids = torch.full((B, W), self.tok.pad_id, dtype=torch.long, device=self.device)
        q_pos = torch.zeros(B, W, dtype=torch.long, device=self.device)
        q_mask = torch.zeros(B, W, dtype=torch.bool, device=self.device)
        c_mask = torch.zeros(B, C, dtype=torch.bool, device=self.device)
        for i, (s, (lo, hi)) in enumerate(zip(states, windows, strict=True)):
            q_ids[i, : hi - lo] = s.ids[lo:hi]
            q_pos[i, : hi - lo] = torch.arange(lo, hi, device=self.device)
            q_mask[i, : hi - lo] = True
            c_mask[i, : s.ctx_kv[0][0].shape[2]] = True
        ctx = [(stack_padded([s.ctx_kv[layer][0] for s in states], C),
                stack_padded([s.ctx_kv[layer][1] for s in states], C)) for layer in range(len(states[0].ctx_kv))]
        if self.invariant:
            lengths = ([hi - lo for lo, hi in windows], [s.ctx_kv[0][0].shape[2] for s in states])
            hidden, _ = self.model.forward_hidden(q_ids, q_pos, ctx_kv=ctx, lengths=lengths)
        else:
            uniform = bool(q_mask.all()) and bool(c_mask.all())
            hidden, _ = self.model.forward_hidden(q_ids, q_pos, key_mask=None if uniform else q_mask,
                                                  ctx_kv=ctx, ctx_key_mask=None if uniform else c_mask)
        for s in states:
            s.forwards += 1
            s.steps_since_full += 1
        self._decide_all([(s, self._align(s, hidden[i, : hi - lo]))
                          for i, (s, (lo, hi)) in enumerate(zip(states, windows, strict=True))])

    def _lm_head(self, hidden: Tensor) -> Tensor:
        """Logits [N, V] of hidden rows [N, D]; batch-invariant rows fill whole GEMM row slots
        (padded with zero rows, dropped)."""
        n = hidden.shape[0]
        if not self.invariant:
            return self.model.lm_head(hidden)
        return self.model.lm_head(F.pad(hidden, (0, 0, 0, slot_rows(n) - n)))[:n]

    def _align(self, s: DecodeState, rows: Tensor) -> Tensor:
        """Rows (hidden states or logits) of the query window [W, *] -> rows of the block."""
        want = s.block_end - s.block_start
        if self.shift and s.start + s.block_start == 0:  # the canvas' first position predicts itself
            rows = torch.cat([rows[:1], rows], dim=0)
        return rows[-want:] if rows.shape[0] >= want else rows

    def _scores(self, s: DecodeState, offsets: Tensor, logits: Tensor | None,
                hidden: Tensor | None) -> tuple[Tensor, Tensor]:
        """(token [N], confidence [N]) for the undecided span ``offsets``.

        On CUDA, greedy decoding without a healing constraint in view runs the fused LM-head +
        confidence kernel (mercury_engine/kernels): the [N, V] logits are never written. Everywhere else
        — and whenever the fused argmax lands on the mask token — logits are materialised,
        constrained and scored by the reference primitives.
        """
        opts = s.opts
        if (logits is None and hidden is not None and hidden.is_cuda and opts.temperature == 0
                and opts.allow_stop and not (s.canvas.heal_bytes and bool((offsets == 0).any()))):
            from mercury_engine.kernels import (
                fused_lm_head_confidence,  # CUDA only: Triton is heavy to import
            )

            out = fused_lm_head_confidence(hidden, self.model.output_embedding,
                                           with_entropy=opts.confidence == "neg_entropy",
                                           with_margin=opts.confidence == "margin")
            if not bool((out.token == self.tok.mask_id).any()):
                conf = {"max_prob": out.prob, "margin": out.margin,
                        "neg_entropy": None if out.entropy is None else -out.entropy}[opts.confidence]
                return out.token, conf
        if logits is None:
            logits = self._lm_head(hidden)  # [N, V]
        return predict_rows(s.spans, self.tok, offsets, logits, opts.temperature, opts.confidence,
                            opts.allow_stop, s.generator, final_length=s.span_len >= s.max_span)

    # ------------------------------------------------------------------ decisions
    def _decide_all(self, pairs: list[tuple[DecodeState, Tensor]]) -> None:
        """Commit a step for each ``(state, block-aligned hidden rows [block, D])``.

        Off CUDA the LM head of every state's undecided rows runs as one GEMM: at a block's few
        rows it is bound by reading the [V, D] weights (benchmarks/engine/batch_forward), which one
        GEMM reads once for the whole batch. On CUDA each state keeps the fused kernel.
        """
        if len(pairs) < 2 or pairs[0][1].is_cuda:
            for s, rows in pairs:
                self._decide(s, hidden=rows)
            return
        pending = [(~s.decided[s.block_start:s.block_end]).nonzero().flatten() for s, _ in pairs]
        rows = [rows[p] for (_, rows), p in zip(pairs, pending, strict=True)]
        if self.invariant:  # each state's rows in whole slots, as alone
            rows = [F.pad(r, (0, 0, 0, slot_rows(r.shape[0]) - r.shape[0])) for r in rows]
        logits = self.model.lm_head(torch.cat(rows))
        for (s, _), part, p in zip(pairs, logits.split([r.shape[0] for r in rows]), pending, strict=True):
            self._decide(s, pending=part[: p.numel()])

    def _decide(self, s: DecodeState, logits: Tensor | None = None, hidden: Tensor | None = None,
                pending: Tensor | None = None) -> None:
        """Commit this step's tokens from block-aligned ``logits`` [block, V] or ``hidden``
        [block, D], or from ``pending``: the logits [N, V] of the block's undecided rows."""
        sched = s.schedule
        b0, b1 = s.block_start, s.block_end
        undecided = (~s.decided[b0:b1]).nonzero().flatten()  # block-relative [N]
        offsets = undecided + b0  # span offsets [N] (= rows: one span)
        if pending is None and logits is not None:
            pending = logits[undecided]
        token, raw = self._scores(s, offsets, pending, None if hidden is None else hidden[undecided])  # [N], [N]
        if sched.threshold is not None:
            k, end_now = sched.min_per_step, False
        else:  # a fixed count: the block spread over steps_per_block steps (at most one per position)
            per_block = min(sched.steps_per_block or (b1 - b0), b1 - b0)
            k, end_now = commit_count(undecided.numel(), per_block - s.block_steps), per_block - s.block_steps <= 1
        chosen = commit_step(s.spans, self.tok, offsets, token, raw, self.stop_ids, k=k, end_now=end_now,
                             threshold=sched.threshold, single_line=s.opts.single_line)
        s.steps += 1
        s.block_steps += 1
        if s.callback is not None:
            s.callback(StepEvent(s.steps, offsets[chosen].tolist(), s.spans.span_ids(0).tolist(),
                                 raw[chosen].float().tolist()))
        self._advance(s)

    def _advance(self, s: DecodeState) -> None:
        if not bool(s.decided[s.block_start:s.block_end].all()):
            return
        if bool(s.decided.all()) and (s.spans.stopped[0] or s.span_len >= s.max_span):
            s.done = True
            return
        if s.block_end < s.span_len:  # next block
            s.block_start = s.block_end
        else:  # grow the span by one block
            extra = min(s.schedule.block_size, s.max_span - s.span_len)
            s.block_start = s.span_len
            s.spans.grow(extra, self.tok.mask_id)
        s.ctx_kv = None  # a new block starts with a full step
        s.block_steps = 0

    def result(self, s: DecodeState) -> InfillResult:
        span = read_span(s.spans, self.tok, 0, s.opts.single_line)
        return InfillResult(
            text=span.text, token_ids=span.token_ids, confidences=span.confidences, steps=s.steps,
            forwards=s.forwards, trimmed=s.canvas.trimmed,
            prompt_tokens=len(s.canvas.prefix_ids) + len(s.canvas.suffix_ids), stop_reason=span.stop_reason,
            timings={"decode_ms": (time.perf_counter() - s.t0) * 1000})
