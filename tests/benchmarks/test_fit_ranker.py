"""The ranker fit's account of where the target characters go at the gate."""

from __future__ import annotations

import pytest

from benchmarks.memory.fit_ranker import LOSSES, losses


def case(chars: int, *labels: bool) -> dict:
    return {"target_chars": chars, "rows": [({}, y, "memory", "x") for y in labels]}


def test_every_case_falls_in_one_loss_and_the_shares_add_up():
    cases = [case(10, True, False), case(20, True), case(30, False, True), case(40, False, True), case(5, False)]
    best = [(0.5, True, 10), (0.1, True, 20), (0.5, False, 30), (0.1, False, 40), (0.9, False, 5)]
    got = losses(cases, best, threshold=0.2)
    assert list(got) == list(LOSSES)
    assert got["saved"]["chars"] == pytest.approx(10 / 105)
    assert got["right first, gated"]["chars"] == pytest.approx(20 / 105)
    assert got["wrong first, shown"]["chars"] == pytest.approx(30 / 105)
    assert got["wrong first, gated"]["chars"] == pytest.approx(40 / 105)
    assert got["no right candidate"]["cases"] == pytest.approx(1 / 5)
    assert sum(v["chars"] for v in got.values()) == pytest.approx(1.0)
