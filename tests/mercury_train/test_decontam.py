"""The contamination check against the evaluation set (mercury_train/decontam.py)."""

from __future__ import annotations

import numpy as np

from mercury_train.decontam import ContaminationIndex, ngram_hashes


def test_contamination_hashes_travel_without_the_text(tmp_path):
    index = ContaminationIndex(ngram_hashes("def f ( a , b ) : return a + b * 2 - 1 # x y z"), "test")
    index.save(tmp_path / "h.npy")
    again = ContaminationIndex.load(tmp_path / "h.npy")
    assert np.array_equal(index.hashes, again.hashes) and again.source == "hashes:h.npy"
    assert again.contaminated("x = 1\ndef f(a, b): return a + b * 2 - 1 # x y z\n")
    assert not again.contaminated("def g(a, b): return a - b\n" * 5)
    assert not ContaminationIndex.load(None).active
