"""The fast sampler: exactness against the reference, batching, span growth, threshold
schedule, cancellation, and the scheduler's shared steps."""

from __future__ import annotations

import math
import threading
import time

import pytest
import torch

from mercury_engine import CancelledError, CancelToken, Engine, InfillRequest, InvalidRequestError
from mercury_engine.batching import slot_rows
from mercury_engine.canvas import build_canvas
from mercury_engine.fast_sampler import FastDecoder
from mercury_engine.options import PRESETS, InfillOptions, exact_options
from mercury_engine.quantize import RowInt8Linear
from mercury_engine.sampler import reference_infill
from mercury_train.testing import make_tiny_checkpoint

CASES = [
    ("def add(a, b):\n    ret", "\n"),
    ("for i in range(10):\n", "    print(i)\n"),
    ("", "x = 1\n"),
    ("class Point:\n    def __init__(self, x, y):\n        self.x", ""),
    ("import o", "\n\nprint(os.getcwd())\n"),
]
EXACT = exact_options()


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    path = make_tiny_checkpoint(tmp_path_factory.mktemp("tiny"), seed=3)
    eng = Engine.load(path, dtype="float32")
    yield eng
    eng.close()


def test_uncached_one_token_per_step_reproduces_reference(engine):
    dec = FastDecoder(engine.model, engine.tokenizer)
    for prefix, suffix in CASES:
        canvas = build_canvas(engine.tokenizer, prefix, suffix, 12, engine.context_tokens)
        ref = reference_infill(engine.model, engine.tokenizer, canvas, InfillOptions(sampler="reference"))
        fast = dec.run([dec.start(canvas, EXACT)])[0]
        assert fast.token_ids == ref.token_ids, (prefix, suffix)
        assert fast.text == ref.text
        assert fast.steps == ref.steps
        assert fast.confidences == pytest.approx(ref.confidences)


def test_engine_api_exact_path_matches_reference(engine):
    for prefix, suffix in CASES[:3]:
        ref = engine.infill(prefix, suffix, 10, options=InfillOptions(sampler="reference"))
        fast = engine.infill(prefix, suffix, 10, options=InfillOptions(sampler="fast", threshold=1.0, min_per_step=1, block_size=10**6, cache="none", length="off"))
        assert fast.token_ids == ref.token_ids


@pytest.mark.parametrize("preset", list(PRESETS))
def test_batched_results_equal_running_alone(engine, preset):
    reqs = [InfillRequest(p, s, 10 + 3 * i) for i, (p, s) in enumerate(CASES)]
    # Without context reuse: a reused prefix depends on what ran before (tests/mercury_engine/test_context_cache.py).
    opts = InfillOptions(sampler="fast", preset=preset, context_reuse=False)
    alone = [engine.infill(r.prefix, r.suffix, r.max_tokens, options=opts) for r in reqs]
    together = engine.infill_batch(reqs, options=opts)
    assert [r.token_ids for r in together] == [r.token_ids for r in alone]


def test_decoder_batch_of_mixed_lengths_equals_alone(engine):
    dec = FastDecoder(engine.model, engine.tokenizer)
    opts = InfillOptions(block_size=4, threshold=0.5, min_per_step=1, initial_span=4)
    canvases = [build_canvas(engine.tokenizer, p, s, 11, engine.context_tokens) for p, s in CASES]
    alone = [dec.run([dec.start(c, opts)])[0].token_ids for c in canvases]
    together = [r.token_ids for r in dec.run([dec.start(c, opts) for c in canvases])]
    assert together == alone


def test_span_grows_block_by_block_up_to_max_tokens(engine):
    """A random model never emits padding: the span must grow to max_tokens and stop there."""
    dec = FastDecoder(engine.model, engine.tokenizer)
    canvas = build_canvas(engine.tokenizer, "x = ", "", 13, engine.context_tokens)
    opts = InfillOptions(block_size=4, initial_span=4, steps=2, length="off")
    seen_spans = []
    state = dec.start(canvas, opts, callback=lambda ev: seen_spans.append(len(ev.span_ids)))
    result = dec.run([state])[0]
    assert state.span_len == canvas.span_len  # grew to max_tokens (+ the healed token)
    assert seen_spans[0] == 4 + 1 and seen_spans[-1] == canvas.span_len
    assert sorted(set(seen_spans)) == seen_spans[:1] + sorted(set(seen_spans))[1:]
    blocks = math.ceil(canvas.span_len / 4)
    assert result.steps == 2 * blocks  # two steps per block, fixed-count schedule
    assert result.stop_reason == "length"


def test_threshold_commits_many_tokens_per_step(engine):
    dec = FastDecoder(engine.model, engine.tokenizer)
    canvas = build_canvas(engine.tokenizer, "x = ", "", 15, engine.context_tokens)
    every = dec.run([dec.start(canvas, InfillOptions(block_size=8, threshold=1e-9, min_per_step=1, initial_span=0, length="off"))])[0]
    assert every.steps == math.ceil(canvas.span_len / 8)  # one step per block
    one = dec.run([dec.start(canvas, InfillOptions(block_size=8, threshold=1.0, min_per_step=1, initial_span=0, length="off"))])[0]
    assert one.steps == canvas.span_len  # nothing reaches 1.0: the top one each step


def test_min_per_step_is_a_floor_on_parallelism(engine):
    dec = FastDecoder(engine.model, engine.tokenizer)
    canvas = build_canvas(engine.tokenizer, "x = ", "", 14, engine.context_tokens)
    opts = InfillOptions(block_size=10**6, threshold=1.0, min_per_step=3, initial_span=0, length="off")
    result = dec.run([dec.start(canvas, opts)])[0]
    assert result.steps == math.ceil(canvas.span_len / 3)  # nothing reaches 1.0: three per step


def test_dual_cache_steps_recompute_only_the_block(engine):
    """Count the positions each forward embeds: after the block's full step, only the block."""
    dec = FastDecoder(engine.model, engine.tokenizer)
    canvas = build_canvas(engine.tokenizer, "def f(x):\n    return x\n" * 4, "\n", 8, engine.context_tokens)
    seen: list[int] = []
    hook = engine.model.embed_tokens.register_forward_hook(lambda m, i, o: seen.append(i[0].shape[1]))
    try:
        result = dec.run([dec.start(canvas, InfillOptions(block_size=16, steps=16, initial_span=0, length="off"))])[0]
    finally:
        hook.remove()
    rows = slot_rows if dec.invariant else (lambda n: n)  # batch-invariant CPU steps fill whole GEMM row slots
    assert seen[0] == rows(canvas.length)  # one full step when the block starts
    assert seen[1:] and all(n == rows(canvas.span_len) for n in seen[1:])  # then the block alone
    assert result.forwards == len(seen)


def test_cancel_stops_within_one_step(engine):
    token = CancelToken()
    steps: list[int] = []

    def on_step(ev):
        steps.append(ev.step)
        if ev.step == 2:
            token.cancel()

    with pytest.raises(CancelledError):
        engine.infill("x = ", "", 40, options=InfillOptions(sampler="fast", preset="quality", length="off"), cancel=token,
                      callback=on_step)
    assert steps == [1, 2]


def test_past_deadline_costs_no_step(engine):
    steps: list[int] = []
    token = CancelToken(deadline=time.monotonic() - 1)
    with pytest.raises(CancelledError, match="deadline"):
        engine.infill("x = ", "", 16, options=InfillOptions(sampler="fast"), cancel=token, callback=lambda ev: steps.append(ev.step))
    assert steps == []


def test_reference_sampler_honours_cancel(engine):
    token = CancelToken()
    token.cancel()
    with pytest.raises(CancelledError):
        engine.infill("x = ", "", 8, options=InfillOptions(sampler="reference"), cancel=token)


def test_scheduler_batches_concurrent_clients(engine):
    """Requests from several threads share denoising steps and get their own results."""
    reqs = [(p, s) for p, s in CASES]
    expected = [engine.infill(p, s, 12, options=InfillOptions(sampler="fast")).token_ids for p, s in reqs]
    before = engine.scheduler.steps_run
    out: dict[int, list[int]] = {}
    gate = threading.Barrier(len(reqs))

    def client(i: int) -> None:
        gate.wait()
        out[i] = engine.infill(reqs[i][0], reqs[i][1], 12, options=InfillOptions(sampler="fast")).token_ids

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(reqs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    shared_steps = engine.scheduler.steps_run - before
    assert [out[i] for i in range(len(reqs))] == expected
    single_steps = sum(engine.infill(p, s, 12, options=InfillOptions(sampler="fast")).steps for p, s in reqs)
    assert shared_steps < single_steps  # they shared steps (all at once: about max, not sum)


def test_cancelled_request_leaves_others_running(engine):
    dec = FastDecoder(engine.model, engine.tokenizer)
    token = CancelToken()
    a = dec.start(build_canvas(engine.tokenizer, "x = ", "", 12, engine.context_tokens), InfillOptions(preset="quality"),
                  cancel=token)
    b = dec.start(build_canvas(engine.tokenizer, "y = ", "", 12, engine.context_tokens), InfillOptions(preset="quality"))
    dec.step([a, b])
    token.cancel()
    dec.step([a, b])
    assert a.done and isinstance(a.error, CancelledError)
    while not b.done:
        dec.step([b])
    assert b.error is None and dec.result(b).steps >= 2


@pytest.mark.parametrize("bad", [
    {"preset": "turbo"}, {"threshold": 1.5}, {"threshold": 0.0}, {"block_size": 0}, {"cache": "lru"},
    {"sampler": "magic"}, {"min_per_step": 0},
])
def test_bad_options_are_refused(engine, bad):
    with pytest.raises(InvalidRequestError):
        engine.infill("x = ", "", 8, options=InfillOptions(**{"sampler": "fast", **bad}))


def test_presets_are_valid_and_ordered():
    for name in PRESETS:
        InfillOptions(preset=name).validate()
        assert InfillOptions(preset=name).schedule() == PRESETS[name]
    assert PRESETS["fast"].threshold < PRESETS["balanced"].threshold < PRESETS["quality"].threshold


def test_int8_quantized_engine_keeps_fast_equal_to_reference(tmp_path):
    path = make_tiny_checkpoint(tmp_path / "tiny", seed=5)
    eng = Engine.load(path, quantize="int8")
    try:
        assert eng.dtype == torch.float32
        for prefix, suffix in CASES[:3]:
            ref = eng.infill(prefix, suffix, 8, options=InfillOptions(sampler="reference"))
            fast = eng.infill(prefix, suffix, 8, options=InfillOptions(sampler="fast", threshold=1.0, min_per_step=1, block_size=10**6, cache="none", length="off"))
            assert fast.token_ids == ref.token_ids
    finally:
        eng.close()
    with pytest.raises(InvalidRequestError, match="quantize"):
        Engine.load(path, quantize="int4")


def test_engine_load_defaults_to_int8_on_cpu(tmp_path):
    path = make_tiny_checkpoint(tmp_path / "tiny", seed=6)
    eng = Engine.load(path)
    quantized = [m for m in eng.model.modules() if isinstance(m, RowInt8Linear)]
    assert quantized, "quantize='auto' with dtype='auto' on the CPU should give int8 linear layers"
    assert eng.infill("x = ", "", 4, options=InfillOptions(sampler="fast")).steps >= 1
    plain = Engine.load(path, dtype="float32")
    assert not [m for m in plain.model.modules() if isinstance(m, RowInt8Linear)]


def test_fixed_length_fill_decodes_exactly_max_tokens(engine):
    for prefix, suffix in CASES[:3]:
        canvas = build_canvas(engine.tokenizer, prefix, suffix, 12, engine.context_tokens)
        ref = engine.infill(prefix, suffix, 12, options=InfillOptions(sampler="reference", allow_stop=False))
        fast = engine.infill(prefix, suffix, 12, options=InfillOptions(sampler="fast", allow_stop=False, threshold=1.0, min_per_step=1, block_size=10**6, cache="none"))
        assert len(ref.token_ids) == canvas.span_len and ref.stop_reason == "length"
        assert fast.token_ids == ref.token_ids
        stop_ids = set(engine.tokenizer.stop_ids)
        grown = engine.infill(prefix, suffix, 12, options=InfillOptions(sampler="fast", preset="fast", allow_stop=False))
        assert len(grown.token_ids) == canvas.span_len and not stop_ids & set(grown.token_ids)


class _LineBreakHead(torch.nn.Module):
    """The model's LM head, with a line break made the certain guess at about a third of the
    positions (picked by a hash of the hidden state: fixed by the weights and the canvas): a
    random tiny model then writes short lines."""

    def __init__(self, inner: torch.nn.Linear, newline: int) -> None:
        super().__init__()
        self.inner, self.newline = inner, newline
        self.weight = inner.weight

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        out = self.inner(h).clone()  # [..., V]
        pick = (h.float().sum(-1) * 1e4).floor().remainder(3) == 0  # [...]
        out[..., self.newline] += 100.0 * pick
        return out


def test_single_line_stops_decoding_at_the_line_break(engine):
    """Both samplers stop once the first text line is decided (fewer steps than the full
    fill), agree exactly on the exact path, and return the full fill's first line."""
    from mercury_engine.canvas import first_line

    exact = exact_options(allow_stop=False, single_line=True)
    dec = FastDecoder(engine.model, engine.tokenizer)
    head = engine.model.lm_head
    engine.model.lm_head = _LineBreakHead(head, engine.tokenizer.encode("\n")[0])
    shorter = 0
    try:
        for prefix, suffix in CASES:
            full = engine.infill(prefix, suffix, 16, options=InfillOptions(sampler="reference", allow_stop=False))
            ref = engine.infill(prefix, suffix, 16, options=InfillOptions(sampler="reference", allow_stop=False, single_line=True))
            canvas = build_canvas(engine.tokenizer, prefix, suffix, 16, engine.context_tokens)
            fast = dec.run([dec.start(canvas, exact)])[0]
            assert (fast.token_ids, fast.steps) == (ref.token_ids, ref.steps), prefix
            heal = canvas.heal_bytes
            assert fast.text == ref.text or ref.text == first_line(engine.tokenizer, fast.text, fast.token_ids, heal)[0]
            assert ref.text == first_line(engine.tokenizer, full.text, full.token_ids, heal)[0]
            assert ref.steps <= full.steps
            shorter += ref.steps < full.steps
            preset = engine.infill(prefix, suffix, 16, options=InfillOptions(sampler="fast", allow_stop=False, single_line=True))
            assert first_line(engine.tokenizer, preset.text, preset.token_ids, heal)[0] == preset.text
    finally:
        engine.model.lm_head = head
    assert shorter, "no case ended early: the test model no longer writes line breaks"


def test_full_steps_group_canvases_of_similar_length(engine):
    """On a CPU, full steps share a forward only with canvases of similar length (padding is
    paid in full there); a decode split this way gives each request the same result as alone."""
    from types import SimpleNamespace

    from mercury_engine.fast_sampler import FULL_STEP_PAD_SHARE, full_step_groups

    states = [SimpleNamespace(ids=torch.zeros(n)) for n in (210, 100, 400, 105, 200)]
    groups = full_step_groups(states, 0.15)
    assert [[int(s.ids.numel()) for s in g] for g in groups] == [[100, 105], [200, 210], [400]]
    assert len(full_step_groups(states, math.inf)) == 1  # launch-bound devices: one padded forward
    dec = FastDecoder(engine.model, engine.tokenizer)
    assert dec.pad_share == FULL_STEP_PAD_SHARE["cpu"]
    canvases = [build_canvas(engine.tokenizer, p, s, 12, engine.context_tokens) for p, s in CASES]
    alone = [dec.run([dec.start(c, InfillOptions())])[0].token_ids for c in canvases]
    together = [r.token_ids for r in dec.run([dec.start(c, InfillOptions()) for c in canvases])]
    assert together == alone
