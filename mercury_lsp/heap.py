"""Giving freed memory back to the system.

glibc keeps freed heap memory for reuse, and after a large block is freed it raises its mmap
threshold, so the next multi-megabyte strings (a reopened 5 MB document, a reloaded model's
buffers) come from the heap too and the process's RSS never goes down. ``malloc_trim`` returns
the free pages. Elsewhere (macOS, musl, Windows) this is a no-op.

A daemon at work trims every ``TRIM_EVERY_S`` (``PeriodicTrim``): what one request frees (the
workspace files a next edit read, their parse trees) stays in its arena's pages until it is
trimmed (``benchmarks/lsp/soak.py``).

A daemon also caps glibc's arenas (``configure_allocator``): by default every thread that
allocates gets an arena of its own, up to eight per core, and each keeps the free space its
requests left between the blocks still in use; a trim returns only whole free pages, so that
space grew with the number of arenas (the soak: the heap in use stayed near 200 MB while the
heaps' total climbed past 420 MB, RSS +2 MB/min after 20 minutes), and fixes the threshold past
which a block is mapped on its own, so large documents never settle in the heap.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence

log = logging.getLogger(__name__)

# Documents at least this large return their memory when closed (smaller ones: not worth a trim).
TRIM_AFTER_CHARS = 1 << 20
# A daemon that handled messages since its last trim trims this often: between trims its RSS
# swings by what the requests of that time freed (soak: +-50 MB around 700 MB untrimmed, 620 MB
# with a trim every 30 s), and a trim costs milliseconds.
TRIM_EVERY_S = 30.0

# glibc's arenas for the whole daemon (``mallopt(M_ARENA_MAX)``). Its threads that allocate (the
# event loop, the engine worker, the parse and request pools, torch's) share them: malloc takes
# an arena's lock for microseconds, and the work is the model's, not the allocator's. Two, the
# value commonly advised for Python servers: the soak's tail slope and RSS side by side in
# benchmarks/results/soak.json's note. ``MALLOC_ARENA_MAX`` in the environment wins.
ARENA_MAX = 2
_M_ARENA_MAX = -8  # glibc malloc.h
# Blocks from this size up are mapped on their own and unmapped when freed (``M_MMAP_THRESHOLD``).
# Set, it stays put: glibc's own threshold rises to every mapped block freed (up to 32 MB), so after
# the first 5 MB document the next ones (its text, its UTF-8 and JSON copies) come from the heap and
# leave holes there the trim cannot return. 4 MiB: above the engine's tensors for the embedded model
# (a 1 024-token window's activations are 1 MiB each), so the model's steps are not mapping pages.
# ``MALLOC_MMAP_THRESHOLD_`` in the environment wins.
MMAP_THRESHOLD = 4 << 20
_M_MMAP_THRESHOLD = -3  # glibc malloc.h

_libc = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _libc.malloc_trim  # noqa: B018 - glibc only
    except (OSError, AttributeError):
        _libc = None


def configure_allocator() -> bool:
    """Cap glibc's arenas at ``ARENA_MAX`` (before the daemon starts its threads: arenas that exist
    stay) and fix its mmap threshold at ``MMAP_THRESHOLD``. False where there is no glibc, or the
    environment already sets them (each setting the environment names is left to it)."""
    if _libc is None:
        return False
    done = False
    if not os.environ.get("MALLOC_MMAP_THRESHOLD_"):
        done = bool(_libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    if not os.environ.get("MALLOC_ARENA_MAX"):
        done = bool(_libc.mallopt(_M_ARENA_MAX, ARENA_MAX)) or done
    return done


def settle() -> None:
    """A model has loaded (or replaced another): collect what is garbage now, then freeze the
    survivors (the model, torch, every module: about 220 000 objects) out of the collector's
    sight. CPython runs a full collection only when the objects that survived since the last one
    exceed a quarter of the long-lived ones: with those 220 000 counted, garbage cycles (a
    parse tree in a failed request's traceback) waited minutes for one; frozen, they do not
    count, and a full pass skips them. Unfrozen first, so a replaced model's cycles go too."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    release_free_memory()


def release_free_memory(collect: bool = False) -> None:
    """Hand free heap pages back to the system (``collect``: run the cycle collector first)."""
    if collect:
        gc.collect()
    if _libc is not None:
        _libc.malloc_trim(0)


class PeriodicTrim:
    """Trims the heap every ``every_s`` seconds while messages come in (``touch``), on a worker
    thread. The first period without a message, the daemon has gone idle: ``on_idle`` runs (what
    only saves work while the user types lets go: next edit's kept trees of files on disk), then
    one more trim, and the daemon is left alone. A timer, not a task: ``start()`` on the running
    loop, ``stop()`` when the daemon ends."""

    def __init__(self, every_s: float = TRIM_EVERY_S, on_idle: Sequence[Callable[[], None]] = ()) -> None:
        self.every_s = every_s
        self.busy = False
        self.idle = True
        self.trims = 0
        self.on_idle = tuple(on_idle)
        self._timer: asyncio.TimerHandle | None = None

    def touch(self) -> None:
        self.busy = True

    def start(self) -> PeriodicTrim:
        self._timer = asyncio.get_running_loop().call_later(self.every_s, self._tick)
        return self

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def due(self) -> Callable[[], None] | None:
        """What this period's end runs: a trim after messages, the idle release after the first
        period without one, else nothing."""
        if self.busy:
            self.busy, self.idle = False, False
            return self._trim
        if not self.idle:
            self.idle = True
            return self._release
        return None

    def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        work = self.due()
        if work is not None:
            loop.run_in_executor(None, work)
        self._timer = loop.call_later(self.every_s, self._tick)

    def _release(self) -> None:
        for release in self.on_idle:
            release()
        self._trim()

    def _trim(self) -> None:
        t0 = time.perf_counter()
        release_free_memory()
        self.trims += 1
        log.debug("heap trimmed in %.1f ms", (time.perf_counter() - t0) * 1000)
