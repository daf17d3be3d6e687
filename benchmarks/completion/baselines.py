"""The two no-model baselines of issue #24, computed by the benchmark itself (no server).

Both read "the repository's other text": every other source file of the checkout (as committed)
and the cut document (the case's file with the target removed; never the original file).

* **line copy** (the issue's "20 lines"): among the repository's other lines, those that start
  with the typed line's text (the cursor's line before the cursor, leading whitespace stripped;
  lines compared with leading and trailing whitespace stripped); the most frequent continuation
  (the rest of such a line), empty continuations aside. Ties: the line that sorts first.
* **longest suffix** (the issue's "40 lines"): the longest suffix of the text before the cursor
  (across lines, at most ``MAX_QUERY_CHARS``) that occurs in the other files or elsewhere in the
  cut document (not ending at the cursor), and the most frequent non-empty rest of line after its
  occurrences. Ties: the first seen (the cut document in order first, then suffix-array order).
  ``longest_suffix_30`` is the same, shown only when the match is at least ``MIN_MATCH_30``
  characters.

The index of a repository: the sorted stripped lines with their counts (numpy), and a suffix
array of the reversed concatenated files (prefix doubling in numpy, sorted to
``MAX_QUERY_CHARS`` characters, which is all a query compares), so the longest suffix of a query
is one binary search and a walk to its neighbours.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass

import numpy as np

from benchmarks.completion.text import Cut

MAX_QUERY_CHARS = 2000
MIN_MATCH_30 = 30
MAX_OCCURRENCES = 20_000  # occurrences of a longest match looked at (a very short match has many)
SEP = "\0"  # between files: no query contains it (files with NUL bytes are skipped)


@dataclass(frozen=True)
class Guess:
    continuation: str  # what the baseline puts after the cursor (empty: nothing shown)
    match_chars: int = 0  # longest suffix: the match length; line copy: the typed text's length
    count: int = 0  # occurrences of the chosen continuation
    occurrences: int = 0  # occurrences looked at


NOTHING = Guess("")


def suffix_array(text: str, depth: int = MAX_QUERY_CHARS) -> np.ndarray:
    """Start offsets of ``text``'s suffixes sorted by their first ``depth`` code points (ties in
    any order), by prefix doubling; a suffix that ends sorts before its extensions."""
    n = len(text)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    _, rank = np.unique(codes, return_inverse=True)
    rank = rank.astype(np.int64)
    sa = np.argsort(rank, kind="stable")
    k = 1
    while k < depth:
        second = np.zeros(n, dtype=np.int64)
        second[: n - k] = rank[k:] + 1  # 0: past the end
        key = rank * (n + 1) + second
        sa = np.argsort(key, kind="stable")
        ks = key[sa]
        new = np.empty(n, dtype=np.int64)
        new[sa] = np.concatenate(([0], np.cumsum(ks[1:] != ks[:-1])))
        rank = new
        if int(rank.max()) == n - 1:
            break
        k *= 2
    return sa


def common_prefix(a: str, b: str) -> int:
    """Length of the common prefix of two strings (slice comparisons, O(log n) of them)."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:  # a[:lo] == b[:lo], a[:hi] != b[:hi]
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class RepoIndex:
    """A repository's other text for the baselines: ``files`` maps path -> text (as committed)."""

    def __init__(self, files: dict[str, str]) -> None:
        self.paths = list(files)
        self.spans: dict[str, tuple[int, int]] = {}
        parts, pos = [], 0
        for p, t in files.items():
            self.spans[p] = (pos, pos + len(t))
            parts.append(t)
            pos += len(t) + 1
        self.text = SEP.join(parts) + SEP
        self.rev = self.text[::-1]
        self.sa = suffix_array(self.rev)
        lines = Counter(ln.strip() for t in files.values() for ln in t.split("\n"))
        lines.pop("", None)
        self.lines = sorted(lines)
        self.line_counts = np.array([lines[x] for x in self.lines], dtype=np.int64)

    # ------------------------------------------------------------------ line copy
    def _line_range(self, typed: str) -> tuple[int, int]:
        return bisect.bisect_left(self.lines, typed), bisect.bisect_left(self.lines, typed + "\U0010ffff")

    def line_occurrences(self, line: str) -> int:
        """How often ``line`` (stripped) occurs among the repository's lines."""
        i = bisect.bisect_left(self.lines, line.strip())
        return int(self.line_counts[i]) if i < len(self.lines) and self.lines[i] == line.strip() else 0

    def line_copy(self, prefix_line: str, original_line: str) -> Guess:
        """The most frequent continuation of ``prefix_line`` among the other lines (the cursor's
        own line, ``original_line``, is not one of them)."""
        typed = prefix_line.lstrip()
        lo, hi = self._line_range(typed)
        if lo >= hi:
            return NOTHING
        counts = self.line_counts[lo:hi].copy()
        own = bisect.bisect_left(self.lines, original_line.strip(), lo, hi)
        if own < hi and self.lines[own] == original_line.strip():
            counts[own - lo] -= 1
        if self.lines[lo] == typed:
            counts[0] = 0  # the typed text alone: nothing to continue with
        best = int(np.argmax(counts))
        if counts[best] <= 0:
            return NOTHING
        cont = self.lines[lo + best][len(typed):]
        if not cont.strip():
            return NOTHING
        return Guess(cont, len(typed), int(counts[best]), int(counts.sum()))

    # ------------------------------------------------------------------ longest suffix
    def _search(self, q: str) -> int:
        """First suffix-array index whose reversed suffix is >= ``q`` (compared on len(q) chars)."""
        lo, hi, m, rev, sa = 0, len(self.sa), len(q), self.rev, self.sa
        while lo < hi:
            mid = (lo + hi) // 2
            p = int(sa[mid])
            if rev[p:p + m] < q:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _index_matches(self, q: str, own: tuple[int, int] | None) -> tuple[int, list[int]]:
        """(longest match length, forward end offsets of its occurrences) in the other files."""
        i = self._search(q)
        n = len(self.text)
        best, sides = 0, []
        for start, step in ((i - 1, -1), (i, 1)):
            j = start
            while 0 <= j < len(self.sa):
                p = int(self.sa[j])
                e = n - p
                if own is None or not own[0] <= e <= own[1]:
                    best = max(best, common_prefix(q, self.rev[p:p + len(q)]))
                    break
                j += step
            sides.append((start, step))
        if best == 0:
            return 0, []
        ends: list[int] = []
        want = q[:best]
        for start, step in sides:
            j, looked = start, 0
            while 0 <= j < len(self.sa) and looked < MAX_OCCURRENCES:
                p = int(self.sa[j])
                if self.rev[p:p + best] != want:
                    break
                e = n - p
                if own is None or not own[0] <= e <= own[1]:
                    ends.append(e)
                j += step
                looked += 1
        return best, ends

    @staticmethod
    def _document_matches(doc: str, cursor: int, query: str) -> tuple[int, list[int]]:
        """(longest suffix of ``query`` found in ``doc`` not ending at ``cursor``, end offsets)."""
        def found(length: int) -> bool:
            s = query[len(query) - length:]
            pos = doc.find(s)
            if pos >= 0 and pos + length == cursor:
                pos = doc.find(s, pos + 1)
            return pos >= 0

        lo, hi = 0, len(query)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if found(mid):
                lo = mid
            else:
                hi = mid - 1
        if lo == 0:
            return 0, []
        s, ends, pos = query[len(query) - lo:], [], doc.find(query[len(query) - lo:])
        while pos >= 0 and len(ends) < MAX_OCCURRENCES:
            if pos + lo != cursor:
                ends.append(pos + lo)
            pos = doc.find(s, pos + 1)
        return lo, ends

    def longest_suffix(self, path: str, c: Cut) -> Guess:
        query = c.text[max(0, c.cursor - MAX_QUERY_CHARS):c.cursor]
        if not query:
            return NOTHING
        doc_len, doc_ends = self._document_matches(c.text, c.cursor, query)
        idx_len, idx_ends = self._index_matches(query[::-1], self.spans.get(path))
        best = max(doc_len, idx_len)
        if best == 0:
            return NOTHING
        conts: Counter[str] = Counter()
        for text, ends, length in ((c.text, doc_ends, doc_len), (self.text, idx_ends, idx_len)):
            if length != best:
                continue
            for e in ends:
                stop = min(x for x in (text.find("\n", e), text.find(SEP, e), len(text)) if x >= 0)
                cont = text[e:stop].rstrip()
                if cont:
                    conts[cont] += 1
        if not conts:
            return Guess("", best, 0, len(doc_ends) + len(idx_ends))
        cont, count = max(conts.items(), key=lambda kv: kv[1])
        return Guess(cont, best, count, sum(conts.values()))
