"""The ranker's boosted trees: the table, its checks and the numpy evaluator."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import msgspec
import pytest

from mercury_lsp.completion import rank
from mercury_lsp.completion.trees import LEAF, TREES_FILE, Trees, TreeTable, read_table

FIXTURE = Path(__file__).with_name("data") / "trees_fixture.json"

# one tree: a <= 0.5 (a missing: left) -> b <= 2 ? -1 : +1; else +3
TINY = dict(features=("a", "b"), bias=0.25, roots=(0,), feature=(0, 1, LEAF, LEAF, LEAF),
            threshold=(0.5, 2.0, 0.0, 0.0, 0.0), left=(1, 2, 0, 0, 0), right=(4, 3, 0, 0, 0),
            missing_left=(True, False, False, False, False), value=(0.0, 0.0, -1.0, 1.0, 3.0))


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z))


def test_a_hand_made_table_walks_each_row_to_its_leaf():
    trees = Trees(TreeTable(**TINY))
    rows = [{"a": 0.0, "b": 1.0}, {"a": 0.5, "b": 5.0}, {"a": 0.9, "b": 0.0}, {"b": 1.0}, {"a": 0.0}]
    # the last row lacks b: missing goes right there (missing_left False) -> +1
    want = [0.25 - 1, 0.25 + 1, 0.25 + 3, 0.25 - 1, 0.25 + 1]
    assert trees.probabilities(rows) == pytest.approx([_sigmoid(z) for z in want])
    assert trees.depth == 2 and trees.used == {"a", "b"}
    assert trees.probabilities([]) == []


def test_the_evaluator_equals_the_fitting_librarys_predictions():
    # saved from scikit-learn's HistGradientBoostingClassifier (5 trees, missing values among
    # the rows) through benchmarks/memory/trees.py's export: no fitting library needed here
    saved = json.loads(FIXTURE.read_text())
    table = msgspec.convert(saved["table"], TreeTable)
    rows = [{k: v for k, v in zip(table.features, r, strict=True) if v is not None} for r in saved["rows"]]
    assert Trees(table).probabilities(rows) == pytest.approx(saved["probabilities"], abs=1e-12)


@pytest.mark.parametrize(("change", "message"), [
    ({"left": (1, 2, 0, 0)}, "differ in length"),
    ({"roots": (7,)}, "root outside"),
    ({"feature": (0, 5, LEAF, LEAF, LEAF)}, "does not name"),
    ({"left": (1, 0, 0, 0, 0)}, "not later nodes"),
])
def test_a_bad_table_is_refused_with_a_clear_error(change, message):
    raw = msgspec.json.encode({**TINY, **change})
    with pytest.raises(msgspec.ValidationError, match=message):
        msgspec.json.decode(raw, type=TreeTable)


def test_an_unknown_field_or_a_wrong_type_is_refused():
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(msgspec.json.encode({**TINY, "extra": 1}), type=TreeTable)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(msgspec.json.encode({**TINY, "bias": "high"}), type=TreeTable)


def test_trees_splitting_on_a_feature_the_ranker_does_not_compute_are_refused():
    with pytest.raises(ValueError, match="does not compute: a, b"):
        rank.checked(Trees(TreeTable(**TINY)))


def test_the_shipped_trees_read_and_use_only_the_rankers_features():
    trees = rank.checked(Trees(read_table(TREES_FILE)))
    assert trees.used <= set(rank.FEATURES)
    assert isinstance(rank.shipped_ranker("trees"), Trees)
    assert isinstance(rank.shipped_ranker("linear"), rank.Linear)


def test_a_damaged_trees_file_falls_back_to_the_linear_weights(tmp_path, monkeypatch, caplog):
    bad = tmp_path / "ranker_trees.json"
    bad.write_text('{"features": ["a"]')
    monkeypatch.setattr(rank, "TREES_FILE", bad)
    rank.shipped_ranker.cache_clear()
    try:
        with caplog.at_level(logging.WARNING):
            assert isinstance(rank.shipped_ranker("trees"), rank.Linear)
        assert "cannot be read" in caplog.text
    finally:
        rank.shipped_ranker.cache_clear()
