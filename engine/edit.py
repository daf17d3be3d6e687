"""Edit primitives for next-edit prediction: score every token, refill several spans jointly.

No editor concepts: text in, text and numbers out.

* ``token_scores`` — how likely each token of a text is *when it is masked*, given everything
  around it. Masking every token alone costs one forward per token; instead pass ``j`` of
  ``stride`` masks every token ``i`` with ``i % stride == j`` and the ``stride`` passes run as one
  batched forward (padded rows hidden by the model's key mask). Texts longer than the context
  are scored in overlapping windows; each token is read from the window where it is farthest
  from an edge.
* ``refill`` — several character spans of one text masked at once on one canvas
  ``[seg0][MASK x n0][seg1][MASK x n1]...[segN]`` and decoded jointly with the reference
  sampler's primitives (``predict``, ``constrain_logits`` with boundary healing per span,
  ``eligible_confidence``: padding order per span, ``commit_count``): what is decided in one span
  is seen by every other span at the next step.
* ``score_spans`` — the model's confidence in a given replacement text at a span: the
  replacement's tokens all masked, geometric mean of their probabilities (one batched forward).

All three check a ``CancelToken`` between forwards and are deterministic at temperature 0.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

from engine.canvas import span_text
from engine.errors import InvalidRequestError
from engine.model import Transformer
from engine.sampler import (
    commit_count,
    constrain_logits,
    eligible_confidence,
    fill_after_stop,
    make_generator,
    predict,
    shift_logits,
)
from engine.tokenizer import Tokenizer
from engine.types import CancelToken

ROWS_PER_FORWARD = 16  # rows batched into one forward (token_scores, score_spans)
WINDOW_MARGIN_FRACTION = 8  # token_scores: 1/8 of a window on each side is context only
MIN_CONTEXT_TOKENS = 8


@dataclass(frozen=True)
class TokenScore:
    start: int  # character offsets of the token in the text
    end: int
    token_id: int
    probability: float  # p(token | everything else, token masked with every stride-th neighbour)


@dataclass
class SpanFill:
    start: int  # the character span of the input text that was refilled
    end: int
    text: str
    confidence: float  # mean max-prob confidence of the kept tokens (0.0 when empty)
    token_confidences: list[float] = field(default_factory=list)
    stop_reason: str = "stop"  # "stop" (padding ended it) or "length"


@dataclass
class RefillResult:
    spans: list[SpanFill]
    steps: int
    forwards: int
    trimmed: bool  # text outside the spans was cut to fit the context
    prompt_tokens: int
    timings: dict[str, float] = field(default_factory=dict)


# ---------------------------------------------------------------------------- helpers
def _device(model: Transformer) -> torch.device:
    return next(model.parameters()).device


def _char_offsets(tok: Tokenizer, text: str, ids: list[int]) -> list[tuple[int, int]]:
    """Character (code point) span of every token of ``text`` (byte-level vocabularies)."""
    data = text.encode("utf-8")
    char_of_byte: list[int] = []
    for ci, ch in enumerate(text):
        char_of_byte.extend([ci] * len(ch.encode("utf-8")))
    char_of_byte.append(len(text))
    out, b = [], 0
    table = tok.token_bytes
    for t in ids:
        n = len(table[t]) if 0 <= t < len(table) else 0
        e = min(b + n, len(data))
        cs = char_of_byte[min(b, len(data))]
        ce = char_of_byte[e - 1] + 1 if e > b else cs
        out.append((cs, ce))
        b = e
    return out


def _check_cancel(cancel: CancelToken | None) -> None:
    if cancel is not None:
        cancel.check()


def _forward_rows(model: Transformer, rows: list[list[int]], pad_id: int) -> Tensor:
    """Logits [B, T, V] of rows of different lengths (right-padded, padding hidden)."""
    device = _device(model)
    t = max(len(r) for r in rows)
    ids = torch.full((len(rows), t), pad_id, dtype=torch.long, device=device)  # [B, T]
    keep = torch.zeros(len(rows), t, dtype=torch.bool, device=device)  # [B, T]
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r, device=device)
        keep[i, : len(r)] = True
    key_mask = None if bool(keep.all()) else keep
    return shift_logits(model(ids, key_mask=key_mask), model.config.logits_shift)  # [B, T, V]


# ---------------------------------------------------------------------------- token scores
@torch.inference_mode()
def token_scores(model: Transformer, tok: Tokenizer, text: str, stride: int, context_tokens: int,
                 cancel: CancelToken | None = None) -> list[TokenScore]:
    if not isinstance(text, str):
        raise InvalidRequestError("text must be a string")
    if not isinstance(stride, int) or stride <= 0:
        raise InvalidRequestError(f"stride must be a positive integer, got {stride!r}")
    if context_tokens < MIN_CONTEXT_TOKENS:
        raise InvalidRequestError(f"context limit {context_tokens} is too small")
    ids = tok.encode(text) if text else []
    if not ids:
        return []
    offsets = _char_offsets(tok, text, ids)
    n, w = len(ids), context_tokens
    margin = w // WINDOW_MARGIN_FRACTION if n > w else 0
    step = max(1, w - 2 * margin)
    # (window start, first token read, end of tokens read) for each window
    windows: list[tuple[int, int, int]] = []
    start = 0
    while True:
        end = min(n, start + w)
        lo = 0 if start == 0 else start + margin
        hi = n if end == n else end - margin
        windows.append((start, lo, hi))
        if end == n:
            break
        start += step
    jobs: list[tuple[list[int], int, list[int]]] = []  # (row ids, window start, positions read)
    for ws, lo, hi in windows:
        seg = ids[ws:ws + w]
        for j in range(min(stride, len(seg))):
            masked = [p for p in range(len(seg)) if p % stride == j]
            read = [p for p in masked if lo <= ws + p < hi]
            if not read:
                continue
            row = list(seg)
            for p in masked:
                row[p] = tok.mask_id
            jobs.append((row, ws, read))
    probs = [0.0] * n
    for b in range(0, len(jobs), ROWS_PER_FORWARD):
        _check_cancel(cancel)
        chunk = jobs[b:b + ROWS_PER_FORWARD]
        logits = _forward_rows(model, [r for r, _, _ in chunk], tok.pad_id)  # [B, T, V]
        for i, (_, ws, read) in enumerate(chunk):
            pos = torch.tensor(read, device=logits.device)
            target = torch.tensor([ids[ws + p] for p in read], device=logits.device)
            p = torch.softmax(logits[i, pos].float(), dim=-1)  # [R, V]
            got = p.gather(-1, target[:, None]).squeeze(-1).tolist()  # [R]
            for q, v in zip(read, got, strict=True):
                probs[ws + q] = v
    return [TokenScore(s, e, t, p) for (s, e), t, p in zip(offsets, ids, probs, strict=True)]


# ---------------------------------------------------------------------------- refill
def _validate_spans(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    for sp in spans:
        if (not isinstance(sp, tuple | list) or len(sp) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in sp)):
            raise InvalidRequestError(f"a span must be a (start, end) pair of integers, got {sp!r}")
        s, e = sp
        if not 0 <= s <= e <= len(text):
            raise InvalidRequestError(f"span ({s}, {e}) is outside the text (0..{len(text)})")
        out.append((s, e))
    order = sorted(range(len(out)), key=lambda i: out[i])
    for a, b in zip(order, order[1:], strict=False):
        if out[b][0] < out[a][1] or out[a] == out[b]:
            raise InvalidRequestError(f"spans {out[a]} and {out[b]} overlap")
    return out


@dataclass
class _Layout:
    ids: list[int]
    starts: list[int]  # canvas position of each span (in input order)
    lengths: list[int]
    heal: list[bytes]
    trimmed: bool


def _layout(tok: Tokenizer, text: str, spans: list[tuple[int, int]], max_tokens: list[int],
            context_tokens: int, heal: bool) -> _Layout:
    order = sorted(range(len(spans)), key=lambda i: spans[i])
    cuts = [spans[i] for i in order]
    segments = [text[: cuts[0][0]]] + [text[cuts[k][1]:cuts[k + 1][0]] for k in range(len(cuts) - 1)] \
        + [text[cuts[-1][1]:]]
    seg_ids = [tok.encode(s) if s else [] for s in segments]
    heal_of = [b""] * len(cuts)
    for k in range(len(cuts)):
        if heal and seg_ids[k]:
            last = seg_ids[k][-1]
            hb = tok.token_bytes[last] if last < len(tok.token_bytes) else b""
            if hb:
                heal_of[k] = hb
                seg_ids[k] = seg_ids[k][:-1]
    lens = [max_tokens[order[k]] + (1 if heal_of[k] else 0) for k in range(len(cuts))]
    total = sum(len(s) for s in seg_ids) + sum(lens)
    trimmed = False
    if total > context_tokens:  # cut the outer segments (text before the first / after the last span)
        inner = sum(len(s) for s in seg_ids[1:-1]) + sum(lens)
        room = context_tokens - inner
        if room < 0:
            raise InvalidRequestError(
                f"the spans and the text between them need {inner} tokens, more than the context "
                f"({context_tokens}); refill fewer or closer spans")
        first, last = seg_ids[0], seg_ids[-1]
        keep_last = min(len(last), max(room // 2, room - len(first)))
        keep_first = room - keep_last
        seg_ids[0] = first[len(first) - keep_first:] if keep_first > 0 else []
        seg_ids[-1] = last[:keep_last]
        trimmed = True
    ids: list[int] = []
    starts_sorted = []
    for k in range(len(cuts)):
        ids.extend(seg_ids[k])
        starts_sorted.append(len(ids))
        ids.extend([tok.mask_id] * lens[k])
    ids.extend(seg_ids[-1])
    starts, lengths, heals = [0] * len(cuts), [0] * len(cuts), [b""] * len(cuts)
    for k, i in enumerate(order):
        starts[i], lengths[i], heals[i] = starts_sorted[k], lens[k], heal_of[k]
    return _Layout(ids, starts, lengths, heals, trimmed)


def _choose(token: Tensor, eligible: Tensor, span_of: Tensor, offsets: Tensor, k: int,
            stop_ids: Tensor, end_now: bool = True) -> Tensor:
    """Indices of the (at most ``k``, at least one) positions to commit across all spans.

    The ``k`` most confident eligible predictions; when fewer are eligible and ``end_now`` (the
    schedule's last step), each span's leftmost undecided position that predicts a stop is added
    (it ends that span), as ``engine.sampler.choose_commits`` does for one span.
    """
    k = min(k, eligible.numel())
    finite = torch.isfinite(eligible)
    chosen = eligible.topk(k).indices  # [k]
    chosen = chosen[finite[chosen]]
    if chosen.numel() < k and end_now:
        taken = torch.zeros_like(finite)
        taken[chosen] = True
        extra = []
        for s in torch.unique(span_of).tolist():
            idx = ((span_of == s) & ~taken).nonzero().flatten()
            if idx.numel() == 0:
                continue
            first = idx[offsets[idx].argmin()]
            if bool(torch.isin(token[first], stop_ids)) and len(extra) + chosen.numel() < k:
                extra.append(first)
        if extra:
            chosen = torch.cat([chosen, torch.stack(extra)])
    if chosen.numel() == 0:
        chosen = eligible.argmax()[None]
    return chosen


@torch.inference_mode()
def refill(model: Transformer, tok: Tokenizer, text: str, spans: Sequence[tuple[int, int]],
           max_tokens_each: int | Sequence[int], context_tokens: int, *, steps: int | None = None,
           temperature: float = 0.0, seed: int | None = None, heal: bool = True,
           cancel: CancelToken | None = None) -> RefillResult:
    t0 = time.perf_counter()
    if not isinstance(text, str):
        raise InvalidRequestError("text must be a string")
    checked = _validate_spans(text, spans)
    if not checked:
        return RefillResult([], 0, 0, False, 0, {"total_ms": 0.0})
    budgets = [max_tokens_each] * len(checked) if isinstance(max_tokens_each, int) else list(max_tokens_each)
    if len(budgets) != len(checked) or not all(isinstance(b, int) and b > 0 for b in budgets):
        raise InvalidRequestError("max_tokens_each must be a positive integer (or one per span)")
    if steps is not None and (not isinstance(steps, int) or steps <= 0):
        raise InvalidRequestError(f"steps must be a positive integer, got {steps!r}")
    if not (isinstance(temperature, int | float) and math.isfinite(temperature) and temperature >= 0):
        raise InvalidRequestError(f"temperature must be a finite number >= 0, got {temperature!r}")
    lay = _layout(tok, text, checked, budgets, context_tokens, heal)
    device = _device(model)
    x = torch.tensor([lay.ids], device=device)  # [1, L]
    pos = torch.cat([torch.arange(s, s + n) for s, n in zip(lay.starts, lay.lengths, strict=True)]).to(device)  # [P]
    span_of = torch.cat([torch.full((n,), i) for i, n in enumerate(lay.lengths)]).to(device)  # [P]
    offset_of = torch.cat([torch.arange(n) for n in lay.lengths]).to(device)  # [P]
    decided = torch.zeros(pos.numel(), dtype=torch.bool, device=device)  # [P]
    conf_of = torch.zeros(pos.numel(), device=device)  # [P]
    stop_ids = torch.tensor(tok.stop_ids, device=device)
    gen = make_generator(seed, device)
    total_steps = steps or pos.numel()
    step = forwards = 0
    while not bool(decided.all()):
        _check_cancel(cancel)
        logits = shift_logits(model(x), model.config.logits_shift)[0]  # [L, V]
        forwards += 1
        und = (~decided).nonzero().flatten()  # [N] indices into pos
        lg = logits[pos[und]]  # [N, V]
        for i in torch.unique(span_of[und]).tolist():  # mask token forbidden, healing per span
            rows = (span_of[und] == i).nonzero().flatten()
            lg[rows] = constrain_logits(lg[rows], offset_of[und][rows], tok, lay.heal[i])
        token, conf = predict(lg, temperature, "max_prob", gen)  # [N], [N]
        eligible = torch.empty_like(conf)
        for i in torch.unique(span_of[und]).tolist():  # padding order per span
            rows = (span_of[und] == i).nonzero().flatten()
            eligible[rows] = eligible_confidence(token[rows], conf[rows], offset_of[und][rows], stop_ids)
        k = commit_count(und.numel(), total_steps - step)
        chosen = _choose(token, eligible, span_of[und], offset_of[und], k, stop_ids,
                         end_now=total_steps - step <= 1)
        at = und[chosen]
        x[0, pos[at]] = token[chosen]
        decided[at] = True
        conf_of[at] = conf[chosen].float()
        step += 1
        for i, (s, n) in enumerate(zip(lay.starts, lay.lengths, strict=True)):
            sel = span_of == i
            d = decided[sel].clone()
            fill_after_stop(x[0, s:s + n], d, stop_ids, tok.pad_id)
            decided[sel] = d
    fills = []
    for i, (s, n) in enumerate(zip(lay.starts, lay.lengths, strict=True)):
        span_ids = x[0, s:s + n].tolist()
        out, kept, count = span_text(tok, span_ids, lay.heal[i])
        confs = conf_of[span_of == i][:count].tolist()
        fills.append(SpanFill(checked[i][0], checked[i][1], out, sum(confs) / len(confs) if confs else 0.0,
                              confs, "stop" if count < n else "length"))
    prompt = len(lay.ids) - sum(lay.lengths)
    return RefillResult(fills, step, forwards, lay.trimmed, prompt,
                        {"total_ms": (time.perf_counter() - t0) * 1000})


# ---------------------------------------------------------------------------- scoring
@torch.inference_mode()
def score_spans(model: Transformer, tok: Tokenizer, text: str,
                candidates: Sequence[tuple[int, int, str]], context_tokens: int,
                cancel: CancelToken | None = None) -> list[float]:
    """For each ``(start, end, new_text)``: the geometric-mean probability of ``new_text``'s tokens
    at ``text[start:end]``, all of them masked, the rest of ``text`` visible (one row each)."""
    if not isinstance(text, str):
        raise InvalidRequestError("text must be a string")
    rows: list[list[int]] = []
    reads: list[tuple[int, list[int]]] = []
    for cand in candidates:
        if not (isinstance(cand, tuple | list) and len(cand) == 3 and isinstance(cand[2], str)):
            raise InvalidRequestError(f"a candidate must be (start, end, text), got {cand!r}")
        s, e, new = cand
        _validate_spans(text, [(s, e)])
        pre = tok.encode(text[:s]) if s else []
        head = ""
        if pre:  # re-tokenize the prefix's last token with the new text (as boundary healing does)
            head_bytes = tok.token_bytes[pre[-1]] if pre[-1] < len(tok.token_bytes) else b""
            head = head_bytes.decode("utf-8", errors="ignore")
            if head_bytes and head.encode("utf-8") == head_bytes:
                pre = pre[:-1]
            else:
                head = ""
        target = tok.encode(head + new) if head + new else []
        suf = tok.encode(text[e:]) if e < len(text) else []
        room = context_tokens - len(target)
        if room < 0 or not target:
            rows.append([tok.mask_id])
            reads.append((0, []))
            continue
        keep_suf = min(len(suf), max(room // 2, room - len(pre)))
        keep_pre = room - keep_suf
        pre = pre[len(pre) - keep_pre:] if keep_pre > 0 else []
        suf = suf[:keep_suf]
        rows.append(pre + [tok.mask_id] * len(target) + suf)
        reads.append((len(pre), target))
    out: list[float] = []
    for b in range(0, len(rows), ROWS_PER_FORWARD):
        _check_cancel(cancel)
        chunk = rows[b:b + ROWS_PER_FORWARD]
        logits = _forward_rows(model, chunk, tok.pad_id)  # [B, T, V]
        for i in range(len(chunk)):
            start, target = reads[b + i]
            if not target:
                out.append(0.0)
                continue
            lp = torch.log_softmax(logits[i, start:start + len(target)].float(), dim=-1)  # [n, V]
            got = lp.gather(-1, torch.tensor(target, device=lp.device)[:, None]).squeeze(-1)  # [n]
            out.append(float(torch.exp(got.mean())))
    return out
