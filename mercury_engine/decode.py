"""The one span-decoding core: N spans of a canvas, one commit rule, one uncached loop.

Every decoder is this core:

* the reference sampler (mercury_engine/sampler.py) is ``decode_uncached`` on a one-span canvas, one
  token per step unless ``steps``;
* the fast sampler (mercury_engine/fast_sampler.py) feeds the same ``predict_rows`` / ``commit_step``
  from its cached, block-wise forwards, with a confidence threshold and span growth;
* next-edit refill (mercury_engine/edit.py) is ``decode_uncached`` on a canvas with several spans.

Rules (all per span):

* **padding order** — a stop token (padding/EOS) may be committed only at a span's leftmost
  undecided position (``eligible_confidence``): confidence-first unmasking otherwise commits
  padding everywhere first (it is the easiest guess). Once a stop token is committed, every
  undecided position to its right becomes padding (``fill_after_stop``).
* **boundary healing** — a span's first token must start with the bytes healed off the text
  before it (mercury_engine/canvas.py; ``constrain_logits``).
* **end healing** — a fixed-length fill whose suffix had its indentation healed off ends with a
  token ending in a line break plus that indentation (mercury_engine/canvas.py; ``constrain_tail``);
  the indentation is stripped from the span's text.
* **single line** — with ``single_line``, a span ends once its decided run from the start holds
  a line break after non-blank text (``end_at_line``); ``read_span`` cuts inside that token.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import Tensor

from mercury_engine.canvas import SpanLayout, first_line, span_text, strip_tail
from mercury_engine.model import Transformer
from mercury_engine.tokenizer import Tokenizer
from mercury_engine.types import CancelToken, StepEvent

ENTROPY_FLOOR = 1e-30  # probabilities are clamped here before log(): 0 * log(0) counts as 0


# ---------------------------------------------------------------------------- predictions
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
    # A temperature under float32's smallest normal number is 0 once it meets the logits, and
    # tempering by it is the greedy choice anyway.
    if temperature >= torch.finfo(torch.float32).tiny:
        # Shifted by the row maximum first: a tiny temperature then sends the other logits to
        # -inf instead of overflowing the largest one to inf (softmax(inf) is nan).
        shifted = logits - logits.amax(dim=-1, keepdim=True)  # [N, V], <= 0
        tempered = torch.softmax(shifted / temperature, dim=-1)  # [N, V]
        token = torch.multinomial(tempered, 1, generator=generator).squeeze(-1)  # [N]
    else:
        token = probs.argmax(dim=-1)  # [N]
    if kind == "max_prob":
        conf = probs.gather(-1, token[:, None]).squeeze(-1)  # [N]
    elif kind == "margin":
        top2 = probs.topk(2, dim=-1).values  # [N, 2]
        conf = top2[:, 0] - top2[:, 1]
    else:  # neg_entropy
        conf = (probs * torch.log(probs.clamp_min(ENTROPY_FLOOR))).sum(-1)  # [N]
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


def constrain_tail(logits: Tensor, tok: Tokenizer, tail: bytes) -> Tensor:
    """End healing: rows [N, V] may only pick a token ending in a line break plus ``tail``."""
    allowed = tok.tokens_ending_with(b"\n" + tail, logits.device)[: logits.shape[-1]]  # [V']
    out = logits.clone()
    out[:, : allowed.shape[0]][:, ~allowed] = float("-inf")
    out[:, allowed.shape[0]:] = float("-inf")
    return out


def make_generator(seed: int | None, device: torch.device) -> torch.Generator:
    g = torch.Generator(device=device)
    g.manual_seed(0 if seed is None else seed)
    return g


# ---------------------------------------------------------------------------- the commit rule
def eligible_confidence(token: Tensor, conf: Tensor, offsets: Tensor, stop_ids: Tensor,
                        span_of: Tensor | None = None) -> Tensor:
    """Padding order: a stop token is eligible only at its span's leftmost undecided offset."""
    is_stop = torch.isin(token, stop_ids)  # [N]
    if span_of is None:
        leftmost = offsets == offsets.min()
    else:
        first = torch.full((int(span_of.max()) + 1,), offsets.numel() + int(offsets.max()) + 1,
                           dtype=offsets.dtype, device=offsets.device)
        first = first.scatter_reduce(0, span_of, offsets, reduce="amin")  # [S]
        leftmost = offsets == first[span_of]
    return torch.where(is_stop & ~leftmost, torch.full_like(conf, float("-inf")), conf)


def commit_count(undecided: int, steps_left: int) -> int:
    """Commits this step when ``undecided`` positions are spread evenly over ``steps_left``."""
    return max(1, math.ceil(undecided / max(1, steps_left)))


def choose_commits(token: Tensor, conf: Tensor, offsets: Tensor, k: int, stop_ids: Tensor,
                   end_now: bool = True, span_of: Tensor | None = None) -> Tensor:
    """Indices into ``offsets`` [N] of the positions to commit this step (at most ``k``, >= 1).

    The ``k`` most confident eligible predictions (``conf`` is -inf where not eligible). When
    fewer than ``k`` are eligible (the rest predict a stop token right of undecided content)
    the step commits fewer — unless ``end_now`` (a schedule's last step, which must decide
    everything): then each span's leftmost position not chosen is added if it predicts a
    stop, ending that span there. Otherwise that stop is left for the next step to confirm:
    it was predicted while the positions to its left were still masks, and a model that has
    learned that most masked span positions are padding predicts padding there whatever the
    text before it turns out to be. ``span_of`` [N] names each position's span (default: one).
    """
    k = min(k, offsets.numel())
    chosen = conf.topk(k).indices  # [k]
    chosen = chosen[torch.isfinite(conf[chosen])]
    if chosen.numel() < k and end_now:
        rest = torch.ones_like(offsets, dtype=torch.bool)
        rest[chosen] = False
        spans = torch.zeros_like(offsets) if span_of is None else span_of
        extra = []
        for s in torch.unique(spans[rest]).tolist():
            idx = (rest & (spans == s)).nonzero().flatten()
            first = idx[offsets[idx].argmin()]
            if bool(torch.isin(token[first], stop_ids)) and chosen.numel() + len(extra) < k:
                extra.append(first)
        if extra:
            chosen = torch.cat([chosen, torch.stack(extra)])
    if chosen.numel() == 0:  # cannot happen while a leftmost position is eligible; stay safe
        chosen = conf.argmax()[None]
    return chosen


# ---------------------------------------------------------------------------- span state
@dataclass
class SpanState:
    """The spans of one canvas under decoding. Rows: the spans' positions, span after span."""
    ids: Tensor  # [L] the canvas (mask id where undecided)
    starts: list[int]  # canvas position of each span
    lengths: list[int]
    heal: list[bytes]
    decided: Tensor  # [P] bool
    conf: Tensor  # [P] confidence of each committed token
    stopped: list[bool] = field(default_factory=list)  # per span: a stop token or line end ended it
    tail: list[bytes] = field(default_factory=list)  # per span: suffix indentation healed off (b"" = none)

    pos: Tensor = field(init=False)  # [P] canvas position of each row
    span_of: Tensor = field(init=False)  # [P] span of each row
    offset_of: Tensor = field(init=False)  # [P] offset of each row in its span

    def __post_init__(self) -> None:
        self._index()

    @classmethod
    def new(cls, layout: SpanLayout, device: torch.device) -> SpanState:
        p = sum(layout.lengths)
        return cls(torch.tensor(layout.ids, device=device), list(layout.starts), list(layout.lengths),
                   list(layout.heal), torch.zeros(p, dtype=torch.bool, device=device),
                   torch.zeros(p, device=device), [False] * len(layout.lengths),
                   list(layout.tail) or [b""] * len(layout.lengths))

    def _index(self) -> None:
        dev = self.ids.device
        pairs = list(zip(self.starts, self.lengths, strict=True))
        self.pos = torch.cat([torch.arange(s, s + n, device=dev) for s, n in pairs])
        self.span_of = torch.cat([torch.full((n,), i, device=dev) for i, n in enumerate(self.lengths)])
        self.offset_of = torch.cat([torch.arange(n, device=dev) for n in self.lengths])

    @property
    def device(self) -> torch.device:
        return self.ids.device

    def row0(self, i: int) -> int:
        return sum(self.lengths[:i])

    def span_ids(self, i: int) -> Tensor:
        """A view of span ``i``'s tokens in the canvas (writes go through)."""
        return self.ids[self.starts[i]:self.starts[i] + self.lengths[i]]

    def grow(self, extra: int, mask_id: int) -> None:
        """One-span canvases: append ``extra`` masks to the span (the fast sampler's growth)."""
        cut = self.starts[0] + self.lengths[0]
        masks = torch.full((extra,), mask_id, dtype=self.ids.dtype, device=self.device)
        self.ids = torch.cat([self.ids[:cut], masks, self.ids[cut:]])
        self.decided = torch.cat([self.decided, torch.zeros(extra, dtype=torch.bool, device=self.device)])
        self.conf = torch.cat([self.conf, torch.zeros(extra, device=self.device)])
        self.lengths[0] += extra
        self._index()


def predict_rows(state: SpanState, tok: Tokenizer, rows: Tensor, logits: Tensor, temperature: float,
                 kind: str, allow_stop: bool, generator: torch.Generator | None,
                 final_length: bool = True) -> tuple[Tensor, Tensor]:
    """(token [N], confidence [N]) for ``rows`` [N] from their logits [N, V]: the mask token
    (and stops unless ``allow_stop``) forbidden, healing at each span's first position and,
    in a fixed-length fill whose spans have their ``final_length``, end healing at their last."""
    span_of, offsets = state.span_of[rows], state.offset_of[rows]
    lg = constrain_logits(logits, offsets, tok, b"", allow_stop)
    for i in torch.unique(span_of[offsets == 0]).tolist():
        if state.heal[i]:
            sel = (span_of == i).nonzero().flatten()
            lg[sel] = constrain_logits(lg[sel], offsets[sel], tok, state.heal[i])
    if not allow_stop and final_length:
        for i, tail in enumerate(state.tail):
            last = ((span_of == i) & (offsets == state.lengths[i] - 1)).nonzero().flatten()
            if tail and last.numel():
                lg[last] = constrain_tail(lg[last], tok, tail)
    return predict(lg, temperature, kind, generator)


def commit_step(state: SpanState, tok: Tokenizer, rows: Tensor, token: Tensor, raw: Tensor, stop_ids: Tensor,
                *, k: int, end_now: bool, threshold: float | None = None,
                single_line: bool = False) -> Tensor:
    """Commit this step's tokens among ``rows`` [N] (undecided) and return the committed rows.

    With a ``threshold`` every eligible prediction at least that confident is committed, and at
    least ``k`` (the most confident); without one, ``choose_commits``'s ``k``."""
    span_of, offsets = state.span_of[rows], state.offset_of[rows]
    conf = eligible_confidence(token, raw, offsets, stop_ids, span_of)  # [N]
    if threshold is not None:
        chosen = (torch.isfinite(conf) & (conf >= threshold)).nonzero().flatten()
        if chosen.numel() < k:  # too few above the threshold: the top ones
            chosen = choose_commits(token, conf, offsets, k, stop_ids, end_now=False, span_of=span_of)
    else:
        chosen = choose_commits(token, conf, offsets, k, stop_ids, end_now=end_now, span_of=span_of)
    at = rows[chosen]
    state.ids[state.pos[at]] = token[chosen]
    state.decided[at] = True
    state.conf[at] = raw[chosen].float()
    for i in torch.unique(span_of[chosen]).tolist():
        r0, n = state.row0(i), state.lengths[i]
        span, decided = state.span_ids(i), state.decided[r0:r0 + n]  # views: filled in place
        fill_after_stop(span, decided, stop_ids, tok.pad_id)
        ended = single_line and end_at_line(tok, span, decided, state.heal[i])
        state.stopped[i] = state.stopped[i] or ended or bool((torch.isin(span, stop_ids) & decided).any())
    return chosen


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


# ---------------------------------------------------------------------------- reading spans
@dataclass
class SpanRead:
    text: str
    token_ids: list[int]
    confidences: list[float]
    stop_reason: str  # "stop" (padding/EOS or the single line ended it) or "length"


def read_span(state: SpanState, tok: Tokenizer, i: int, single_line: bool = False) -> SpanRead:
    """Span ``i`` as text: cut at its first stop token, healed bytes stripped, and with
    ``single_line`` cut after its first text line (inside the token holding the line break)."""
    n = state.lengths[i]
    text, kept, count = span_text(tok, state.span_ids(i).tolist(), state.heal[i])
    cut = False
    if single_line:
        line, count = first_line(tok, text, kept, state.heal[i])
        cut, text = line != text, line
    text = strip_tail(text, state.tail[i])
    r0 = state.row0(i)
    return SpanRead(text, kept[:count], state.conf[r0:r0 + count].tolist(),
                    "stop" if cut or count < n else "length")


# ---------------------------------------------------------------------------- the uncached loop
@dataclass
class UncachedRun:
    steps: int
    forwards: int


@torch.inference_mode()
def decode_uncached(model: Transformer, tok: Tokenizer, state: SpanState, *, steps: int | None,
                    temperature: float, confidence: str, seed: int | None, allow_stop: bool = True,
                    single_line: bool = False, cancel: CancelToken | None = None,
                    callback: Callable[[StepEvent], None] | None = None) -> UncachedRun:
    """Decode every span of ``state``: each step runs the model on the whole canvas and commits
    ``commit_count`` positions (``steps`` spread over all spans; one per step by default).
    ``callback`` gets span offsets and span ids of the first span (one-span canvases)."""
    stop_ids = torch.tensor(tok.stop_ids, device=state.device)
    gen = make_generator(seed, state.device)
    total = steps or int(state.decided.numel())
    step = forwards = 0
    while not bool(state.decided.all()):
        if cancel is not None:
            cancel.check()
        logits = shift_logits(model(state.ids[None]), model.config.logits_shift)[0]  # [L, V]
        forwards += 1
        rows = (~state.decided).nonzero().flatten()  # [N]
        token, raw = predict_rows(state, tok, rows, logits[state.pos[rows]], temperature, confidence,
                                  allow_stop, gen)  # [N], [N]
        chosen = commit_step(state, tok, rows, token, raw, stop_ids, k=commit_count(rows.numel(), total - step),
                             end_now=total - step <= 1, single_line=single_line)
        step += 1
        if callback is not None:
            callback(StepEvent(step, state.offset_of[rows[chosen]].tolist(), state.span_ids(0).tolist(),
                               raw[chosen].float().tolist()))
    return UncachedRun(step, forwards)
