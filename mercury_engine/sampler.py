"""The reference infill sampler: no cache, no cleverness — the ground truth.

It is the decoding core (mercury_engine/decode.py) on a one-span canvas, uncached: each step runs the
model on the whole canvas ``[prefix][span][suffix]``, predicts every undecided span position
and commits the most confident ones (``steps`` spread evenly; one token per step by default).
The padding-order, boundary-healing and single-line rules are the core's.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from mercury_engine.canvas import Canvas
from mercury_engine.decode import SpanState, decode_uncached, read_span
from mercury_engine.model import Transformer
from mercury_engine.options import InfillOptions
from mercury_engine.tokenizer import Tokenizer
from mercury_engine.types import CancelToken, InfillResult, StepEvent


@torch.inference_mode()
def reference_infill(model: Transformer, tok: Tokenizer, canvas: Canvas, opts: InfillOptions | None = None,
                     cancel: CancelToken | None = None,
                     callback: Callable[[StepEvent], None] | None = None) -> InfillResult:
    opts = opts or InfillOptions(sampler="reference")  # validated at the engine's entry
    t0 = time.perf_counter()
    state = SpanState.new(canvas.layout(tok.mask_id), next(model.parameters()).device)
    run = decode_uncached(model, tok, state, steps=opts.steps, temperature=opts.temperature,
                          confidence=opts.confidence, seed=opts.seed, allow_stop=opts.allow_stop,
                          single_line=opts.single_line, cancel=cancel, callback=callback)
    span = read_span(state, tok, 0, opts.single_line)
    return InfillResult(
        text=span.text, token_ids=span.token_ids, confidences=span.confidences, steps=run.steps,
        forwards=run.forwards, trimmed=canvas.trimmed,
        prompt_tokens=len(canvas.prefix_ids) + len(canvas.suffix_ids), stop_reason=span.stop_reason,
        timings={"decode_ms": (time.perf_counter() - t0) * 1000})
