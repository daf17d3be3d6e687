"""A request's result does not depend on the requests it is batched with (a shared daemon gives
every user the same answer whatever its neighbours): decoded alone, batched with different
neighbours of other lengths, and joining a batch already in flight, it gives the same tokens."""

from __future__ import annotations

import pytest
import torch

from mercury_engine import Engine
from mercury_engine.canvas import build_canvas
from mercury_engine.fast_sampler import FastDecoder
from mercury_engine.options import PRIVATE_SCOPE, InfillOptions
from mercury_engine.quantize import RowInt8Linear
from mercury_train.testing import make_tiny_checkpoint

BODY = "".join(f"    total_{i} = values[{i}] * {i} + offset\n" for i in range(12))  # long enough to reuse context
PROMPTS = [
    ("def add(a, b):\n    ret", "\n"),
    ("def scale(values, offset):\n" + BODY + "    return tot", "\n\nprint(scale([1], 2))\n"),
    ("for i in range(10):\n", "    print(i)\n"),
    ("class Point:\n    def __init__(self, x, y):\n        self.x", "\n\n" + BODY),
    ("import o", "\n\nprint(os.getcwd())\n"),
    ("# helpers\n" + BODY.replace("total", "acc") + "def mean(xs):\n    return ", "\n"),
]
MAX_TOKENS = 24


@pytest.fixture(scope="module", params=["int8", "none"])
def engine(request, tmp_path_factory) -> Engine:
    path = make_tiny_checkpoint(tmp_path_factory.mktemp("tiny"), seed=11)
    eng = Engine.load(path, device="cpu", dtype="float32", quantize=request.param)
    yield eng
    eng.close()


def _canvases(engine: Engine):
    return [build_canvas(engine.tokenizer, p, s, MAX_TOKENS, engine.context_tokens) for p, s in PROMPTS]


def _decode(engine: Engine, canvases, opts: InfillOptions) -> list[tuple[list[int], list[float]]]:
    dec = FastDecoder(engine.model, engine.tokenizer)  # fresh: nothing cached by earlier requests
    return [(r.token_ids, r.confidences) for r in dec.run([dec.start(c, opts) for c in canvases])]


@pytest.mark.parametrize("opts", [InfillOptions(), InfillOptions(preset="quality"), InfillOptions(context_reuse=False)],
                         ids=["balanced", "quality", "no-reuse"])
def test_result_is_the_same_alone_and_with_any_neighbours(engine, opts):
    canvases = _canvases(engine)
    alone = [_decode(engine, [c], opts)[0] for c in canvases]
    assert len({tuple(ids) for ids, _ in alone}) > 1  # the prompts give different completions
    together = _decode(engine, canvases, opts)
    reversed_ = _decode(engine, canvases[::-1], opts)[::-1]
    pairs = [r for i in range(0, len(canvases), 2) for r in _decode(engine, [canvases[i], canvases[-1 - i]], opts)]
    pairs = [pairs[i] for i in _pair_order(len(canvases))]
    assert together == alone
    assert reversed_ == alone
    assert pairs == alone


def _pair_order(n: int) -> list[int]:
    """Positions in the pairwise results of canvases 0..n-1 (pairs were (0, n-1), (2, n-3), ...)."""
    order = [j for i in range(0, n, 2) for j in (i, n - 1 - i)]
    return [order.index(k) for k in range(n)]


def test_a_request_joining_a_batch_in_flight_gets_its_solo_result(engine):
    opts = InfillOptions()
    canvases = _canvases(engine)
    alone = [_decode(engine, [c], opts)[0] for c in canvases[:3]]
    dec = FastDecoder(engine.model, engine.tokenizer)
    first = dec.start(canvases[0], opts)
    dec.step([first])  # the first request is a step ahead when the others join
    late = [dec.start(c, opts) for c in canvases[1:3]]
    states = [first, *late]
    while not all(s.done for s in states):
        dec.step(states)
    assert [(r.token_ids, r.confidences) for r in map(dec.result, states)] == alone


def test_int8_rows_are_quantized_independently(engine):
    """The int8 layer's output for a row is bit-identical whatever rows share its GEMM."""
    layers = [m for m in engine.model.modules() if isinstance(m, RowInt8Linear)]
    if not layers:
        pytest.skip("float32 engine")
    lin = layers[0]
    torch.manual_seed(0)
    x = torch.randn(37, lin.in_features)
    big = torch.cat([x, 1000 * torch.randn(5, lin.in_features)])  # a neighbour with huge activations
    with torch.inference_mode():
        assert torch.equal(lin(x[:1]), lin(big)[:1])
        assert torch.equal(lin(x), lin(big)[:37])
        ref = x @ lin_weight(lin).T
        assert (lin(x) - ref).abs().max() <= 0.05 * ref.abs().max()


def lin_weight(lin: RowInt8Linear) -> torch.Tensor:
    w, _ = torch.ops.quantized.linear_unpack(lin._packed)
    return w.dequantize()


def test_context_is_reused_within_a_scope_only(engine):
    """A context computed for one scope's request is never reused by another scope's request
    (its keys/values attended to that request's text); the same scope reuses it."""
    prefix, suffix = PROMPTS[1]
    canvas = build_canvas(engine.tokenizer, prefix, suffix, MAX_TOKENS, engine.context_tokens)
    edited = build_canvas(engine.tokenizer, prefix + "al", suffix, MAX_TOKENS, engine.context_tokens)
    alone = _decode(engine, [edited], InfillOptions(context_scope="b"))[0]
    dec = FastDecoder(engine.model, engine.tokenizer)
    dec.run([dec.start(canvas, InfillOptions(context_scope="a"))])
    hits = dec.context_cache.stats.hits
    other = dec.run([dec.start(edited, InfillOptions(context_scope="b"))])[0]
    assert (other.token_ids, other.confidences) == alone
    dec.run([dec.start(canvas, InfillOptions(context_scope="a"))])
    assert dec.context_cache.stats.hits > hits + 1  # scope "a" reused its own earlier context
    private = FastDecoder(engine.model, engine.tokenizer)
    private.run([private.start(canvas, InfillOptions(context_scope=PRIVATE_SCOPE))])
    assert not private.context_cache.entries  # a private request keeps nothing for others
