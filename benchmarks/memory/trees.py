"""Boosted trees for the completion ranker, at fitting time only: scikit-learn's histogram
gradient boosting (the ``fit`` extra: ``pip install 'mercury-lsp[fit]'``) fitted on the ranker's
features and exported to the daemon's own table (``mercury_lsp.completion.trees.TreeTable``),
which the daemon evaluates with numpy and never imports scikit-learn for.

The settings were chosen on the memory-fit cases, each repository left out, at the gate for
71 % precision (docs/memory.md: six other settings of the iterations, learning rate, leaves and
leaf size were within 0.5 point of characters saved of these, all 0.4-1.1 point above the
logistic ranker at the same precision).
"""

from __future__ import annotations

import numpy as np

from mercury_lsp.completion.trees import LEAF, TreeTable

ITERATIONS = 150
LEARNING_RATE = 0.1
MAX_LEAF_NODES = 15
MIN_SAMPLES_LEAF = 150  # a leaf of at least 150 candidates: the coarsest setting tried, and the best
L2 = 1.0


def classifier():
    try:
        from sklearn.ensemble import HistGradientBoostingClassifier
    except ImportError as e:  # a fitting-time tool, not a dependency of the daemon
        raise SystemExit("fitting the ranker's trees needs scikit-learn: pip install 'mercury-lsp[fit]'") from e
    return HistGradientBoostingClassifier(max_iter=ITERATIONS, learning_rate=LEARNING_RATE,
                                          max_leaf_nodes=MAX_LEAF_NODES, min_samples_leaf=MIN_SAMPLES_LEAF,
                                          l2_regularization=L2, early_stopping=False, random_state=0)


def fit(x: np.ndarray, y: np.ndarray):
    return classifier().fit(x, y)


def export(model, features: tuple[str, ...]) -> TreeTable:
    """The fitted classifier's trees as one flat node table (children offset to the table)."""
    if getattr(model, "is_categorical_", None) is not None and np.any(model.is_categorical_):
        raise ValueError("categorical splits cannot be exported")
    feature, threshold, left, right, missing_left, value, roots = [], [], [], [], [], [], []
    for (tree,) in model._predictors:  # one tree an iteration for a binary classifier
        nodes = tree.nodes
        base = len(feature)
        roots.append(base)
        for n in nodes:
            leaf = bool(n["is_leaf"])
            feature.append(LEAF if leaf else int(n["feature_idx"]))
            threshold.append(0.0 if leaf else float(n["num_threshold"]))
            left.append(0 if leaf else base + int(n["left"]))
            right.append(0 if leaf else base + int(n["right"]))
            missing_left.append(bool(n["missing_go_to_left"]))
            value.append(float(n["value"]) if leaf else 0.0)
    return TreeTable(features=tuple(features), bias=float(np.ravel(model._baseline_prediction)[0]),
                     roots=tuple(roots), feature=tuple(feature), threshold=tuple(threshold), left=tuple(left),
                     right=tuple(right), missing_left=tuple(missing_left), value=tuple(value))
