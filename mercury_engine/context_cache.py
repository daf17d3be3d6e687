"""The incremental context cache: the prefix's keys/values reused across requests.

While a user types, consecutive completion requests on a document share almost all of their
context: the window's prefix starts at the same place and only its end (near the cursor)
changes. The fast sampler's dual cache (mercury_engine/fast_sampler.py) already reuses the context
*within* a block; this cache reuses the **prefix** *across* requests and blocks:

* After every full step the keys/values of the canvas' prefix positions are kept with the
  prefix's exact token ids (``store``). Entries are content-addressed — no document key is
  needed and none can be wrong: a request reuses the entry whose token ids share the longest
  common leading run with its own prefix (``lookup``), so the cache can only ever serve keys
  and values of tokens that are, at the same positions, in the request's context now.
* A full step that reuses ``c`` cached positions recomputes only positions ``c..L`` (the
  changed tail of the prefix, the span and the suffix), attending to the cached keys/values.

Bidirectional attention makes a reused prefix an approximation: the cached positions once
attended to text after them (the old tail, the old span, the old suffix) that has since
changed. The policy bounds how stale a reused entry may get: an entry is refreshed (a full
step recomputes every position) after ``refresh_every`` reuses in a row, and when the change
starts more than ``max_tail`` tokens before the end of the prefix (a far edit). Quality
against the uncached path is measured by ``benchmarks/engine/context_reuse.py`` (HumanEval
single-line, both arms in one run).

Torch-side only: the daemon never sees this cache (its requests just carry their text).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from mercury_engine.model import KV

# Measured by benchmarks/engine/context_reuse.py (HumanEval single-line while typing, 40 tasks;
# its --variant arms, one run): refreshing after every 8 reuses with no margin
# cost 4.6 points of edit similarity to the canonical line, every 4 with a 32-token margin 1.6,
# every 2 with a 64-token margin 0.2 (pass@1 unchanged in all): a reused prefix is refreshed
# after this many reuses...
REFRESH_EVERY = 2
# A change this many tokens or more before the end of the cached prefix is a far edit: the
# text after it is new to the cache, so recomputing everything costs little more and is exact.
MAX_TAIL_TOKENS = 96
# The last tokens before a change attend most to the changed text (and to the span right after
# them): this many of them are recomputed with the change even though their ids are unchanged
# (measured with REFRESH_EVERY above).
MARGIN_TOKENS = 64
# Reusing fewer leading tokens saves less than the extra bookkeeping of a split forward.
MIN_REUSE_TOKENS = 16
# Contexts kept (least recently used dropped first): a few open documents.
MAX_ENTRIES = 8


@dataclass(frozen=True)
class CachePolicy:
    refresh_every: int = REFRESH_EVERY
    max_tail: int = MAX_TAIL_TOKENS
    min_reuse: int = MIN_REUSE_TOKENS
    max_entries: int = MAX_ENTRIES
    margin: int = MARGIN_TOKENS


@dataclass
class Entry:
    ids: list[int]  # the prefix's token ids, position 0 first
    kv: list[KV]  # per layer, keys/values of those positions: [1, K, len(ids), E]
    reuses: int  # full steps served from this context since it was last computed exactly
    scope: str | None = None  # only requests of the same scope reuse it (mercury_engine.options.InfillOptions)


@dataclass(frozen=True)
class Reuse:
    """What a full step may take from the cache: the first ``length`` prefix positions."""
    length: int
    kv: list[KV]  # per layer [1, K, length, E]
    reuses: int  # the entry's reuse count (the new entry stored after this step has one more)


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    refreshes: int = 0  # lookups refused by the policy (reuse count or far edit)
    reused_tokens: int = 0
    computed_tokens: int = 0  # positions the full steps with context reuse on recomputed (hits and misses)

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


@dataclass
class ContextCache:
    """Per-context prefix keys/values. Used by one decoder thread (no locking)."""
    policy: CachePolicy = field(default_factory=CachePolicy)
    entries: list[Entry] = field(default_factory=list)  # most recently used last
    stats: CacheStats = field(default_factory=CacheStats)

    def _best(self, ids: list[int], scope: str | None) -> tuple[int, int]:
        """(index of the ``scope`` entry sharing the longest leading run with ``ids``, that length)."""
        best, length = -1, 0
        for i, e in enumerate(self.entries):
            if e.scope != scope:
                continue
            n = common_prefix(e.ids, ids)
            if n > length:
                best, length = i, n
        return best, length

    def lookup(self, prefix_ids: list[int], limit: int, scope: str | None = None) -> Reuse | None:
        """Cached keys/values of ``scope`` for the leading positions of ``prefix_ids`` (at most
        ``limit``), or None when nothing useful is cached or the policy asks for a refresh."""
        i, n = self._best(prefix_ids, scope)
        n = min(n, limit) - self.policy.margin
        if i < 0 or n < self.policy.min_reuse:
            self.stats.misses += 1
            return None
        e = self.entries[i]
        if e.reuses >= self.policy.refresh_every or len(prefix_ids) - n > self.policy.max_tail:
            self.stats.refreshes += 1
            return None
        self.entries.append(self.entries.pop(i))
        self.stats.hits += 1
        self.stats.reused_tokens += n
        return Reuse(n, [(k[:, :, :n], v[:, :, :n]) for k, v in e.kv], e.reuses)

    def store(self, prefix_ids: list[int], kv: list[KV], reuses: int, scope: str | None = None) -> None:
        """Keep ``kv`` (per layer [1, K, >= len(prefix_ids), E]; the first positions are the
        prefix's) as the context of ``prefix_ids``, replacing the entry of the same document
        (the one sharing at least ``min_reuse`` leading tokens)."""
        p = len(prefix_ids)
        if p < self.policy.min_reuse or self.policy.max_entries <= 0:
            return
        kept = [(k[:, :, :p].contiguous(), v[:, :, :p].contiguous()) for k, v in kv]
        i, n = self._best(prefix_ids, scope)
        if i >= 0 and n >= self.policy.min_reuse:
            self.entries.pop(i)
        self.entries.append(Entry(list(prefix_ids), kept, reuses, scope))
        del self.entries[: max(0, len(self.entries) - self.policy.max_entries)]

    def clear(self) -> None:
        self.entries.clear()

    def memory_bytes(self) -> int:
        return sum(t.numel() * t.element_size() for e in self.entries for kv in e.kv for t in kv)


def join_kv(cached: list[KV], computed: list[KV]) -> list[KV]:
    """Per layer: the cached leading positions followed by the recomputed ones."""
    return [(torch.cat([ck, k], dim=2), torch.cat([cv, v], dim=2))
            for (ck, cv), (k, v) in zip(cached, computed, strict=True)]
