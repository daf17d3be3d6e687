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

A binary search's probes land far apart, and the kernel maps the cached pages around each fault
(fault-around: 64 KB), so one query maps most of a shard's ``ids`` into the process: after a few
hundred queries the daemon's RSS holds the whole index as file pages (RssFile), although none of
them is the process's own memory. ``release`` unmaps them (``MADV_DONTNEED`` on read-only file
maps: the page cache keeps the pages and the next touch is a minor fault); every query of the
memory calls it as it returns (``service._query``), and the idle indexer once more.
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import threading
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from mercury_lsp.memory.chunks import CHUNK_ARRAYS, chunk_arrays
from mercury_lsp.memory.corpus import Corpus, FileInfo
from mercury_lsp.memory.tokens import SEP, tokenize

FORMAT = 2  # bumped when the arrays' meaning changes (an older shard is rebuilt)
SMALL_RANGE = 64  # suffixes left when narrowing stops and their match lengths are read at once
NARROWED_KEPT = 8  # queries whose narrowing a shard keeps (longest, then matches, share one)
LIVE_CHECK = 4096  # suffixes of a range looked at for a live file (a large range has one)
ARRAYS = ("ids", "sa", "starts", "blob", "file_tok", "file_byte", *CHUNK_ARRAYS)


@dataclass(frozen=True)
class LevelRange:
    length: int  # tokens of context matched
    count: int  # places with that context in live files (estimated from a sample in large ranges)


def _dense_ranks(ids: np.ndarray) -> np.ndarray:
    """Each id's rank among the distinct ids (order kept): libdivsufsort sorts them twice as fast
    as the ids themselves."""
    order = np.argsort(ids)
    s = ids[order]
    ranks = np.empty(len(ids), np.int32)
    ranks[order] = np.concatenate(([0], np.cumsum(s[1:] != s[:-1]))) if len(s) else s
    return ranks


def _member(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.isin`` for the small arrays of one query (its setup costs more than the work here)."""
    if not len(a) or not len(b):
        return np.zeros(len(a), dtype=bool)
    return (a[:, None] == b[None, :]).any(axis=1)


@dataclass(frozen=True)
class Narrowing:
    """The suffix-array ranges of a query's prefixes (``ranges[k]``: suffixes sharing k + 1
    tokens) and, when the last range was small, its suffixes with their exact match lengths."""
    ranges: list[tuple[int, int]]
    tail: np.ndarray  # int64 positions in the reversed tokens
    tail_lcps: np.ndarray


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
        self._narrowed: dict[bytes, Narrowing] = {}
        self._lock = threading.Lock()
        self._maps: list[mmap.mmap] = []  # the open shard's file maps (``release``)

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
        ranks = _dense_ranks(ids[::-1])
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
        # plain arrays over the maps: numpy's memmap subclass costs microseconds per scalar index
        maps = {k: np.load(folder / f"{k}.npy", mmap_mode="r", allow_pickle=False) for k in ARRAYS}
        arrays = {k: m.view(np.ndarray) for k, m in maps.items()}
        n = len(arrays["ids"])
        if (len(arrays["sa"]) != n or len(arrays["starts"]) != n or len(arrays["file_tok"]) != len(files) + 1
                or len(arrays["file_byte"]) != len(files) + 1 or int(arrays["file_tok"][-1]) != n
                or int(arrays["file_byte"][-1]) != len(arrays["blob"])):
            raise ValueError("inconsistent shard arrays")
        shard = cls(arrays, files, folder.name)
        shard._maps = [m for m in (getattr(a, "_mmap", None) for a in maps.values()) if m is not None]
        return shard

    def release(self) -> None:
        """Unmap the file pages queries touched (see the module's doc); a built, unsaved shard
        has none."""
        for m in self._maps:
            try:
                m.madvise(mmap.MADV_DONTNEED)
            except (OSError, ValueError):  # closed, or a platform without madvise
                pass

    # ------------------------------------------------------------------ search
    def _token(self, i: int, k: int) -> int:
        """The k-th token of the i-th suffix in suffix-array order (-1 past the end)."""
        p = int(self.sa[i]) + k
        return int(self.rev[p]) if p < len(self.rev) else -1

    def _narrow(self, q: np.ndarray) -> Narrowing:
        """The suffix-array range of every prefix of ``q``, narrowed one token at a time by binary
        search while the range is large; once it is small (``SMALL_RANGE``), the exact common
        prefix of each suffix left, computed at once. Cached for the last few queries (a request
        asks ``longest`` then ``matches`` with the same query)."""
        key = q.tobytes()
        with self._lock:
            hit = self._narrowed.get(key)
        if hit is not None:
            return hit
        lo, hi = 0, len(self.sa)
        ranges: list[tuple[int, int]] = []
        small = False
        for k in range(len(q)):
            if hi - lo <= SMALL_RANGE:
                small = True
                break
            t = int(q[k])
            a, b = lo, hi
            while a < b:  # first suffix whose k-th token is >= t
                mid = (a + b) // 2
                if self._token(mid, k) < t:
                    a = mid + 1
                else:
                    b = mid
            first = a
            b = hi
            while a < b:  # first suffix whose k-th token is > t
                mid = (a + b) // 2
                if self._token(mid, k) <= t:
                    a = mid + 1
                else:
                    b = mid
            if first == a:
                break
            lo, hi = first, a
            ranges.append((lo, hi))
        depth = len(ranges)
        small = small or (depth == len(q) and hi - lo <= SMALL_RANGE)
        tail = self.sa[lo:hi].astype(np.int64) if small else np.zeros(0, np.int64)
        lcps = self._lcps(tail, q, depth) if len(tail) else np.zeros(0, np.int64)
        keep = lcps > 0
        out = Narrowing(ranges, tail[keep], lcps[keep])
        with self._lock:
            self._narrowed[key] = out
            while len(self._narrowed) > NARROWED_KEPT:
                self._narrowed.pop(next(iter(self._narrowed)))
        return out

    def _live(self, p: np.ndarray, live: np.ndarray | None) -> np.ndarray:
        """Which suffixes ``p`` lie in live files."""
        if live is None:
            return np.ones(len(p), dtype=bool)
        return live[self.file_of(len(self.sa) - p)]

    def longest(self, q: np.ndarray, live: np.ndarray | None = None, skip_end: int | None = None) -> int:
        """Tokens of ``q`` (the reversed query) that the longest matching suffix in a live file
        shares (``live``: per file, None: all)."""
        nar = self._narrow(q)
        ok = self._live(nar.tail, live)
        if ok.any():
            return int(nar.tail_lcps[ok].max())
        for depth in range(len(nar.ranges), 0, -1):
            lo, hi = nar.ranges[depth - 1]
            probe = self.sa[lo:hi] if hi - lo <= LIVE_CHECK else self.sa[np.linspace(lo, hi - 1, LIVE_CHECK).astype(np.int64)]
            if self._live(probe.astype(np.int64), live).any():
                return depth
        return 0

    def _range(self, nar: Narrowing, length: int) -> tuple[int, int]:
        if length <= len(nar.ranges):
            return nar.ranges[length - 1]
        return (0, 0)

    def sizes(self, q: np.ndarray, levels: list[int], live: np.ndarray | None = None,
              skip_end: int | None = None) -> list[int]:
        """Places new at each level (dead files included): what a request's sampling budget is
        shared out by."""
        nar = self._narrow(q)
        out, prev = [], 0
        for length in levels:
            if length > len(nar.ranges):
                size = int((nar.tail_lcps >= length).sum())
            else:
                lo, hi = self._range(nar, length)
                size = hi - lo
            out.append(max(0, size - prev))
            prev = max(prev, size)
        return out

    def matches(self, q: np.ndarray, levels: list[int], per_level: int | list[int], live: np.ndarray | None = None,
                skip_end: int | None = None) -> Matches:
        """The places sharing ``levels[k]`` tokens with the reversed query ``q`` (levels longest
        first): up to ``per_level`` (or ``per_level[k]``) new ones per level, spread evenly over
        the level's range, each with its exact match length. Places in files that are not
        ``live`` are left out, and a level's count is its range's size times the live share of
        what was looked at."""
        quotas = per_level if isinstance(per_level, list) else [per_level] * len(levels)
        nar = self._narrow(q)
        n = len(self.sa)
        ends: list[np.ndarray] = []
        lengths: list[np.ndarray] = []
        ranges: list[LevelRange] = []
        seen_lo = seen_hi = None
        taken = np.zeros(0, np.int64)
        for length, quota in zip(levels, quotas, strict=True):
            if length > len(nar.ranges):  # deeper than the narrowing went: the small tail's
                pick = nar.tail[(nar.tail_lcps >= length) & ~_member(nar.tail, taken)]
                pick = pick[self._live(pick, live)]
                taken = np.concatenate((taken, pick))
                ends.append(n - pick)
                lengths.append(self._lcps(pick, q, length))
                ranges.append(LevelRange(length, (ranges[-1].count if ranges else 0) + len(pick)))
                continue
            lo, hi = self._range(nar, length)
            if seen_lo is None:
                fresh = np.arange(lo, hi)
            else:
                fresh = np.concatenate((np.arange(lo, seen_lo), np.arange(seen_hi, hi)))
            total = len(fresh)
            if total > quota:
                fresh = fresh[np.linspace(0, total - 1, quota).astype(np.int64)] if quota else fresh[:0]
            fresh_p = self.sa[fresh].astype(np.int64) if len(fresh) else np.zeros(0, np.int64)
            if len(taken):  # the tail's places taken at a deeper level
                fresh_p = fresh_p[~_member(fresh_p, taken)]
                total -= len(taken)
            looked = len(fresh_p)
            ok = self._live(fresh_p, live)
            p = fresh_p[ok]
            if looked:
                ends.append(n - p)
                lengths.append(self._lcps(p, q, length))
            counted = (ranges[-1].count if ranges else 0) + (round(total * len(p) / looked) if looked else 0)
            ranges.append(LevelRange(length, counted))
            seen_lo, seen_hi = lo, hi
            taken = np.zeros(0, np.int64)
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
