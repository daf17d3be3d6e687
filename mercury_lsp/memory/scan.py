"""Loose documents: an open document, or a file changed since its shard was built, searched by
a direct scan of its tokens (vectorized: the places whose last token matches, narrowed token by
token). A document of 50 KB scans in well under a millisecond, so open documents are searched
exactly as they are at the request's version, with no index to keep up to date per keystroke.
"""

from __future__ import annotations

import numpy as np

from mercury_lsp.memory.chunks import chunk_arrays
from mercury_lsp.memory.corpus import Corpus, FileInfo
from mercury_lsp.memory.shard import LevelRange, Matches
from mercury_lsp.memory.tokens import SEP, tokenize


class Loose(Corpus):
    def __init__(self, info: FileInfo, data: bytes) -> None:
        t = tokenize(data)
        sep, zero, end = np.array([SEP], np.uint32), np.zeros(1, np.uint32), np.array([len(data)], np.uint32)
        self.ids = np.concatenate((sep, t.ids, sep))  # SEP at both ends, as in a shard
        self.starts = np.concatenate((zero, t.starts, end))
        self.ends = np.concatenate((zero, t.ends, end))
        self.blob = np.frombuffer(data, dtype=np.uint8)
        self.file_tok = np.array([1, len(self.ids)], np.int64)
        self.file_byte = np.array([0, len(data)], np.int64)
        self.files = [info]
        self.data = data
        self._chunks: dict[str, np.ndarray] | None = None

    def _chunk(self, key: str) -> np.ndarray:
        """Chunk arrays, made on first use (only retrieval reads them)."""
        if self._chunks is None:
            self._chunks = chunk_arrays(self.ids, self.starts, self.blob, self.file_tok)
        return self._chunks[key]

    chunk_tok = property(lambda self: self._chunk("chunk_tok"))
    chunk_file = property(lambda self: self._chunk("chunk_file"))
    chunk_words = property(lambda self: self._chunk("chunk_words"))
    post_ids = property(lambda self: self._chunk("post_ids"))
    post_chunks = property(lambda self: self._chunk("post_chunks"))

    @property
    def tokens(self) -> int:
        return len(self.ids)

    def lcps(self, q: np.ndarray, skip_end: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ends, match lengths) of every place whose preceding tokens match the reversed query
        ``q`` on at least one token; ``skip_end``: a place not to count (the cursor itself)."""
        ids = self.ids
        if not len(q):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        ends = np.flatnonzero(ids == q[0]) + 1
        if skip_end is not None:
            ends = ends[ends != skip_end]
        lengths = np.ones(len(ends), np.int64)
        alive = np.arange(len(ends))
        for k in range(1, len(q)):
            if not len(alive):
                break
            idx = ends[alive] - 1 - k
            ok = idx >= 0
            ok[ok] = ids[idx[ok]] == q[k]
            alive = alive[ok]
            lengths[alive] += 1
        return ends, lengths

    def sizes(self, q: np.ndarray, levels: list[int], live: np.ndarray | None = None,
              skip_end: int | None = None) -> list[int]:
        """Places new at each level (as ``Shard.sizes``)."""
        _, lengths = self.lcps(q, skip_end)
        out, upper = [], None
        for length in levels:
            at = lengths >= length
            out.append(int((at if upper is None else at & (lengths < upper)).sum()))
            upper = length
        return out

    def matches(self, q: np.ndarray, levels: list[int], per_level: int | list[int], live: np.ndarray | None = None,
                skip_end: int | None = None) -> Matches:
        """As ``Shard.matches``: up to ``per_level`` (or ``per_level[k]``) new places per level
        (nearest the match's own order: the document's order), with their match lengths."""
        quotas = per_level if isinstance(per_level, list) else [per_level] * len(levels)
        ends, lengths = self.lcps(q, skip_end)
        out_e, out_l, ranges = [], [], []
        upper = None
        for length, quota in zip(levels, quotas, strict=True):
            at = lengths >= length
            ranges.append(LevelRange(length, int(at.sum())))
            fresh = np.flatnonzero(at if upper is None else at & (lengths < upper))
            if len(fresh) > quota:
                fresh = fresh[np.linspace(0, len(fresh) - 1, quota).astype(np.int64)] if quota else fresh[:0]
            out_e.append(ends[fresh])
            out_l.append(lengths[fresh])
            upper = length
        if not out_e:
            return Matches(np.zeros(0, np.int64), np.zeros(0, np.int64), ranges)
        return Matches(np.concatenate(out_e), np.concatenate(out_l), ranges)

    def longest(self, q: np.ndarray, live: np.ndarray | None = None, skip_end: int | None = None) -> int:
        _, lengths = self.lcps(q, skip_end)
        return int(lengths.max()) if len(lengths) else 0

    def end_at(self, byte: int) -> int:
        """Index of the first token starting at or after ``byte`` (the place a cursor there is)."""
        return 1 + int(np.searchsorted(self.starts[1:-1], byte, side="left"))
