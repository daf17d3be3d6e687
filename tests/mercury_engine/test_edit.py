"""mercury_engine/edit.py through ``Engine.token_scores`` / ``Engine.refill`` / ``Engine.score_spans``.

A tiny model trained inside the test on ``"p:" X "," X "."`` (the two X agree) shows that
the multi-span refill decodes the spans *jointly* (sampled at temperature > 0, two masked spans
still agree: the second is decided with the first in view) and that token scores expose a
token that no longer fits its context. The rest runs on a random tiny checkpoint.
"""

from __future__ import annotations

import random

import pytest
import torch

from mercury_engine import CancelledError, CancelToken, Engine, InvalidRequestError
from mercury_train.testing import make_tiny_checkpoint
from tests.support.toy_model import toy_vocab, train_toy

LETTERS = "abcdefgh"
SEQ_LEN = 6  # "p:a,a."


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    vocab = toy_vocab()
    rng = random.Random(0)
    batch = 128

    def make_batch():
        ids = torch.tensor([vocab.hf.encode(f"p:{x},{x}.").ids for x in (rng.choice(LETTERS) for _ in range(batch))])
        t = torch.rand(batch, 1) * 0.95 + 0.05
        masked = torch.rand(batch, SEQ_LEN) < t
        both = masked[:, 2] & masked[:, 4] & (torch.rand(batch) < 0.7)  # usually reveal one X
        side = torch.rand(batch) < 0.5
        masked[both & side, 2] = False
        masked[both & ~side, 4] = False
        masked[:, 2] |= ~masked.any(1)
        return ids, masked, None

    return train_toy(vocab, make_batch, 250, tmp_path_factory.mktemp("toy-edit"))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return Engine.load(make_tiny_checkpoint(tmp_path_factory.mktemp("tiny-edit")), device="cpu", dtype="float32")


# ---------------------------------------------------------------------------- trained toy
def test_multi_span_refill_decodes_the_spans_jointly(toy):
    """Both X masked at once: each alone is uniform over LETTERS, jointly they agree. Sampled
    fills that always agree (and vary with the seed) can only come from one canvas where the
    second span is decided with the first in view."""
    fills = []
    for seed in range(16):
        r = toy.refill("p:a,b.", [(2, 3), (4, 5)], 1, temperature=0.8, seed=seed)
        fills.append((r.spans[0].text, r.spans[1].text))
    assert all(a == b and a in LETTERS for a, b in fills), fills
    assert len({a for a, _ in fills}) >= 2, fills


def test_refill_reads_the_text_around_each_span(toy):
    for x in LETTERS:
        r = toy.refill(f"p:{x},?.", [(4, 5)], 1)
        assert r.spans[0].text == x and r.spans[0].confidence > 0.5
        r = toy.refill(f"p:?,{x}.", [(2, 3)], 1)
        assert r.spans[0].text == x


def test_token_scores_expose_a_token_that_no_longer_fits(toy):
    fits = toy.token_scores("p:c,c.", stride=3)  # X at 2 and 4 are masked in different passes
    broken = toy.token_scores("p:c,d.", stride=3)
    assert [(s.start, s.end) for s in fits] == [(i, i + 1) for i in range(SEQ_LEN)]
    assert fits[4].probability > 0.5 and fits[2].probability > 0.5
    assert broken[4].probability < 0.1 and broken[2].probability < 0.1
    (good, bad) = toy.score_spans("p:c,?.", [(4, 5, "c"), (4, 5, "d")])
    assert good > 0.5 > 0.1 > bad


# ---------------------------------------------------------------------------- random tiny model
TEXT = "def add(a, b):\n    return a + b\n\n\nresult = add(1, 2)\nprint(result)\n"


def test_token_scores_equal_one_forward_per_pass(tiny):
    """Batched passes (padding hidden by the key mask) = each pass run alone."""
    k = 3
    scores = tiny.token_scores(TEXT, stride=k)
    ids = tiny.tokenizer.encode(TEXT)
    assert [s.token_id for s in scores] == ids
    assert "".join(TEXT[s.start:s.end] for s in scores) == TEXT
    for j in range(k):
        row = torch.tensor([[tiny.tokenizer.mask_id if i % k == j else t for i, t in enumerate(ids)]])
        with torch.no_grad():
            probs = torch.softmax(tiny.model(row)[0].float(), -1)
        for i in range(j, len(ids), k):
            assert scores[i].probability == pytest.approx(float(probs[i, ids[i]]), rel=1e-4, abs=1e-6)


def test_token_scores_of_a_text_longer_than_the_context(tiny):
    text = TEXT * 12
    scores = tiny.token_scores(text, stride=8)
    assert len(scores) > tiny.context_tokens
    assert "".join(text[s.start:s.end] for s in scores) == text
    assert all(0.0 < s.probability <= 1.0 for s in scores)


def test_refill_is_deterministic_and_keeps_spans_in_input_order(tiny):
    spans = [(49, 50), (8, 9), (11, 12)]
    a = tiny.refill(TEXT, spans, 3)
    b = tiny.refill(TEXT, spans, 3)
    assert [(s.start, s.end) for s in a.spans] == spans
    assert [s.text for s in a.spans] == [s.text for s in b.spans]
    assert [s.confidence for s in a.spans] == [s.confidence for s in b.spans]
    assert a.forwards == a.steps >= 1


def test_refill_steps_commit_in_parallel(tiny):
    r = tiny.refill(TEXT, [(8, 9), (11, 12)], 4, steps=2)
    assert r.steps <= 2


def test_cancel_stops_every_edit_primitive(tiny):
    token = CancelToken()
    token.cancel()
    with pytest.raises(CancelledError):
        tiny.token_scores(TEXT, cancel=token)
    with pytest.raises(CancelledError):
        tiny.refill(TEXT, [(8, 9)], 2, cancel=token)
    with pytest.raises(CancelledError):
        tiny.score_spans(TEXT, [(8, 9, "x")], cancel=token)


@pytest.mark.parametrize("spans", [[(8, 12), (10, 14)], [(5, 5), (5, 5)], [(0, len(TEXT) + 1)], [(3, 2)],
                                   [("a", 2)]])
def test_refill_refuses_bad_spans(tiny, spans):
    with pytest.raises(InvalidRequestError):
        tiny.refill(TEXT, spans, 2)


def test_refill_trims_outer_text_and_refuses_what_cannot_fit(tiny):
    long = TEXT * 40
    r = tiny.refill(long, [(len(long) // 2, len(long) // 2 + 1)], 2)
    assert r.trimmed and r.prompt_tokens <= tiny.context_tokens
    with pytest.raises(InvalidRequestError, match="more than the context"):
        tiny.refill(long, [(1, 2), (len(long) - 2, len(long) - 1)], 2)
    assert tiny.token_scores("") == [] and tiny.refill(TEXT, [], 2).spans == []
