"""A shard: the tokens of some workspace files and a suffix array over them, read backwards.

The suffix array (libdivsufsort through ``pydivsufsort``) sorts the suffixes of the *reversed*
token sequence, so the longest run of tokens that ends at the cursor is the longest common
prefix of the reversed query with a suffix: one binary search finds it, and the places that
share the last ``L`` tokens of the context are one contiguous range for every ``L`` (shorter
contexts give wider ranges around it: the back-off levels). Files are separated by ``SEP``,
which no query holds, so no match crosses a file.

A shard is immutable. It is saved as plain ``.npy`` arrays and opened memory-mapped, so a large
workspace costs the pages its queries touch, not its size, in the daemon's memory, and a restart
opens it again in milliseconds (``store`` decides which files go where).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from mercury_lsp.memory.chunks import CHUNK_ARRAYS, chunk_arrays
from mercury_lsp.memory.corpus import Corpus, FileInfo
from mercury_lsp.memory.tokens import SEP, tokenize

FORMAT = 2  # bumped when the arrays' meaning changes (an older shard is rebuilt)
ARRAYS = ("ids", "sa", "starts", "blob", "file_tok", "file_byte", *CHUNK_ARRAYS)


@dataclass(frozen=True)
class LevelRange:
    length: int  # tokens of context matched
    count: int  # places with that context in live files (estimated from a sample in large ranges)


@dataclass(frozen=True)
class Matches:
    """Places where the reversed query matches: ``ends`` (token index after the match),
    ``lengths`` (tokens matched), and the size of each level's range."""
    ends: np.ndarray  # int64
    lengths: np.ndarray  # int64
    levels: list[LevelRange]


NO_MATCHES = Matches(np.zeros(0, np.int64), np.zeros(0, np.int64), [])


class Shard(Corpus):
    def __init__(self, arrays: dict[str, np.ndarray], files: list[FileInfo], name: str) -> None:
        self.ids = arrays["ids"]
        self.sa = arrays["sa"]
        self.starts = arrays["starts"]
        self.blob = arrays["blob"]
        self.file_tok = arrays["file_tok"]
        self.file_byte = arrays["file_byte"]
        for key in CHUNK_ARRAYS:
            setattr(self, key, arrays[key])
        self.files = files
        self.name = name
        self.rev = self.ids[::-1]

    @property
    def tokens(self) -> int:
        return len(self.ids)

    # ------------------------------------------------------------------ build, save, open
    @classmethod
    def build(cls, entries: list[tuple[FileInfo, bytes]]) -> Shard:
        from pydivsufsort import divsufsort

        # a SEP first too: every file's first token follows a SEP, as a query at a file's start does
        parts_ids, parts_starts, file_tok, file_byte = [np.array([SEP], np.uint32)], [np.zeros(1, np.int64)], [1], [0]
        tok, byte = 1, 0
        for _, data in entries:
            t = tokenize(data)
            parts_ids += [t.ids, np.array([SEP], np.uint32)]
            parts_starts += [t.starts.astype(np.int64) + byte, np.array([byte + len(data)], np.int64)]
            tok += len(t) + 1
            byte += len(data)
            file_tok.append(tok)
            file_byte.append(byte)
        if not entries:
            raise ValueError("a shard needs at least one file")
        ids = np.concatenate(parts_ids)
        if byte >= 1 << 32:
            raise ValueError("a shard holds less than 4 GiB of text")
        ranks = np.unique(ids[::-1], return_inverse=True)[1].astype(np.int32)
        arrays = {"ids": ids, "sa": divsufsort(ranks).astype(np.int32),
                  "starts": np.concatenate(parts_starts).astype(np.uint32),
                  "blob": np.frombuffer(b"".join(d for _, d in entries), dtype=np.uint8),
                  "file_tok": np.array(file_tok, np.int64), "file_byte": np.array(file_byte, np.int64)}
        arrays.update(chunk_arrays(arrays["ids"], arrays["starts"], arrays["blob"], arrays["file_tok"]))
        return cls(arrays, [f for f, _ in entries], uuid.uuid4().hex[:16])

    def save(self, parent: Path) -> Path:
        """Written into a temporary folder, then renamed: a shard folder is whole or absent."""
        final = parent / self.name
        tmp = parent / f".{self.name}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for key in ARRAYS:
            np.save(tmp / f"{key}.npy", getattr(self, key), allow_pickle=False)
        meta = {"format": FORMAT, "files": [asdict(f) for f in self.files]}
        (tmp / "files.json").write_text(json.dumps(meta), encoding="utf-8")
        os.replace(tmp, final)
        return final

    @classmethod
    def open(cls, folder: Path) -> Shard:
        """A saved shard, memory-mapped; ValueError/OSError when it is damaged or of another format."""
        meta = json.loads((folder / "files.json").read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT:
            raise ValueError("another shard format")
        files = [FileInfo(**f) for f in meta["files"]]
        arrays = {k: np.load(folder / f"{k}.npy", mmap_mode="r", allow_pickle=False) for k in ARRAYS}
        n = len(arrays["ids"])
        if (len(arrays["sa"]) != n or len(arrays["starts"]) != n or len(arrays["file_tok"]) != len(files) + 1
                or len(arrays["file_byte"]) != len(files) + 1 or int(arrays["file_tok"][-1]) != n
                or int(arrays["file_byte"][-1]) != len(arrays["blob"])):
            raise ValueError("inconsistent shard arrays")
        return cls(arrays, files, folder.name)

    # ------------------------------------------------------------------ search
    def _lcp(self, p: int, q: np.ndarray) -> int:
        seg = self.rev[p:p + len(q)]
        neq = np.flatnonzero(seg != q[:len(seg)])
        return int(neq[0]) if len(neq) else len(seg)

    def _bound(self, q: np.ndarray, lo: int, hi: int, upper: bool) -> int:
        """First index in ``[lo, hi)`` whose suffix is >= ``q`` on ``len(q)`` tokens (> with
        ``upper``), by binary search."""
        m = len(q)
        while lo < hi:
            mid = (lo + hi) // 2
            p = int(self.sa[mid])
            seg = self.rev[p:p + m]
            neq = np.flatnonzero(seg != q[:len(seg)])
            if len(neq):
                below = seg[neq[0]] < q[neq[0]]
            else:
                below = len(seg) < m or upper  # a suffix that ends sorts first; equal: upper goes past
            if below:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def longest(self, q: np.ndarray, live: np.ndarray | None = None, skip_end: int | None = None) -> int:
        """Tokens of ``q`` (the reversed query) that the longest matching suffix in a live file
        shares (``live``: per file, None: all). The common prefix only shrinks away from the
        insertion point, so the first live suffix on each side holds the longest."""
        n = len(self.sa)
        i = self._bound(q, 0, n, upper=False)
        best = 0
        for j, step in ((i - 1, -1), (i, 1)):
            while 0 <= j < n:
                p = int(self.sa[j])
                if live is None or live[self.file_of(np.array([n - p]))[0]]:
                    best = max(best, self._lcp(p, q))
                    break
                j += step
        return best

    def matches(self, q: np.ndarray, levels: list[int], per_level: int, live: np.ndarray | None = None,
                skip_end: int | None = None) -> Matches:
        """The places sharing ``levels[k]`` tokens with the reversed query ``q`` (levels longest
        first): up to ``per_level`` new ones per level, spread evenly over the level's range,
        each with its exact match length. Places in files that are not ``live`` are left out,
        and a level's count is its range's size times the live share of what was looked at."""
        n = len(self.sa)
        ends: list[np.ndarray] = []
        lengths: list[np.ndarray] = []
        ranges: list[LevelRange] = []
        lo_prev = hi_prev = None
        prev_len = len(q)
        for length in levels:
            key = q[:length]
            if lo_prev is None:
                lo = self._bound(key, 0, n, upper=False)
                hi = self._bound(key, lo, n, upper=True)
                fresh = np.arange(lo, hi)
            else:
                lo = self._bound(key, 0, lo_prev, upper=False)
                hi = self._bound(key, hi_prev, n, upper=True)
                fresh = np.concatenate((np.arange(lo, lo_prev), np.arange(hi_prev, hi)))
            total = len(fresh)
            if len(fresh) > per_level:
                fresh = fresh[np.linspace(0, len(fresh) - 1, per_level).astype(np.int64)]
            looked = len(fresh)
            if len(fresh):
                p = self.sa[fresh].astype(np.int64)
                if live is not None:
                    p = p[live[self.file_of(n - p)]]
                ends.append(n - p)
                lengths.append(self._lcps(p, q[:prev_len], length))
                dead_share = 1 - len(p) / looked
                counted = (0 if not ranges else ranges[-1].count) + round(total * (1 - dead_share))
            else:
                counted = 0 if not ranges else ranges[-1].count
            ranges.append(LevelRange(length, counted))
            lo_prev, hi_prev, prev_len = lo, hi, length
        if not ends:
            return Matches(NO_MATCHES.ends, NO_MATCHES.lengths, ranges)
        return Matches(np.concatenate(ends), np.concatenate(lengths), ranges)

    def _lcps(self, p: np.ndarray, q: np.ndarray, at_least: int) -> np.ndarray:
        """Exact common prefix of each suffix ``p`` with ``q`` (all share ``at_least`` tokens)."""
        width = len(q) - at_least
        if width <= 0:
            return np.full(len(p), at_least, np.int64)
        idx = p[:, None] + at_least + np.arange(width)[None, :]
        seg = np.full(idx.shape, SEP, np.uint32)
        ok = idx < len(self.rev)
        seg[ok] = self.rev[idx[ok]]
        neq = seg != q[at_least:][None, :]
        return at_least + np.where(neq.any(axis=1), neq.argmax(axis=1), width)
