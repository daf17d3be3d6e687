"""The length policy (mercury_engine/length.py): candidate spans, scores and the choice in Engine._decode."""

from __future__ import annotations

import math

import pytest

from mercury_engine import Engine
from mercury_engine import length as L
from mercury_engine.canvas import Canvas
from mercury_engine.errors import InvalidRequestError
from mercury_engine.options import InfillOptions, exact_options
from mercury_train.testing import make_tiny_checkpoint

pytestmark = pytest.mark.usefixtures("one_torch_thread")

PREFIX, SUFFIX = "def add(a, b):\n    return ", "\n\nprint(add(1, 2))\n"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return Engine.load(make_tiny_checkpoint(tmp_path_factory.mktemp("tiny")), device="cpu", dtype="float32")


def test_plan_caps_dedupes_and_counts_the_healed_token():
    opts = InfillOptions(length="search", length_candidates=(9, 3, 20, 3))
    healed = Canvas([1, 2], [3], span_len=10 + 1, heal_bytes=b"\n", trimmed=False)
    assert [c.span_len for c in L.plan(healed, opts)] == [3 + 1, 9 + 1, 10 + 1]
    plain = Canvas([1, 2], [3], span_len=10, heal_bytes=b"", trimmed=False)
    assert [c.span_len for c in L.plan(plain, opts)] == [3, 9, 10]


def test_policy_applies_only_to_free_length_fast_decoding():
    assert L.applies(InfillOptions(length="search"))
    assert not L.applies(InfillOptions(length="off"))
    assert not L.applies(InfillOptions(length="search", allow_stop=False))
    assert not L.applies(InfillOptions(length="search", sampler="reference"))
    assert not L.applies(exact_options())
    sub = L.candidate_options(InfillOptions(length="search"))
    assert (sub.allow_stop, sub.initial_span, sub.length) == (False, 0, "off")


@pytest.mark.parametrize("bad", [dict(length="guess"), dict(length_candidates=()),
                                 dict(length_candidates=(4, 0)), dict(length_candidates=(2.5,))])
def test_bad_length_options_are_refused(bad):
    with pytest.raises(InvalidRequestError):
        InfillOptions(**bad).validate()


def test_search_returns_the_best_scored_fixed_length_candidate(tiny):
    cands = (2, 4, 7)
    got = tiny.infill(PREFIX, SUFFIX, 16, InfillOptions(length="search", length_candidates=cands))
    fixed = [tiny.infill(PREFIX, SUFFIX, n, L.candidate_options(InfillOptions())) for n in cands]
    canvases = L.plan(_canvas(tiny, 16), InfillOptions(length_candidates=cands))
    choice = L.choose(tiny.model, tiny.tokenizer, canvases, fixed)
    assert got.text == fixed[choice.index].text
    assert got.forwards == sum(r.forwards for r in fixed)
    assert all(math.isfinite(s) for s in choice.scores)
    assert choice.scores[choice.index] == max(choice.scores)


def test_join_score_is_a_log_probability_and_zero_without_suffix(tiny):
    canvas = _canvas(tiny, 6)
    result = tiny.infill(PREFIX, SUFFIX, 6, L.candidate_options(InfillOptions()))
    (score,) = L.join_scores(tiny.model, tiny.tokenizer, [canvas], [result])
    assert score < 0 and math.isfinite(score)
    bare = Canvas(canvas.prefix_ids, [], canvas.span_len, canvas.heal_bytes, False)
    assert L.join_scores(tiny.model, tiny.tokenizer, [bare], [result]) == [0.0]


def _canvas(engine: Engine, max_tokens: int) -> Canvas:
    from mercury_engine.canvas import build_canvas

    return build_canvas(engine.tokenizer, PREFIX, SUFFIX, max_tokens, engine.context_tokens, True)


# ---------------------------------------------------------------------------- the length prior
def test_prior_length_is_the_first_content_offset_reaching_the_level():
    import torch

    curve = torch.tensor([0.0, 0.1, 0.2, 0.45, 0.6, 0.8])  # the level is a share of the top (0.8)
    assert L.prior_length(curve, heal_extra=0, level=0.5) == 3
    assert L.prior_length(curve, heal_extra=1, level=0.5) == 2  # offset 0 is the healed token
    assert L.prior_length(curve, heal_extra=0, level=1.0) == 5
    assert L.prior_length(torch.tensor([0.9, 0.9]), heal_extra=0, level=0.5) == 1  # at least one token
    assert L.prior_length(torch.tensor([0.9, 0.9, 0.1]), heal_extra=0, shortest=2) == 2


@pytest.mark.parametrize("tail, span, want", [(b"    ", 16, L.PRIOR_MIN_LINE), (b"", 16, 1), (b"    ", 1, 1)])
def test_prior_gives_an_end_healed_line_a_token_of_text(monkeypatch, tail, span, want):
    """With end healing the fill's last token is its line break: a one-token fill would be a
    blank line, so the prior sizes it to PRIOR_MIN_LINE (within the budget); without, one token."""
    import torch

    monkeypatch.setattr(L, "stop_probs", lambda model, tok, rows: torch.linspace(1.0, 0.0, rows.shape[0]))
    canvas = Canvas([1, 2], [3], span_len=span, heal_bytes=b"", trimmed=False, tail_bytes=tail)
    model = type("M", (), {"config": type("C", (), {"logits_shift": False})()})()
    got = L.sized(model, None, canvas, torch.zeros(2 + span + 1, 4), 0)
    assert got is not None and got.span_len == want


def test_prior_applies_only_to_free_length_fast_decoding():
    assert L.prior_applies(InfillOptions(length="prior"))
    assert not L.prior_applies(InfillOptions(length="off"))
    assert not L.prior_applies(InfillOptions(length="prior", allow_stop=False))
    assert not L.prior_applies(InfillOptions(length="prior", sampler="reference"))


def _all_mask_hidden(engine: Engine, canvas: Canvas):
    import torch

    ids = torch.tensor(canvas.ids(engine.tokenizer.mask_id))[None]
    with torch.inference_mode():
        return engine.model.forward_hidden(ids)[0][0]  # [L, D]


def test_prior_decodes_the_fixed_length_fill_its_first_full_step_sizes(tiny, monkeypatch):
    monkeypatch.setattr(L, "PRIOR_MIN_TOP", 0.0)  # a random tiny model hardly predicts a stop
    canvas = _canvas(tiny, 16)
    n = L.sized(tiny.model, tiny.tokenizer, canvas, _all_mask_hidden(tiny, canvas), 0).span_len \
        - (1 if canvas.heal_bytes else 0)
    assert 1 <= n <= 16
    got = tiny.infill(PREFIX, SUFFIX, 16, InfillOptions(length="prior", context_reuse=False))
    fixed = tiny.infill(PREFIX, SUFFIX, n, L.candidate_options(InfillOptions(context_reuse=False)))
    want = L.prior_finish(tiny.tokenizer, fixed, canvas)  # as the engine finishes a prior-sized fill
    assert got.text == want.text and got.token_ids == want.token_ids
    assert got.forwards == fixed.forwards + 1  # the sizing step commits nothing
    assert got.stop_reason == ("stop" if n < 16 or want.text != fixed.text else "length")


@pytest.mark.parametrize("shift", [False, True])
def test_sized_fill_starts_on_the_sizing_steps_moved_context(tmp_path, monkeypatch, shift):
    """After the prior sizes the span, the fill's first block runs a cached step (no second
    forward over the canvas) on the sizing step's keys/values: the prefix's as they were, the
    suffix's moved left to the sized span's end (layer 0: exactly the fresh canvas' keys).
    ``shift``: a Dream-style model, whose window starts one position before the span."""
    import torch

    from mercury_engine.batching import slot_rows
    from mercury_engine.fast_sampler import FastDecoder

    monkeypatch.setattr(L, "PRIOR_MIN_TOP", 0.0)
    tiny = Engine.load(make_tiny_checkpoint(tmp_path / "tiny", logits_shift=shift), device="cpu", dtype="float32")
    dec = FastDecoder(tiny.model, tiny.tokenizer)
    canvas = _canvas(tiny, 16)
    s = dec.start(canvas, InfillOptions(length="prior", context_reuse=False))
    widths = []
    forward = tiny.model.forward_hidden
    monkeypatch.setattr(tiny.model, "forward_hidden", lambda idx, *a, **k: widths.append(idx.shape[1]) or
                        forward(idx, *a, **k))
    dec.step([s])  # the sizing step
    assert not s.prior and s.span_len < canvas.span_len and s.ctx_kv is not None
    lo, hi = s.query_window(shift)
    sized = s.canvas.ids(tiny.tokenizer.mask_id)
    with torch.inference_mode():
        _, fresh = forward(torch.tensor(sized)[None], return_kv=True)
    outside = torch.tensor([i for i in range(len(sized)) if not lo <= i < hi])
    assert s.ctx_kv[0][0].shape[2] == outside.numel()
    assert torch.allclose(s.ctx_kv[0][0], fresh[0][0][:, :, outside], atol=1e-5)
    assert torch.allclose(s.ctx_kv[0][1], fresh[0][1][:, :, outside], atol=1e-5)
    dec.step([s])  # the fill's first step: the block alone
    assert widths == [slot_rows(canvas.length), slot_rows(hi - lo)]  # batch-invariant forwards: whole row slots
    assert s.steps == 1 and s.forwards == 2


def test_prior_finish_drops_trailing_blank_lines_with_their_tokens(tiny):
    from mercury_engine.types import InfillResult

    tok = tiny.tokenizer
    ids = tok.encode("x = 1\n\n\n  \n")
    r = InfillResult(tok.decode(ids), ids, [0.5] * len(ids), 3, 3, False, 10, "length")
    canvas = Canvas([1], [2], span_len=len(ids), heal_bytes=b"", trimmed=False)
    got = L.prior_finish(tok, r, canvas)
    assert got.text == "x = 1\n" and got.stop_reason == "stop"
    assert tok.decode(got.token_ids).startswith("x = 1\n") and len(got.confidences) == len(got.token_ids)
    assert not tok.decode(got.token_ids).startswith("x = 1\n\n")
    kept = InfillResult("x = 1\n", ids, [0.5] * len(ids), 3, 3, False, 10, "length")
    assert L.prior_finish(tok, kept, canvas).stop_reason == "length"  # the whole budget: as free length
    short = Canvas([1], [2], span_len=len(ids) + 4, heal_bytes=b"", trimmed=False)
    assert L.prior_finish(tok, kept, short).stop_reason == "stop"


def test_prior_that_sees_no_end_decodes_free_length_at_no_extra_cost(tiny):
    canvas = _canvas(tiny, 16)
    assert L.sized(tiny.model, tiny.tokenizer, canvas, _all_mask_hidden(tiny, canvas), 0) is None  # stop p tiny
    got = tiny.infill(PREFIX, SUFFIX, 16, InfillOptions(length="prior", context_reuse=False))
    free = tiny.infill(PREFIX, SUFFIX, 16, InfillOptions(length="off", context_reuse=False))
    assert (got.text, got.token_ids, got.forwards) == (free.text, free.token_ids, free.forwards)
