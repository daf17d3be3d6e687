"""Typed decoding options and the one preset table (torch-free: the daemon imports it).

``InfillOptions()`` is the product path: the fast sampler with the balanced preset. The
reference sampler (uncached, one token per step unless ``steps``) runs only when asked for.
Fields left ``None`` take the preset's value. The options are one shape from the caller to the
samplers: the daemon builds them from its settings (``mercury_lsp.config.Settings.infill_options``)
and sends them across its backend seam as they are; the engine validates them once, at its
entry (``Engine.infill_batch`` calls ``resolve()``: validated, every schedule field filled in),
and the scheduler and samplers below take them as resolved, never validating again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Literal, get_args

from mercury_engine.errors import InvalidRequestError

Sampler = Literal["fast", "reference"]
Preset = Literal["fast", "balanced", "quality"]
Confidence = Literal["max_prob", "margin", "neg_entropy"]
Cache = Literal["dual", "none"]
Length = Literal["prior", "search", "off"]

SAMPLERS: tuple[str, ...] = get_args(Sampler)
PRESET_NAMES: tuple[str, ...] = get_args(Preset)
CONFIDENCE_KINDS: tuple[str, ...] = get_args(Confidence)
CACHE_MODES: tuple[str, ...] = get_args(Cache)
LENGTH_POLICIES: tuple[str, ...] = get_args(Length)
DEFAULT_SAMPLER: Sampler = "fast"
DEFAULT_PRESET: Preset = "balanced"
EXACT_BLOCK = 10**6  # a block longer than any span: the exact path has one block
PRIVATE_SCOPE = ""  # InfillOptions.context_scope: no context shared with any other request


@dataclass(frozen=True)
class Schedule:
    """How the fast sampler spends steps (see mercury_engine/fast_sampler.py)."""
    block_size: int  # span positions decoded per block (left to right)
    threshold: float | None  # commit every prediction at least this confident; None: fixed count
    min_per_step: int  # with a threshold: at least this many commits per step (the most confident)
    initial_span: int  # masks the span starts with (grows by blocks); WHOLE_SPAN: max_tokens
    refresh_every: int  # full (cache-refreshing) step every N steps; 0: only when a block starts
    steps_per_block: int | None = None  # fixed-count schedule (threshold None); None: 1 per step


# The user's speed/quality knob: the one preset table (the daemon and the CLI read it from here).
PRESETS: dict[Preset, Schedule] = {
    "fast": Schedule(block_size=16, threshold=0.7, min_per_step=8, initial_span=16, refresh_every=0),
    "balanced": Schedule(block_size=16, threshold=0.9, min_per_step=4, initial_span=32, refresh_every=0),
    "quality": Schedule(block_size=8, threshold=0.97, min_per_step=1, initial_span=32, refresh_every=4),
}
SCHEDULE_FIELDS = tuple(f.name for f in fields(Schedule) if f.name != "steps_per_block")
WHOLE_SPAN = 0  # initial_span value: decode the whole max_tokens span from the first step


@dataclass(frozen=True)
class InfillOptions:
    """How a span is decoded. Defaults: the fast sampler, balanced preset, greedy."""
    sampler: Sampler = DEFAULT_SAMPLER
    preset: Preset = DEFAULT_PRESET  # the fast sampler's schedule (the reference has none)
    steps: int | None = None  # reference: total steps; fast: steps per block (fixed-count schedule)
    temperature: float = 0.0
    confidence: Confidence = "max_prob"
    seed: int | None = None
    heal: bool = True  # boundary healing at the cursor (mercury_engine/canvas.py)
    heal_tail: bool = True  # with heal: end healing of the suffix's indentation (mercury_engine/canvas.py)
    allow_stop: bool = True  # False: a fixed-length fill (no padding/EOS ends the span)
    single_line: bool = False  # end after the first line break that follows non-blank text
    cache: Cache = "dual"  # fast sampler: "none" runs every step on the whole canvas (exact path)
    # With the dual cache: full steps reuse the prefix keys/values of earlier requests and
    # blocks over the same leading tokens (mercury_engine/context_cache.py); False recomputes them.
    context_reuse: bool = True
    # Whose earlier requests' contexts a request may reuse: those with the same scope (a user's
    # document, an API user). A reused context was computed while attending to the earlier
    # request's text after it, so a shared daemon gives each user a scope: no user's code then
    # shapes another's completion, and a result never depends on who else is being served.
    # None: the scope shared by every request without one (a single-user process); PRIVATE_SCOPE:
    # the request reuses its own blocks' context only and keeps nothing for later requests.
    context_scope: str | None = None
    # Overrides of the preset's schedule (None: the preset's value).
    block_size: int | None = None
    threshold: float | None = None
    min_per_step: int | None = None
    initial_span: int | None = None  # WHOLE_SPAN (0): no growth, all max_tokens masks at once
    refresh_every: int | None = None
    # Length policy (mercury_engine/length.py): "prior" (the default) sizes the span from the model's stop
    # probabilities in its first full step, then decodes that fixed length (HumanEval single-line:
    # 15 tasks passed against the oracle length's 20; 17 against free length's 9 in single-line mode; no slower;
    # README, "Length-aware decoding"); "search" decodes candidate lengths as one batch and keeps the fill
    # the model scores best (an opt-in: more passes, less similar lines, 7.5x the cost); "off" lets
    # padding/EOS end one long span.
    length: Length = "prior"
    length_candidates: tuple[int, ...] | None = None  # None: mercury_engine.length.DEFAULT_LENGTHS

    def validate(self) -> None:
        _one_of("sampler", self.sampler, SAMPLERS)
        _one_of("preset", self.preset, PRESET_NAMES)
        _one_of("confidence", self.confidence, CONFIDENCE_KINDS)
        _one_of("cache", self.cache, CACHE_MODES)
        if not isinstance(self.context_reuse, bool):
            raise InvalidRequestError(f"context_reuse must be true or false, got {self.context_reuse!r}")
        if self.context_scope is not None and not isinstance(self.context_scope, str):
            raise InvalidRequestError(f"context_scope must be a string or None, got {self.context_scope!r}")
        if self.steps is not None and (not _is_int(self.steps) or self.steps <= 0):
            raise InvalidRequestError(f"steps must be a positive integer, got {self.steps!r}")
        if not (isinstance(self.temperature, int | float) and math.isfinite(self.temperature)
                and self.temperature >= 0):
            raise InvalidRequestError(f"temperature must be a finite number >= 0, got {self.temperature!r}")
        if self.block_size is not None and (not _is_int(self.block_size) or self.block_size <= 0):
            raise InvalidRequestError(f"block_size must be a positive integer, got {self.block_size!r}")
        if self.threshold is not None and not (isinstance(self.threshold, int | float)
                                               and 0.0 < self.threshold <= 1.0):
            raise InvalidRequestError(f"threshold must be in (0, 1], got {self.threshold!r}")
        if self.min_per_step is not None and (not _is_int(self.min_per_step) or self.min_per_step < 1):
            raise InvalidRequestError(f"min_per_step must be a positive integer, got {self.min_per_step!r}")
        if self.initial_span is not None and (not _is_int(self.initial_span) or self.initial_span < 0):
            raise InvalidRequestError(f"initial_span must be an integer >= 0, got {self.initial_span!r}")
        if self.refresh_every is not None and (not _is_int(self.refresh_every) or self.refresh_every < 0):
            raise InvalidRequestError(f"refresh_every must be an integer >= 0, got {self.refresh_every!r}")
        _one_of("length", self.length, LENGTH_POLICIES)
        cands = self.length_candidates
        if cands is not None and (not isinstance(cands, tuple | list) or not cands
                                  or not all(_is_int(n) and n > 0 for n in cands)):
            raise InvalidRequestError(f"length_candidates must be a non-empty tuple of positive integers, "
                                      f"got {cands!r}")

    def resolve(self) -> InfillOptions:
        """These options validated (``InvalidRequestError`` otherwise), with every schedule field
        filled in from the preset; ``steps`` keeps the fixed-count schedule (no threshold)."""
        self.validate()
        s = self.schedule()
        return replace(self, block_size=s.block_size, threshold=s.threshold, min_per_step=s.min_per_step,
                       initial_span=s.initial_span, refresh_every=s.refresh_every)

    def schedule(self) -> Schedule:
        """The fast sampler's schedule: the preset's, with this object's overrides; ``steps``
        switches to the fixed-count schedule (no threshold)."""
        base = PRESETS[self.preset]
        over = {k: getattr(self, k) for k in SCHEDULE_FIELDS if getattr(self, k) is not None}
        if self.steps is not None:
            over["threshold"], over["steps_per_block"] = None, self.steps
        return replace(base, **over)


def exact_options(**overrides) -> InfillOptions:
    """The fast sampler on its exact path (no cache, no blocks, no growth, one token per step,
    no length policy): at temperature 0 it reproduces the reference sampler."""
    base = dict(sampler="fast", cache="none", context_reuse=False, block_size=EXACT_BLOCK, steps=EXACT_BLOCK,
                initial_span=WHOLE_SPAN, length="off")
    return InfillOptions(**{**base, **overrides})


def _one_of(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise InvalidRequestError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
