"""The commit rule on its own: top-k, padding order and the end-of-schedule stop, per span."""

from __future__ import annotations

import torch

from mercury_engine.decode import choose_commits, commit_count, eligible_confidence, predict

STOP = 0
STOPS = torch.tensor([STOP])


def _t(values, dtype=torch.long):
    return torch.tensor(values, dtype=dtype)


def test_commit_count_spreads_positions_over_steps():
    assert commit_count(8, 8) == 1
    assert commit_count(8, 3) == 3
    assert commit_count(5, 0) == 5  # the last step decides everything
    assert commit_count(1, 4) == 1


def test_stop_is_eligible_only_at_the_leftmost_position_of_its_span():
    token = _t([STOP, 5, STOP, STOP, 7])
    conf = _t([0.9, 0.8, 0.95, 0.99, 0.1], torch.float)
    offsets = _t([2, 3, 4, 0, 1])
    span_of = _t([0, 0, 0, 1, 1])
    got = eligible_confidence(token, conf, offsets, STOPS, span_of)
    assert got[0] == conf[0]  # leftmost undecided of span 0
    assert got[2] == float("-inf")  # a stop right of undecided content
    assert got[3] == conf[3]  # leftmost of span 1
    assert torch.equal(got[[1, 4]], conf[[1, 4]])
    one_span = eligible_confidence(token, conf, offsets, STOPS)
    assert one_span[0] == float("-inf") and one_span[3] == conf[3]  # offsets.min() over all


def test_top_k_most_confident():
    token = _t([4, 5, 6, 7])
    conf = _t([0.1, 0.9, 0.5, 0.7], torch.float)
    chosen = choose_commits(token, conf, _t([0, 1, 2, 3]), 2, STOPS)
    assert sorted(chosen.tolist()) == [1, 3]


def test_fewer_eligible_commit_fewer_unless_the_schedule_ends():
    token = _t([4, STOP, STOP])
    conf = _t([0.2, float("-inf"), float("-inf")], torch.float)
    offsets = _t([0, 1, 2])
    mid = choose_commits(token, conf, offsets, 3, STOPS, end_now=False)
    assert mid.tolist() == [0]  # the stops wait for the next step to confirm
    last = choose_commits(token, conf, offsets, 3, STOPS, end_now=True)
    assert sorted(last.tolist()) == [0, 1]  # the leftmost remaining stop ends the span


def test_end_of_schedule_stop_is_added_per_span_within_k():
    token = _t([4, STOP, 6, STOP])
    conf = _t([0.5, float("-inf"), 0.4, float("-inf")], torch.float)
    offsets = _t([0, 1, 0, 1])
    span_of = _t([0, 0, 1, 1])
    both = choose_commits(token, conf, offsets, 4, STOPS, end_now=True, span_of=span_of)
    assert sorted(both.tolist()) == [0, 1, 2, 3]
    capped = choose_commits(token, conf, offsets, 3, STOPS, end_now=True, span_of=span_of)
    assert capped.numel() == 3 and {0, 2} <= set(capped.tolist())


def test_always_commits_at_least_one():
    token = _t([STOP, STOP])
    conf = _t([float("-inf"), float("-inf")], torch.float)
    assert choose_commits(token, conf, _t([3, 4]), 1, STOPS, end_now=False).numel() == 1


def test_a_tiny_temperature_samples_the_top_token_instead_of_failing():
    # Found by fuzzing the HTTP API: logits / 1e-300 overflowed to inf and softmax gave nan.
    logits = torch.tensor([[3.0, 9.0, float("-inf"), 1.0], [0.5, 0.25, 2.0, float("-inf")]])
    for temperature in (5e-324, 1e-300, 1e-8):
        token, conf = predict(logits, temperature, "max_prob", torch.Generator().manual_seed(0))
        assert token.tolist() == [1, 2] and torch.isfinite(conf).all()
