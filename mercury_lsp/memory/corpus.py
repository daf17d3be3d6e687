"""A body of tokenized text the memory reads continuations from: a shard of the workspace's files
(``shard.Shard``: a suffix array over it) or one loose document (``scan.Loose``: an open
document, a file changed since its shard was built, scanned directly).

Both hold the forward token ids, each token's start byte in one UTF-8 blob, and the files'
first token and first byte; an ``Occurrence`` is a place in one of them where the query's left
context ends (``end``: the index of the first token after the match), with how many tokens
matched.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mercury_lsp.memory.tokens import NEWLINE, SEP

WINDOW_TOKENS = 64  # tokens read after a match: its line's rest and the start of the next line


@dataclass(frozen=True)
class FileInfo:
    path: str  # the file's path (a resolved local path), or a document's URI
    language: str  # grammar name, or "" for plain text
    test: bool  # a test file by its path (tests/, test_*.py, *_test.go, *.spec.ts, ...)


class Corpus:
    """Token ids, start bytes and a blob; ``files`` with their first token and first byte."""

    ids: np.ndarray  # uint32 [n], files separated by SEP
    starts: np.ndarray  # uint32 [n]
    blob: np.ndarray  # uint8: the files' bytes, one after the other
    file_tok: np.ndarray  # int64 [files + 1]: first token of each file (and n)
    file_byte: np.ndarray  # int64 [files + 1]: first byte of each file (and the blob's size)
    files: list[FileInfo]
    # chunks and word postings (``chunks.chunk_arrays``)
    chunk_tok: np.ndarray
    chunk_file: np.ndarray
    chunk_words: np.ndarray
    post_ids: np.ndarray
    post_chunks: np.ndarray

    def file_of(self, ends: np.ndarray) -> np.ndarray:
        """The file index of each token index (clipped to the files: the separators at both ends
        count as the first and the last file's)."""
        return np.clip(np.searchsorted(self.file_tok, ends, side="right") - 1, 0, len(self.files) - 1)

    def window(self, ends: np.ndarray, width: int = WINDOW_TOKENS) -> np.ndarray:
        """Token ids ``ids[e:e + width]`` for every end (SEP past the corpus) [len(ends), width]."""
        idx = ends[:, None] + np.arange(width)[None, :]
        out = np.full(idx.shape, SEP, dtype=np.uint32)
        ok = idx < len(self.ids)
        out[ok] = self.ids[idx[ok]]
        return out

    def text(self, start: int, end: int) -> str:
        return bytes(self.blob[start:end]).decode("utf-8", errors="replace")


def first_of(window: np.ndarray, token: int) -> np.ndarray:
    """Per row, the index of the first ``token`` or SEP (the row's width when there is none)."""
    hit = (window == token) | (window == SEP)
    return np.where(hit.any(axis=1), hit.argmax(axis=1), window.shape[1])


def line_ends(window: np.ndarray) -> np.ndarray:
    return first_of(window, NEWLINE)
