"""Length-aware decoding: the span length chosen by the model itself.

A masked diffusion model decodes a span of a length fixed in advance. Given one long span and
allowed to stop (padding/EOS), a small model fills it badly: it commits padding early or runs
on past the point where the suffix should take over. Given the true length it does much better
(benchmarks/humaneval/quality ``--oracle-length``). Two policies recover that without the oracle:

* **the length prior** (``length="prior"``, the default): the first full step of the request's
  all-mask ``max_tokens`` span (mercury_engine/fast_sampler.py) reads the model's stop probability at
  every span offset (``stop_probs``) — training pads every middle with 0..max_pad padding
  tokens, so this is the model's belief that the middle has ended there — and ``sized`` cuts
  the span at the first offset reaching ``PRIOR_LEVEL`` of the span's highest stop
  probability (``prior_length``; an end-healed span, whose fill ends in its line break, gets
  at least ``PRIOR_MIN_LINE`` tokens, not a blank line). The request then decodes a fixed-length fill of that length
  (``candidate_options``) in the same batched steps as every other request; that step commits
  nothing, and its keys/values (the suffix's moved to the shorter span's end) are the fill's
  first dual cache: the fill starts with a block step, not a second full step
  (``FastDecoder.moved_context``). When
  no offset's stop probability reaches ``PRIOR_MIN_TOP`` the model sees no end within the
  budget, and the same step goes on as a free-length span (no extra forward). On
  all 1 033 HumanEval single-line tasks the embedded model passes 3.58 % with the prior
  against 2.32 % with the oracle length (benchmarks/results/quality.json and
  quality_oracle_length.json; docs/model.md), at about the free length's p50 latency
  (benchmarks/results/length_cost.json).
* **length search** (``length="search"``, an opt-in), CAL-style: ``plan`` fans a request out
  into candidate span lengths (``InfillOptions.length_candidates``, capped at ``max_tokens``),
  each decoded as a fixed-length fill, all submitted together (the scheduler batches them);
  ``choose`` keeps the one with the best length-normalised mean log-confidence plus
  ``JOIN_WEIGHT`` times how well it joins the suffix (the mean log-probability of the suffix's
  first ``JOIN_TOKENS`` tokens, masked, given the prefix and the fill; one batched forward).
  On all 1 033 HumanEval single-line tasks it passes more (1.65 %) and matches more lines
  exactly (short ones), but its lines are further from the canonical ones than the prior's
  (edit similarity), and it costs 7.5x the free length's p50 on a CPU, where every candidate
  costs its full compute: an opt-in.

Neither applies on the exact path (``mercury_engine.options.exact_options``), for the reference sampler,
or when the caller fixed the length itself (``allow_stop=False``); ``length="off"`` is one
free-length span. With end healing (mercury_engine/canvas.py) a fixed-length fill before an indented
suffix ends with a line break plus that indentation, so each length is whole lines.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import torch
from torch import Tensor

from mercury_engine.canvas import Canvas
from mercury_engine.decode import shift_logits
from mercury_engine.model import Transformer
from mercury_engine.options import WHOLE_SPAN, InfillOptions
from mercury_engine.tokenizer import Tokenizer
from mercury_engine.types import InfillResult

# Candidate span lengths in tokens. HumanEval single-line middles run 3-18 tokens (10th-90th
# percentile, median 8) with this tokenizer: the set spans that range, denser where most lie.
DEFAULT_LENGTHS: tuple[int, ...] = (3, 5, 7, 9, 12, 16, 22)
JOIN_TOKENS = 4  # suffix tokens scored by the join term: the start of the next line and its indentation
JOIN_WEIGHT = 1.0  # weight of the join term against the mean log-confidence (chosen on benchmarks/humaneval/quality)
CONF_FLOOR = 1e-9  # confidences are clamped here before log()
BLANK_TAIL = re.compile(r"\n(?:[ \t]*\n)+\Z")  # a line break followed by blank lines, at the end
# The length prior: the span ends at the first offset where the all-mask canvas' stop probability
# reaches this share of its highest value in the span. Training pads every middle with 0..max_pad
# padding tokens, so the stop probability climbs past the true end slowly and tops out lower in a
# shorter span: on all 1 033 HumanEval single-line tasks (benchmarks/engine/length_select --prior-only)
# 0.3 of the top is the least biased rule at both the 48- and the 24-token budget (mean error -0.6
# and -3.4 tokens, within 2 tokens of the true length in 36 % and 38 %); an absolute level is not:
# the best was 0.3 at 48 tokens and 0.4 at 24.
PRIOR_LEVEL = 0.3
# Below this highest stop probability the model sees no end within the budget and the span is
# decoded free instead. The highest is 0.18 at the least on all 1 033 tasks at 48 tokens (under
# 0.15 for 2 tasks at 24): the rule is a guard for long spans, not a tuning of those figures.
PRIOR_MIN_TOP = 0.15
# With end healing (``Canvas.tail_bytes``) a fixed-length fill's last token is its line break, so
# a one-token fill is a blank line: the prior sizes such a span to at least this many tokens (its
# line break and one of text). No true HumanEval single-line middle is shorter than 2 tokens; on
# all 1 033 tasks this cut the default's blank completions from 29 to 12 (edit similarity 0.285 ->
# 0.289, the same 15 passes, on the previous weights; benchmarks/humaneval/quality).
PRIOR_MIN_LINE = 2


def applies(opts: InfillOptions) -> bool:
    """True when ``opts`` asks for length search (the fast sampler, free length)."""
    return opts.length == "search" and opts.sampler == "fast" and opts.allow_stop


def prior_applies(opts: InfillOptions) -> bool:
    """True when ``opts`` asks for the length prior (the fast sampler, free length)."""
    return opts.length == "prior" and opts.sampler == "fast" and opts.allow_stop


@torch.inference_mode()
def stop_probs(model: Transformer, tok: Tokenizer, hidden: Tensor) -> Tensor:
    """P(a stop token) at each all-masked span position: hidden rows [S, D] -> [S]."""
    logits = model.lm_head(hidden).float()  # [S, V]
    logits[:, tok.mask_id] = float("-inf")
    probs = torch.softmax(logits, dim=-1)
    return probs[:, list(tok.stop_ids)].sum(-1)


def sized(model: Transformer, tok: Tokenizer, canvas: Canvas, hidden: Tensor, first: int) -> Canvas | None:
    """The length prior: ``canvas`` (its span all masks) with the span length its stop
    probabilities pick; None when none reaches ``PRIOR_MIN_TOP`` (the model sees no end within
    the budget: the span is better decoded free, where a stop token can still end it).
    ``hidden`` [T, D]: a full step's hidden states of positions ``first``.. (rows one earlier
    predict when the logits shift; the canvas' first position predicts itself)."""
    a = canvas.span_start - first - (1 if model.config.logits_shift else 0)
    rows = hidden[max(0, a):a + canvas.span_len]  # [S, D]
    rows = torch.cat([rows[:1], rows]) if a < 0 else rows
    extra = 1 if canvas.heal_bytes else 0
    p_stop = stop_probs(model, tok, rows)  # [S]
    if float(p_stop[extra:].max()) < PRIOR_MIN_TOP:
        return None
    shortest = min(PRIOR_MIN_LINE, canvas.span_len - extra) if canvas.tail_bytes else 1
    return replace(canvas, span_len=prior_length(p_stop, extra, shortest=shortest) + extra)


def prior_length(p_stop: Tensor, heal_extra: int, level: float = PRIOR_LEVEL, shortest: int = 1) -> int:
    """The span length the prior picks (healed token excluded): the first content offset whose
    stop probability reaches ``level`` times the highest in the span, at least ``shortest``."""
    content = p_stop[heal_extra:]
    hit = (content >= level * content.max()).nonzero().flatten()
    return max(shortest, int(hit[0]) if hit.numel() else int(content.numel()))


def candidate_options(opts: InfillOptions) -> InfillOptions:
    """The options each candidate decodes with: a fixed length, all masks from the start."""
    return replace(opts, allow_stop=False, initial_span=WHOLE_SPAN, length="off")


def plan(canvas: Canvas, opts: InfillOptions) -> list[Canvas]:
    """Candidate canvases of ``canvas`` (its span is the ``max_tokens`` budget), shortest first."""
    extra = 1 if canvas.heal_bytes else 0  # the healed token is decoded inside the span
    budget = canvas.span_len - extra
    lengths = sorted({min(n, budget) for n in (opts.length_candidates or DEFAULT_LENGTHS)})
    return [replace(canvas, span_len=n + extra) for n in lengths if n > 0]


def prior_finish(tok: Tokenizer, result: InfillResult, canvas: Canvas) -> InfillResult:
    """A fill the prior sized, as a free-length span would have ended it.

    * Its trailing blank lines are dropped (the line break ending its last text line is kept):
      a fixed length past the true end is filled with line breaks, which a stop token would
      have ended; its tokens and confidences are cut to the ones that spell the text left.
    * It ends where the model put the end ("stop"), unless the prior took the whole
      ``max_tokens`` budget of ``canvas`` ("length", as a free-length span)."""
    text = BLANK_TAIL.sub("\n", result.text)
    if text != result.text:
        need, have, n = len(canvas.heal_bytes) + len(text.encode("utf-8")), 0, 0
        while n < len(result.token_ids) and have < need:
            have += len(tok.token_bytes[result.token_ids[n]])
            n += 1
        return replace(result, text=text, token_ids=result.token_ids[:n], confidences=result.confidences[:n],
                       stop_reason="stop")
    if result.stop_reason == "length" and len(result.token_ids) < canvas.span_len:
        return replace(result, stop_reason="stop")
    return result


def mean_log_confidence(result: InfillResult) -> float:
    if not result.confidences:
        return -math.inf
    return sum(math.log(max(c, CONF_FLOOR)) for c in result.confidences) / len(result.confidences)


@torch.inference_mode()
def join_scores(model: Transformer, tok: Tokenizer, canvases: list[Canvas],
                results: list[InfillResult], join_tokens: int = JOIN_TOKENS) -> list[float]:
    """Per candidate: mean log-probability of the suffix's first ``join_tokens`` tokens, masked,
    given the prefix and the candidate's fill (0.0 without a suffix). One padded forward."""
    rows, targets = [], []
    for c, r in zip(canvases, results, strict=True):
        j = min(join_tokens, len(c.suffix_ids))
        start = len(c.prefix_ids) + len(r.token_ids)
        rows.append([*c.prefix_ids, *r.token_ids, *([tok.mask_id] * j), *c.suffix_ids[j:]])
        targets.append((start, c.suffix_ids[:j]))
    device = next(model.parameters()).device
    width = max(len(r) for r in rows)
    batch = torch.full((len(rows), width), tok.pad_id, dtype=torch.long, device=device)
    key_mask = torch.zeros(len(rows), width, dtype=torch.bool, device=device)
    for i, row in enumerate(rows):
        batch[i, : len(row)] = torch.tensor(row, device=device)
        key_mask[i, : len(row)] = True
    logits = shift_logits(model(batch, key_mask=None if bool(key_mask.all()) else key_mask),
                          model.config.logits_shift)  # [B, T, V]
    scores = []
    for i, (start, want) in enumerate(targets):
        if not want:
            scores.append(0.0)
            continue
        logp = torch.log_softmax(logits[i, start:start + len(want)].float(), dim=-1)  # [j, V]
        picked = logp.gather(-1, torch.tensor(want, device=device)[:, None])  # [j, 1]
        scores.append(float(picked.mean()))
    return scores


@dataclass(frozen=True)
class Choice:
    index: int  # the chosen candidate
    scores: list[float]  # every candidate's total score


def choose(model: Transformer, tok: Tokenizer, canvases: list[Canvas], results: list[InfillResult],
           join_weight: float = JOIN_WEIGHT) -> Choice:
    """The best-scored candidate of one request (ties: the shorter)."""
    join = join_scores(model, tok, canvases, results) if join_weight else [0.0] * len(results)
    scores = [mean_log_confidence(r) + join_weight * j for r, j in zip(results, join, strict=True)]
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    return Choice(best, scores)


def merge(results: list[InfillResult], choice: Choice) -> InfillResult:
    """The chosen candidate's result, costed with every candidate's forwards."""
    chosen = results[choice.index]
    return replace(chosen, steps=max(r.steps for r in results), forwards=sum(r.forwards for r in results))
