"""What the fast sampler batches: one request in flight (``DecodeState``) and the rules that
keep batched steps cheap (full steps grouped by canvas length) and batch-invariant (a request's
result is the one it gets alone, whatever its neighbours). mercury_engine/fast_sampler.py steps them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import Tensor

from mercury_engine import length as _length
from mercury_engine.canvas import Canvas
from mercury_engine.context_cache import ContextCache
from mercury_engine.decode import SpanState
from mercury_engine.model import KV
from mercury_engine.options import InfillOptions, Schedule
from mercury_engine.types import CancelToken, StepEvent

# Padded positions a full step's forward may carry, as a share of its real positions, before
# the canvases are split into separate forwards. CPU: a forward over a ~200-token canvas is
# compute-bound (benchmarks/batch_forward: 8 padded HumanEval canvases cost ~1.3x their
# unpadded sum), so canvases of similar length share one forward and the rest run apart.
# Elsewhere (CUDA) a forward of this size is launch-bound: one padded forward for all.
FULL_STEP_PAD_SHARE = {"cpu": 0.15}
# Batch invariance (CPU): a request's result must not depend on the requests it shares a step
# with. Padded attention rounds differently from unpadded attention (the sum over keys changes
# with their count) and the int8 GEMMs (mercury_engine/quantize.py) turn that last-bit noise into whole
# quantization steps, so batched steps run attention row by row on unpadded keys
# (``Transformer.forward_hidden(lengths=...)``). A float32 GEMM rounds a row by where it falls
# in the kernel's row panels (1 row: GEMV; 2-3 rows and a partial last panel: other kernels), so
# each request's rows fill whole slots of GEMM_ROW_SLOT rows, at slot-aligned offsets, alone or
# batched (the LM head; and every layer when the weights are float32). int8 layers are exact
# per row anyway (mercury_engine/quantize.py). On CUDA one padded launch is cheapest and invariance is
# not promised.
BATCH_INVARIANT = {"cpu": True}
GEMM_ROW_SLOT = 16


@dataclass
class DecodeState:
    """One request in flight: a one-span ``SpanState`` plus the block, cache and counters."""
    canvas: Canvas
    opts: InfillOptions
    schedule: Schedule
    max_span: int
    spans: SpanState
    generator: torch.Generator
    cancel: CancelToken | None = None
    callback: Callable[[StepEvent], None] | None = None
    block_start: int = 0
    ctx_kv: list[KV] | None = None  # per layer, context keys/values for the current block
    # This request's own prefix keys/values from its last full step: the later blocks reuse them
    # from here, never from the shared cache, so no neighbour can evict or replace them.
    own_context: ContextCache | None = None
    steps_since_full: int = 0
    steps: int = 0
    forwards: int = 0
    block_steps: int = 0
    done: bool = False
    error: Exception | None = None  # set (and done) when cancelled or past its deadline
    prior: bool = False  # the first full step only sizes the span (the length prior, mercury_engine/length.py)
    t0: float = field(default_factory=time.perf_counter)

    @property
    def ids(self) -> Tensor:  # [L] current canvas
        return self.spans.ids

    @property
    def start(self) -> int:
        return self.spans.starts[0]

    @property
    def span_len(self) -> int:
        return self.spans.lengths[0]

    @property
    def decided(self) -> Tensor:  # [span_len] bool
        return self.spans.decided

    @property
    def block_end(self) -> int:
        return min(self.span_len, self.block_start + self.schedule.block_size)

    def needs_full(self) -> bool:
        every = self.schedule.refresh_every
        return (self.ctx_kv is None or self.opts.cache == "none"
                or (every > 0 and self.steps_since_full >= every))

    def size_span(self, canvas: Canvas | None, mask_id: int) -> bool:
        """The length prior: a fixed-length fill of ``canvas`` from here (True); None: free length."""
        self.prior = False
        if canvas is not None:
            self.canvas, self.max_span, self.ctx_kv = canvas, canvas.span_len, None
            self.spans = SpanState.new(canvas.layout(mask_id), self.spans.device)
            self.opts = _length.candidate_options(self.opts)
            self.schedule = self.opts.schedule()
        return canvas is not None

    def query_window(self, shift: bool) -> tuple[int, int]:
        """Canvas positions whose outputs decide the block (one earlier when logits shift)."""
        lo = self.start + self.block_start - (1 if shift else 0)
        return max(0, lo), self.start + self.block_end - (1 if shift else 0)

    def output_window(self, shift: bool) -> tuple[int, int]:
        """Canvas positions whose outputs a full step reads: the block's, or the whole span's
        while the length prior sizes it (the same first position)."""
        lo, hi = self.query_window(shift)
        return (lo, self.start + self.span_len - (1 if shift else 0)) if self.prior else (lo, hi)


def full_step_groups(states: list[DecodeState], pad_share: float) -> list[list[DecodeState]]:
    """``states`` (all needing a full step) split into forwards: by canvas length, a group
    grows while its padding stays within ``pad_share`` of its real positions."""
    groups: list[list[DecodeState]] = []
    real = 0
    for s in sorted(states, key=lambda s: int(s.ids.numel())):
        n = int(s.ids.numel())
        if groups and n * (len(groups[-1]) + 1) <= (1 + pad_share) * (real + n):
            groups[-1].append(s)
            real += n
        else:
            groups.append([s])
            real = n
    return groups


def slot_rows(n: int) -> int:
    """``n`` rounded up to whole GEMM row slots."""
    return -(-n // GEMM_ROW_SLOT) * GEMM_ROW_SLOT
