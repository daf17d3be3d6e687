"""Chunks of the memory's files and an inverted index over their words, for retrieval.

A chunk is ``CHUNK_LINES`` consecutive non-blank lines of one file. Each shard keeps, beside its
suffix array, the postings of its words: every (word id, chunk) pair once, sorted by word, so the
chunks holding any set of words are one vectorized ``searchsorted`` away. Retrieval scores chunks
against the words around the cursor with BM25 (``bm25``): rare shared names weigh most, common
ones (``self``, ``return``) next to nothing, long chunks are not favoured for their length.
(``docs/memory.md`` compares it with SQLite FTS5 and Jaccard over identifiers.)
"""

from __future__ import annotations

import numpy as np

from mercury_lsp.memory.tokens import NEWLINE, SEP, word_mask

CHUNK_LINES = 12  # lines per chunk: a function's head and a few statements, as RepoCoder's windows
BM25_K1 = 1.2  # BM25's usual term-frequency saturation (every postings entry counts once here)
BM25_B = 0.75  # BM25's usual length normalisation
MAX_DF_SHARE = 0.1  # a word in more than this share of chunks is no evidence (``self``, ``return``)
CHUNK_ARRAYS = ("chunk_tok", "chunk_file", "chunk_words", "post_ids", "post_chunks")


def chunk_arrays(ids: np.ndarray, starts: np.ndarray, blob: np.ndarray, file_tok: np.ndarray) -> dict[str, np.ndarray]:
    """Chunks (first token, file, word count) and sorted word postings of a shard's tokens."""
    n = len(ids)
    file_of = np.searchsorted(file_tok, np.arange(n), side="right") - 1  # -1: the leading SEP
    is_nl = ids == NEWLINE
    nl_cum = np.cumsum(is_nl) - is_nl  # newlines before each token
    first = np.clip(file_tok[:-1], 0, n - 1)
    base = nl_cum[first]
    local = nl_cum - base[np.clip(file_of, 0, None)]
    key = np.clip(file_of, 0, None).astype(np.int64) << 32 | (local // CHUNK_LINES)
    real = (file_of >= 0) & (ids != SEP)
    chunk_keys, chunk_of = np.unique(key[real], return_inverse=True)
    chunk = np.full(n, -1, np.int64)
    chunk[real] = chunk_of
    idx = np.flatnonzero(real)
    chunk_tok = np.full(len(chunk_keys), n, np.int64)
    np.minimum.at(chunk_tok, chunk_of, idx)
    words = real & word_mask(blob, starts)
    pairs = np.unique(ids[words].astype(np.uint64) << np.uint64(32) | chunk[words].astype(np.uint64))
    low = (pairs & np.uint64(0xFFFFFFFF)).astype(np.int64)
    chunk_words = np.bincount(low, minlength=len(chunk_keys))
    return {"chunk_tok": chunk_tok, "chunk_file": (chunk_keys >> 32).astype(np.int32),
            "chunk_words": chunk_words.astype(np.int32), "post_ids": (pairs >> np.uint64(32)).astype(np.uint32),
            "post_chunks": low.astype(np.uint32)}


def bm25(post_ids: np.ndarray, post_chunks: np.ndarray, chunk_words: np.ndarray, words: np.ndarray) -> np.ndarray:
    """BM25 of every chunk against the distinct word ids ``words`` (each posting counts once)."""
    n_chunks = len(chunk_words)
    scores = np.zeros(n_chunks, np.float64)
    if not n_chunks or not len(words):
        return scores
    lo = np.searchsorted(post_ids, words, side="left")
    hi = np.searchsorted(post_ids, words, side="right")
    df = hi - lo
    keep = (df > 0) & (df <= max(1, MAX_DF_SHARE * n_chunks))
    if not keep.any():
        return scores
    idf = np.log1p((n_chunks - df[keep] + 0.5) / (df[keep] + 0.5))
    spans = [np.arange(a, b) for a, b in zip(lo[keep], hi[keep], strict=True)]
    at = np.concatenate(spans)
    weight = np.repeat(idf, df[keep])
    avg = max(1.0, float(chunk_words.mean()))
    norm = BM25_K1 * (1 - BM25_B + BM25_B * chunk_words / avg)
    tf = (BM25_K1 + 1) / (1 + norm)  # one occurrence per (word, chunk)
    np.add.at(scores, post_chunks[at].astype(np.int64), weight)
    return scores * tf
