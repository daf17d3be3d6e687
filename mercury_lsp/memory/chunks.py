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


def _distinct(a: np.ndarray) -> np.ndarray:
    """The sorted distinct values of ``a`` (a sort, no hashing)."""
    a = np.sort(a)
    return a[np.concatenate(([True], a[1:] != a[:-1]))] if len(a) else a


def chunk_arrays(ids: np.ndarray, starts: np.ndarray, blob: np.ndarray, file_tok: np.ndarray) -> dict[str, np.ndarray]:
    """Chunks (first token, file, word count) and sorted word postings of a shard's tokens."""
    n = len(ids)
    real = ids != SEP
    is_nl = ids == NEWLINE
    nl_cum = np.cumsum(is_nl)  # newlines up to and including each token
    starts_of_files = np.zeros(n, dtype=bool)
    starts_of_files[np.clip(file_tok[:-1], 0, n - 1)] = True
    file_base = np.maximum.accumulate(np.where(starts_of_files, nl_cum - is_nl, 0))
    local = nl_cum - is_nl - file_base  # newlines before the token, in its file
    after_nl = np.concatenate(([False], is_nl[:-1]))
    new = real & (starts_of_files | (after_nl & (local % CHUNK_LINES == 0)))
    chunk = np.cumsum(new) - 1  # the chunk of every token (-1 before the first)
    chunk_tok = np.flatnonzero(new)
    chunk_file = (np.searchsorted(file_tok, chunk_tok, side="right") - 1).astype(np.int32)
    words = real & (chunk >= 0) & word_mask(blob, starts)
    pairs = _distinct(ids[words].astype(np.uint64) << np.uint64(32) | chunk[words].astype(np.uint64))
    low = (pairs & np.uint64(0xFFFFFFFF)).astype(np.int64)
    chunk_words = np.bincount(low, minlength=len(chunk_tok))
    return {"chunk_tok": chunk_tok.astype(np.int64), "chunk_file": chunk_file,
            "chunk_words": chunk_words.astype(np.int32), "post_ids": (pairs >> np.uint64(32)).astype(np.uint32),
            "post_chunks": low.astype(np.uint32)}


def bm25(post_ids: np.ndarray, post_chunks: np.ndarray, chunk_words: np.ndarray,
         words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BM25 of the chunks holding any of the distinct word ids ``words`` (each posting counts
    once): (chunk ids, scores). Only those chunks are touched, so a query costs its postings,
    not the shard's size."""
    n_chunks = len(chunk_words)
    none = (np.zeros(0, np.int64), np.zeros(0, np.float64))
    if not n_chunks or not len(words):
        return none
    lo = np.searchsorted(post_ids, words, side="left")
    hi = np.searchsorted(post_ids, words, side="right")
    df = hi - lo
    keep = (df > 0) & (df <= max(1, MAX_DF_SHARE * n_chunks))
    if not keep.any():
        return none
    idf = np.log1p((n_chunks - df[keep] + 0.5) / (df[keep] + 0.5))
    at = np.concatenate([np.arange(a, b) for a, b in zip(lo[keep], hi[keep], strict=True)])
    chunks, where = np.unique(post_chunks[at].astype(np.int64), return_inverse=True)
    scores = np.bincount(where, weights=np.repeat(idf, df[keep]), minlength=len(chunks))
    lengths = chunk_words[chunks]
    avg = max(1.0, float(np.mean(lengths)))  # the hit chunks' mean length stands for the shard's
    tf = (BM25_K1 + 1) / (1 + BM25_K1 * (1 - BM25_B + BM25_B * lengths / avg))  # one occurrence per chunk
    return chunks, scores * tf
