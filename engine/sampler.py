"""The reference infill sampler: no cache, no cleverness — the ground truth.

Each step runs the model on the whole canvas ``[prefix][span][suffix]``, predicts every
undecided span position and commits the ``k`` most confident ones (``k`` spreads the remaining
positions evenly over the remaining steps; one per step by default). Two rules keep infills
well-formed:

* **padding order** — a stop token (padding/EOS) may be committed only at the leftmost
  undecided position: confidence-first unmasking otherwise commits padding everywhere first
  (it is the easiest guess) and returns empty text. Once a stop token is committed, every
  undecided position to its right becomes padding.
* **boundary healing** — the span's first token must start with the bytes of the prefix token
  removed at the cursor (see engine/canvas.py).

With ``single_line``, decoding also ends once the decided run at the span's start holds a line
break after non-blank text (``end_at_line``): the rest of the span becomes padding, so a
single-line completion costs no steps past its line.

The primitives (``predict``, ``eligible_confidence``, ``commit_count``, ``choose_commits``) are
shared with the fast sampler so both decide identically given the same logits.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from engine.canvas import Canvas, span_text
from engine.errors import InvalidRequestError
from engine.model import Transformer
from engine.tokenizer import Tokenizer
from engine.types import CancelToken, InfillResult, StepEvent

CONFIDENCE_KINDS = ("max_prob", "margin", "neg_entropy")


@dataclass(frozen=True)
class DecodeOptions:
    """How a span is decoded. ``steps=None`` means one token per step."""
    steps: int | None = None
    temperature: float = 0.0
    confidence: str = "max_prob"
    seed: int | None = None
    allow_stop: bool = True  # False: a fixed-length fill (no padding/EOS ends the span)
    single_line: bool = False  # end after the first line break that follows non-blank text

    def validate(self) -> None:
        if self.confidence not in CONFIDENCE_KINDS:
            raise InvalidRequestError(f"confidence must be one of {', '.join(CONFIDENCE_KINDS)}, "
                                      f"got {self.confidence!r}")
        if self.steps is not None and (not isinstance(self.steps, int) or self.steps <= 0):
            raise InvalidRequestError(f"steps must be a positive integer, got {self.steps!r}")
        if not (isinstance(self.temperature, int | float) and math.isfinite(self.temperature)
                and self.temperature >= 0):
            raise InvalidRequestError(f"temperature must be a finite number >= 0, got {self.temperature!r}")


# ---------------------------------------------------------------------------- primitives
def shift_logits(logits: Tensor, shift: bool) -> Tensor:
    """Dream-family checkpoints predict token i+1 at position i: realign to 'token i at i'."""
    if not shift:
        return logits
    return torch.cat([logits[..., :1, :], logits[..., :-1, :]], dim=-2)  # [..., T, V]


def predict(logits: Tensor, temperature: float, kind: str,
            generator: torch.Generator | None) -> tuple[Tensor, Tensor]:
    """logits [N, V] -> (token [N], confidence [N]). Greedy at temperature 0, else sampled."""
    logits = logits.float()
    probs = torch.softmax(logits, dim=-1)  # [N, V]
    if temperature > 0:
        tempered = torch.softmax(logits / temperature, dim=-1)  # [N, V]
        token = torch.multinomial(tempered, 1, generator=generator).squeeze(-1)  # [N]
    else:
        token = probs.argmax(dim=-1)  # [N]
    if kind == "max_prob":
        conf = probs.gather(-1, token[:, None]).squeeze(-1)  # [N]
    elif kind == "margin":
        top2 = probs.topk(2, dim=-1).values  # [N, 2]
        conf = top2[:, 0] - top2[:, 1]
    else:  # neg_entropy
        conf = (probs * torch.log(probs.clamp_min(1e-30))).sum(-1)  # [N]
    return token, conf


def constrain_logits(logits: Tensor, span_offsets: Tensor, tok: Tokenizer, heal_bytes: bytes,
                     allow_stop: bool = True) -> Tensor:
    """Forbid the mask token everywhere (and stop tokens too unless ``allow_stop``: a
    fixed-length fill) and enforce boundary healing at span offset 0.

    logits: [N, V] for the undecided span offsets ``span_offsets`` [N].
    """
    logits = logits.clone()
    logits[:, tok.mask_id] = float("-inf")
    if not allow_stop:
        logits[:, list(tok.stop_ids)] = float("-inf")
    if heal_bytes:
        first = (span_offsets == 0).nonzero().flatten()
        if first.numel():
            allowed = tok.tokens_starting_with(heal_bytes, logits.device)[: logits.shape[-1]]
            row = logits[first]
            row[:, : allowed.shape[0]][:, ~allowed] = float("-inf")
            if allowed.shape[0] < logits.shape[-1]:
                row[:, allowed.shape[0]:] = float("-inf")
            logits[first] = row
    return logits


def eligible_confidence(token: Tensor, conf: Tensor, offsets: Tensor, stop_ids: Tensor) -> Tensor:
    """Padding order: a stop token is eligible only at the leftmost undecided offset."""
    is_stop = torch.isin(token, stop_ids)  # [N]
    leftmost = offsets == offsets.min()
    return torch.where(is_stop & ~leftmost, torch.full_like(conf, float("-inf")), conf)


def commit_count(undecided: int, steps_left: int) -> int:
    return max(1, math.ceil(undecided / max(1, steps_left)))


def choose_commits(token: Tensor, conf: Tensor, offsets: Tensor, k: int, stop_ids: Tensor,
                   end_now: bool = True) -> Tensor:
    """Indices into ``offsets`` [N] of the positions to commit this step (at most ``k``, >= 1).

    The ``k`` most confident eligible predictions. When fewer than ``k`` are eligible (the rest
    predict a stop token right of undecided content) the step commits fewer — unless
    ``end_now`` (a schedule's last step, which must decide everything): then the leftmost
    position not chosen is added if it predicts a stop, ending the span there. Otherwise that
    stop is left for the next step to confirm: it was predicted while the positions to its left
    were still masks, and a model that has learned that most masked span positions are padding
    predicts padding there whatever the text before it turns out to be.
    """
    k = min(k, offsets.numel())
    chosen = conf.topk(k).indices  # [k]
    chosen = chosen[torch.isfinite(conf[chosen])]
    if chosen.numel() == 0:  # cannot happen while the leftmost is eligible; stay safe
        return offsets.argmin()[None]
    if chosen.numel() < k and end_now:
        rest = torch.ones_like(offsets, dtype=torch.bool)
        rest[chosen] = False
        idx = rest.nonzero().flatten()
        first = idx[offsets[idx].argmin()]
        if bool(torch.isin(token[first], stop_ids)):
            chosen = torch.cat([chosen, first[None]])
    return chosen


def make_generator(seed: int | None, device: torch.device) -> torch.Generator:
    g = torch.Generator(device=device)
    g.manual_seed(0 if seed is None else seed)
    return g


# ---------------------------------------------------------------------------- reference
@torch.inference_mode()
def reference_infill(model: Transformer, tok: Tokenizer, canvas: Canvas, opts: DecodeOptions,
                     cancel: CancelToken | None = None,
                     callback: Callable[[StepEvent], None] | None = None) -> InfillResult:
    opts.validate()
    t0 = time.perf_counter()
    device = next(model.parameters()).device
    shift = model.config.logits_shift
    x = torch.tensor([canvas.ids(tok.mask_id)], device=device)  # [1, L]
    start, n = canvas.span_start, canvas.span_len
    decided = torch.zeros(n, dtype=torch.bool, device=device)  # [n]
    conf_of = torch.zeros(n, device=device)  # [n]
    stop_ids = torch.tensor(tok.stop_ids, device=device)
    gen = make_generator(opts.seed, device)
    total_steps = opts.steps or n
    step = forwards = 0
    while not bool(decided.all()):
        if cancel is not None:
            cancel.check()
        logits = shift_logits(model(x), shift)[0, start:start + n]  # [n, V]
        forwards += 1
        offsets = (~decided).nonzero().flatten()  # [N]
        lg = constrain_logits(logits[offsets], offsets, tok, canvas.heal_bytes, opts.allow_stop)  # [N, V]
        token, conf = predict(lg, opts.temperature, opts.confidence, gen)  # [N], [N]
        eligible = eligible_confidence(token, conf, offsets, stop_ids)  # [N]
        k = commit_count(offsets.numel(), total_steps - step)
        chosen = choose_commits(token, eligible, offsets, k, stop_ids,
                                end_now=total_steps - step <= 1)  # [<=k]
        pos = offsets[chosen]
        x[0, start + pos] = token[chosen]
        decided[pos] = True
        conf_of[pos] = conf[chosen].float()
        step += 1
        fill_after_stop(x[0, start:start + n], decided, stop_ids, tok.pad_id)
        if opts.single_line:
            end_at_line(tok, x[0, start:start + n], decided, canvas.heal_bytes)
        if callback is not None:
            callback(StepEvent(step, pos.tolist(), x[0, start:start + n].tolist(),
                               conf[chosen].float().tolist()))
    span = x[0, start:start + n].tolist()
    text, kept, count = span_text(tok, span, canvas.heal_bytes)
    elapsed = (time.perf_counter() - t0) * 1000
    return InfillResult(
        text=text, token_ids=kept, confidences=conf_of[:count].tolist(), steps=step,
        forwards=forwards, trimmed=canvas.trimmed,
        prompt_tokens=len(canvas.prefix_ids) + len(canvas.suffix_ids),
        stop_reason="stop" if count < n else "length", timings={"decode_ms": elapsed})


def fill_after_stop(span: Tensor, decided: Tensor, stop_ids: Tensor, pad_id: int) -> None:
    """Once a stop token is committed, the undecided positions to its right become padding."""
    stops = (torch.isin(span, stop_ids) & decided).nonzero().flatten()
    if stops.numel():
        first = int(stops[0])
        rest = torch.arange(span.numel(), device=span.device) > first
        fill = rest & ~decided
        span[fill] = pad_id
        decided |= fill


def end_at_line(tok: Tokenizer, span: Tensor, decided: Tensor, heal_bytes: bytes) -> bool:
    """Single-line mode: when the decided run at the span's start holds a line break after
    non-blank text, every position after the token holding it becomes padding (decided).
    Returns True when the span is ended this way (bytes of ``heal_bytes`` are not the
    completion's and do not count)."""
    undecided = (~decided).nonzero()
    n = int(undecided[0]) if undecided.numel() else decided.numel()
    stops = set(tok.stop_ids)
    skip, text_on_line = len(heal_bytes), False
    for i, t in enumerate(span[:n].tolist()):
        if t in stops:
            return False  # a stop token ends the span already (fill_after_stop)
        piece = tok.token_bytes[t]
        if skip:
            piece, skip = piece[skip:], max(0, skip - len(piece))
        for byte in piece:
            if byte == 0x0A:
                if text_on_line:
                    span[i + 1:] = tok.pad_id
                    decided[i + 1:] = True
                    return True
            elif byte not in b" \t\r":
                text_on_line = True
    return False
