"""The completion ranker's boosted trees: a table of regression trees over the ranker's features
(``rank.FEATURES``) and its evaluator, vectorised over a request's candidates.

The trees are fitted by ``benchmarks/memory/fit_ranker.py --trees`` (scikit-learn's histogram
gradient boosting, a fitting-time tool only) and shipped as ``ranker_trees.json`` beside this
module; the daemon reads the table with msgspec and walks it with numpy, so it never imports the
fitting library. All trees live in one flat node table: tree ``t`` starts at node ``roots[t]``;
at a split node a row goes to ``left[n]`` when its feature ``feature[n]`` is at most
``threshold[n]`` (or is NaN and ``missing_left[n]``), else to ``right[n]``; a leaf has
``feature[n] == -1`` and adds ``value[n]`` to the row's log-odds, which start at ``bias``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import msgspec
import numpy as np

TREES_FILE = Path(__file__).with_name("ranker_trees.json")
LEAF = -1


class TreeTable(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Boosted trees in one flat node table (see the module's docstring); checked whole when read."""
    features: tuple[str, ...]  # the columns ``feature`` indexes, by name
    bias: float  # the log-odds every row starts from (the fitted baseline)
    roots: tuple[int, ...]
    feature: tuple[int, ...]  # a column of ``features``, or LEAF
    threshold: tuple[float, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    missing_left: tuple[bool, ...]
    value: tuple[float, ...]  # a leaf's addition to the log-odds (the learning rate applied)

    def __post_init__(self) -> None:
        n = len(self.feature)
        if not all(len(a) == n for a in (self.threshold, self.left, self.right, self.missing_left, self.value)):
            raise ValueError("the node columns differ in length")
        if any(not 0 <= r < n for r in self.roots):
            raise ValueError("a root outside the node table")
        for i, f in enumerate(self.feature):
            if f == LEAF:
                continue
            if not 0 <= f < len(self.features):
                raise ValueError(f"node {i} splits on column {f}, which the table does not name")
            if not (i < self.left[i] < n and i < self.right[i] < n):
                raise ValueError(f"node {i}'s children are not later nodes of the table")


class Trees:
    """A ``TreeTable`` ready to evaluate: numpy columns built once."""

    def __init__(self, table: TreeTable) -> None:
        self.table = table
        self.features = table.features
        self._feature = np.asarray(table.feature, np.int64)
        self._split = np.maximum(self._feature, 0)
        self._leaf = self._feature == LEAF
        self._threshold = np.asarray(table.threshold, np.float64)
        self._left = np.asarray(table.left, np.int64)
        self._right = np.asarray(table.right, np.int64)
        self._missing_left = np.asarray(table.missing_left, bool)
        self._value = np.asarray(table.value, np.float64)
        self._roots = np.asarray(table.roots, np.int64)
        # Children always come after their node (checked), so one pass finds every node's depth:
        # the deepest is how many steps a walk takes.
        depth = [0] * len(table.feature)
        for i, f in enumerate(table.feature):
            if f != LEAF:
                for child in (table.left[i], table.right[i]):
                    depth[child] = max(depth[child], depth[i] + 1)
        self.depth = max(depth, default=0)

    @cached_property
    def used(self) -> frozenset[str]:
        """The features some split reads."""
        return frozenset(self.features[f] for f in self.table.feature if f != LEAF)

    def matrix(self, rows: Sequence[dict[str, float]]) -> np.ndarray:
        """The rows' features as the table's columns (a feature a row lacks is NaN: missing)."""
        return np.array([[x.get(k, np.nan) for k in self.features] for x in rows], np.float64).reshape(
            len(rows), len(self.features))

    def log_odds(self, x: np.ndarray) -> np.ndarray:
        """Each row's log-odds: every tree walked at once, one level a step."""
        rows = np.arange(len(x))[:, None]
        node = np.broadcast_to(self._roots, (len(x), len(self._roots))).copy()
        for _ in range(self.depth):
            value = x[rows, self._split[node]]
            left = (value <= self._threshold[node]) | (np.isnan(value) & self._missing_left[node])
            node = np.where(self._leaf[node], node, np.where(left, self._left[node], self._right[node]))
        return self.table.bias + self._value[node].sum(axis=1)

    def probabilities(self, rows: Sequence[dict[str, float]]) -> list[float]:
        if not rows:
            return []
        z = np.clip(self.log_odds(self.matrix(rows)), -60.0, 60.0)
        return (1.0 / (1.0 + np.exp(-z))).tolist()


def read_table(path: Path = TREES_FILE) -> TreeTable:
    return msgspec.json.decode(path.read_bytes(), type=TreeTable)
