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


def test_exported_trees_predict_as_the_fitted_classifier():
    pytest.importorskip("sklearn")
    import numpy as np

    from benchmarks.memory.trees import export
    from mercury_lsp.completion.trees import Trees

    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 4))
    x[rng.random(600) < 0.15, 2] = np.nan
    y = (x[:, 0] * x[:, 1] + np.nan_to_num(x[:, 2], nan=1.0) > 0).astype(float)
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(max_iter=20, max_leaf_nodes=7, early_stopping=False).fit(x, y)
    names = ("w", "x", "y", "z")
    trees = Trees(export(model, names))
    rows = [{k: v for k, v in zip(names, r, strict=True) if not np.isnan(v)} for r in x]
    assert np.allclose(trees.probabilities(rows), model.predict_proba(x)[:, 1], atol=1e-12)
