"""Edit primitives for next-edit prediction: score every token, refill several spans jointly.

No editor concepts: text in, text and numbers out.

* ``token_scores`` — how likely each token of a text is *when it is masked*, given everything
  around it. Masking every token alone costs one forward per token; instead pass ``j`` of
  ``stride`` masks every token ``i`` with ``i % stride == j`` and the ``stride`` passes run as one
  batched forward (padded rows hidden by the model's key mask). Texts longer than the context
  are scored in overlapping windows; each token is read from the window where it is farthest
  from an edge.
* ``refill`` — several character spans of one text masked at once on one canvas
  ``[seg0][MASK x n0][seg1][MASK x n1]...[segN]`` (mercury_engine/canvas.py ``layout_spans``) and
  decoded jointly by the decoding core (mercury_engine/decode.py ``decode_uncached``: one commit rule,
  boundary healing and padding order per span): what is decided in one span is seen by every
  other span at the next step.
* ``score_spans`` — the model's confidence in a given replacement text at a span: the
  replacement's tokens all masked, geometric mean of their probabilities (one batched forward).

All three check a ``CancelToken`` between forwards and are deterministic at temperature 0.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

from mercury_engine.canvas import REFILL_SUFFIX_SHARE, check_context, fit_context, heal_boundary, layout_spans
from mercury_engine.decode import SpanState, decode_uncached, read_span, shift_logits
from mercury_engine.errors import InvalidRequestError
from mercury_engine.model import Transformer
from mercury_engine.options import InfillOptions
from mercury_engine.tokenizer import Tokenizer
from mercury_engine.types import CancelToken

ROWS_PER_FORWARD = 16  # rows batched into one forward (token_scores, score_spans)
WINDOW_MARGIN_FRACTION = 8  # token_scores: 1/8 of a window on each side is context only


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
    check_context(context_tokens)
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
    opts = InfillOptions(sampler="reference", steps=steps, temperature=temperature, seed=seed, heal=heal)
    opts.validate()
    lay = layout_spans(tok, text, checked, budgets, context_tokens, heal)
    state = SpanState.new(lay, next(model.parameters()).device)
    run = decode_uncached(model, tok, state, steps=steps, temperature=temperature, confidence=opts.confidence,
                          seed=seed, cancel=cancel)
    fills = []
    for i, (start, end) in enumerate(checked):
        span = read_span(state, tok, i)
        confs = span.confidences
        fills.append(SpanFill(start, end, span.text, sum(confs) / len(confs) if confs else 0.0, confs,
                              span.stop_reason))
    return RefillResult(fills, run.steps, run.forwards, lay.trimmed, lay.prompt_tokens,
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
        # re-tokenize the prefix's last token with the new text (as boundary healing does)
        healed, head_bytes = heal_boundary(tok, pre)
        head = head_bytes.decode("utf-8", errors="ignore")
        if head_bytes and head.encode("utf-8") == head_bytes:
            pre = healed
        else:
            head = ""
        target = tok.encode(head + new) if head + new else []
        suf = tok.encode(text[e:]) if e < len(text) else []
        room = context_tokens - len(target)
        if room < 0 or not target:
            rows.append([tok.mask_id])
            reads.append((0, []))
            continue
        pre, suf = fit_context(pre, suf, room, REFILL_SUFFIX_SHARE)
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
