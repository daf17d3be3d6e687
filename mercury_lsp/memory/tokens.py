"""The memory's tokens: code as a sequence of 32-bit token ids, whitespace aside, line breaks kept.

A token is a maximal run of word bytes (ASCII letters, digits, ``_``, ``$`` and every byte of a
non-ASCII character: identifiers and numbers in any script), one punctuation byte, or a line
break: a run of blanks holding one or more ``\\n`` is one ``NEWLINE`` token, so blank lines and
indentation never break a match (``foo(\\n    a`` matches ``foo(\\n  a``). The memory matches
token ids, then reads what follows a match from the text itself, so the suggestion keeps the
source's own spacing.

Tokenizing is numpy over the UTF-8 bytes (byte classes, run boundaries, ids packed from the
bytes), tens of MB/s, no Python loop per token. An id is a 64-bit value made from the token's
bytes (up to 8 bytes packed exactly; longer tokens hashed), mixed and cut to 32 bits: no
vocabulary to store or load; two distinct tokens share an id with odds ~n^2/2^33 (about 30 pairs
among a large repository's half a million distinct tokens), which at worst joins two contexts a
ranker then scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

SEP = 0  # between files in a shard: no query holds it, so no match crosses a file
NEWLINE = 1
RESERVED = 16  # ids below this are special; a hashed id that falls there is moved past it
PACK_BYTES = 8  # tokens this short are packed exactly into 64 bits before mixing
HASH_BYTES = 64  # longer tokens: their first bytes hashed (and their length)
MIX = np.uint64(0x9E3779B97F4A7C15)  # the golden-ratio multiplier (Fibonacci hashing)

_SPACE, _WORD, _NL, _PUNCT = 0, 1, 2, 3
_CLASS = np.full(256, _PUNCT, dtype=np.uint8)
for _b in b" \t\r\f\v":
    _CLASS[_b] = _SPACE
_CLASS[ord("\n")] = _NL
for _b in b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$":
    _CLASS[_b] = _WORD
_CLASS[0x80:] = _WORD


@dataclass(frozen=True)
class Tokens:
    """Token ids of a UTF-8 text with each token's start and end byte."""
    ids: np.ndarray  # uint32 [n]
    starts: np.ndarray  # uint32 [n]: byte offset of each token in the text
    ends: np.ndarray  # uint32 [n]

    def __len__(self) -> int:
        return len(self.ids)


EMPTY = Tokens(np.zeros(0, np.uint32), np.zeros(0, np.uint32), np.zeros(0, np.uint32))


def _mix(v: np.ndarray) -> np.ndarray:
    """64-bit values -> 32-bit ids (multiplicative hashing: the high bits of v * MIX)."""
    with np.errstate(over="ignore"):
        h = ((v * MIX) >> np.uint64(32)).astype(np.uint32)
    return np.where(h < RESERVED, h + RESERVED, h).astype(np.uint32)


def _windows(b: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """``b[s:s + width]`` for every start (zero bytes past the end): a [len(starts), width] gather."""
    padded = np.concatenate((b, np.zeros(width, dtype=np.uint8)))
    view = np.lib.stride_tricks.as_strided(padded, shape=(len(b), width), strides=(1, 1))
    return view[starts]


# Odd 64-bit multipliers of the long-token hash, one per byte position (fixed: ids are persisted).
_LONG_WEIGHTS = (np.arange(1, HASH_BYTES + 1, dtype=np.uint64) * MIX) | np.uint64(1)


def _word_values(b: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """A 64-bit value per word run ``b[starts:ends]``: its bytes packed (big-endian) when they fit,
    else a hash of its first ``HASH_BYTES`` bytes with its length."""
    lengths = (ends - starts).astype(np.int64)
    packed = _windows(b, starts, PACK_BYTES).view(">u8").ravel().astype(np.uint64)
    shift = (8 * (PACK_BYTES - np.minimum(lengths, PACK_BYTES))).astype(np.uint64)
    with np.errstate(over="ignore"):
        v = packed >> shift
        long_idx = np.flatnonzero(lengths > PACK_BYTES)
        if len(long_idx):
            n = lengths[long_idx]
            win = _windows(b, starts[long_idx], HASH_BYTES).astype(np.uint64)
            win[np.arange(HASH_BYTES)[None, :] >= n[:, None]] = 0  # bytes past the token
            h = win @ _LONG_WEIGHTS
            # the length in the top byte keeps a long token apart from any packed short one
            v[long_idx] = h ^ (np.minimum(n, 255).astype(np.uint64) << np.uint64(56)) ^ np.uint64(1 << 63)
    return v


def tokenize(data: bytes) -> Tokens:
    """The tokens of UTF-8 ``data`` (bytes that are not UTF-8 count as word bytes)."""
    n = len(data)
    if n == 0:
        return EMPTY
    b = np.frombuffer(data, dtype=np.uint8)
    cls = _CLASS[b]
    prev = np.empty(n, dtype=np.uint8)
    prev[0] = _SPACE
    prev[1:] = cls[:-1]
    nxt = np.empty(n, dtype=np.uint8)
    nxt[-1] = _SPACE
    nxt[:-1] = cls[1:]
    word = cls == _WORD
    w_starts = np.flatnonzero(word & (prev != _WORD))
    w_ends = np.flatnonzero(word & (nxt != _WORD)) + 1
    punct = np.flatnonzero(cls == _PUNCT)
    # a newline opens a NEWLINE token unless the last non-blank byte before it was a newline too
    events = np.flatnonzero(cls != _SPACE)
    ev_cls = cls[events]
    first_nl = (ev_cls == _NL) & np.concatenate(([True], ev_cls[:-1] != _NL))
    nl = events[first_nl]
    starts = np.concatenate((w_starts, punct, nl))
    ends = np.concatenate((w_ends, punct + 1, nl + 1))
    values = np.concatenate((_word_values(b, w_starts, w_ends),
                             b[punct].astype(np.uint64) | np.uint64(1 << 62),
                             np.zeros(len(nl), dtype=np.uint64)))
    ids = _mix(values)
    ids[len(w_starts) + len(punct):] = NEWLINE
    order = np.argsort(starts, kind="stable")
    return Tokens(ids[order], starts[order].astype(np.uint32), ends[order].astype(np.uint32))


def word_mask(blob: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Which tokens (by start byte) are words: names, keywords, numbers."""
    if not len(blob):
        return np.zeros(len(starts), dtype=bool)
    return _CLASS[blob[np.minimum(starts, len(blob) - 1)]] == _WORD


def is_word_byte(b: int) -> bool:
    return bool(_CLASS[b] == _WORD)


@lru_cache(maxsize=4096)
def token_id(token: str) -> int:
    """The id of one token's text (what ``tokenize`` gives it)."""
    t = tokenize(token.encode("utf-8"))
    if len(t) != 1:
        raise ValueError("not a single token")
    return int(t.ids[0])
