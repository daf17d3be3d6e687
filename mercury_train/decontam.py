"""The 13-gram contamination check, with a hash that is the same in every process and machine.

A training file is dropped when it shares any 13-gram of word tokens (``\\w+`` runs and single
punctuation marks) with an evaluation problem (its prompt, canonical solution and suffix).
Each word is hashed with CRC-32 and each window of 13 word hashes is folded into one 64-bit
polynomial hash with numpy, so the check runs without a Python loop over n-grams and gives
the same answer in worker processes (Python's ``hash`` of a string differs per process).

The evaluation data need not be on the machine that builds a corpus: ``save`` writes the set
of hashes (no text) to a small ``.npy`` file that can travel instead.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from pathlib import Path

import numpy as np

NGRAM = 13
_WORD = re.compile(r"\w+|[^\w\s]")
# An odd 64-bit multiplier (the golden ratio's): the polynomial hash wraps modulo 2^64.
_BASE = np.uint64(0x9E3779B97F4A7C15)
_POWERS = np.array([pow(int(_BASE), NGRAM - 1 - k, 2**64) for k in range(NGRAM)], dtype=np.uint64)


def ngram_hashes(text: str, n: int = NGRAM) -> np.ndarray:
    """uint64 hashes of every n-gram of word tokens in ``text`` ([max(0, words - n + 1)])."""
    words = _WORD.findall(text)
    if len(words) < n:
        return np.zeros(0, dtype=np.uint64)
    w = np.fromiter((zlib.crc32(x.encode()) for x in words), dtype=np.uint64, count=len(words))
    windows = np.lib.stride_tricks.sliding_window_view(w, n)  # [W, n]
    powers = _POWERS if n == NGRAM else np.array([pow(int(_BASE), n - 1 - k, 2**64) for k in range(n)],
                                                 dtype=np.uint64)
    with np.errstate(over="ignore"):
        return (windows * powers).sum(axis=1, dtype=np.uint64)


class ContaminationIndex:
    """The evaluation n-grams; ``source`` says where they came from (recorded in manifests)."""

    def __init__(self, hashes: np.ndarray, source: str) -> None:
        self.hashes = np.unique(hashes.astype(np.uint64))
        self.source = source

    @property
    def active(self) -> bool:
        return self.hashes.size > 0

    def contaminated(self, text: str) -> bool:
        if not self.active:
            return False
        h = ngram_hashes(text)
        at = np.minimum(np.searchsorted(self.hashes, h), self.hashes.size - 1)
        return bool((self.hashes[at] == h).any())

    @classmethod
    def from_eval_dir(cls, eval_dir: Path) -> ContaminationIndex:
        parts = []
        for f in sorted(Path(eval_dir).glob("*.jsonl.gz")):
            with gzip.open(f, "rt", encoding="utf-8") as fh:
                for line in fh:
                    p = json.loads(line)
                    parts.append(ngram_hashes(p["prompt"] + p["canonical_solution"] + p["suffix"]))
        hashes = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
        return cls(hashes, f"eval-dir:{eval_dir}")

    @classmethod
    def load(cls, source: Path | None) -> ContaminationIndex:
        """An evaluation directory, a saved ``.npy`` hash set, or nothing (the check is off)."""
        if source is None or not Path(source).exists():
            return cls(np.zeros(0, dtype=np.uint64), "none")
        if Path(source).is_dir():
            return cls.from_eval_dir(Path(source))
        return cls(np.load(source), f"hashes:{Path(source).name}")

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npy")
        np.save(tmp, self.hashes)
        tmp.replace(path)
