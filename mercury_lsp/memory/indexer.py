"""The memory's one background thread: builds every root's memory after start, then keeps it
current (files changed on disk read again, loose files turned into shards, shards with much dead
text rebuilt, the manifest saved). It never runs on the event loop and no request waits for it:
requests read whatever is published so far.

Progress goes to ``on_progress(message, done, total)`` (the server turns it into work-done
progress); ``on_done(summary)`` is called once when the first build has finished.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mercury_lsp.memory.sources import Exclude, list_sources
from mercury_lsp.memory.store import LOOSE_MAX_BYTES, MEMORY_ONLY_BYTES, SHARD_BYTES, RootMemory

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]
IDLE_WAIT_S = 5.0  # how often an idle indexer looks for work it was not woken for


@dataclass(frozen=True)
class Limits:
    max_files: int  # files listed and read per root (the rest is left out, said once)
    max_bytes: int  # text kept per root


@dataclass
class BuildSummary:
    files: int = 0  # files indexed
    read: int = 0  # files read by this build (the rest came from the saved index)
    capped: bool = False
    seconds: float = 0.0
    persisted: bool = True


class Indexer:
    def __init__(self, memories: list[RootMemory], limits: Limits, exclude: Exclude | None,
                 allowed: list[Path], on_progress: Progress | None = None,
                 on_done: Callable[[BuildSummary], None] | None = None, skip: Path | None = None) -> None:
        self.memories = memories
        self.limits = limits
        self.exclude = exclude
        self.allowed = allowed
        self.on_progress = on_progress or (lambda *_: None)
        self.on_done = on_done or (lambda _: None)
        self.skip = skip
        self._wake = threading.Event()
        self._stop = threading.Event()
        self.built = threading.Event()  # the first build finished (tests and the CLI wait on it)
        self._thread: threading.Thread | None = None
        self._passes = 0  # update passes finished (``settle`` waits for the next one)
        self._running = False
        self._passed = threading.Condition()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="mercury-memory", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until the first build and one update pass after this call have finished (the
        changes notified so far are in); False on timeout or when the indexer has stopped."""
        if not self.built.wait(timeout):
            return False
        with self._passed:
            # a pass under way may have taken its work before this call: wait for the next one
            target = self._passes + (2 if self._running else 1)
            self._wake.set()
            return self._passed.wait_for(lambda: self._passes >= target or self._stop.is_set(), timeout) \
                and not self._stop.is_set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        with self._passed:
            self._passed.notify_all()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    # ------------------------------------------------------------------ the thread
    def _run(self) -> None:
        import time

        t0 = time.monotonic()
        summary = BuildSummary()
        try:
            for mem in self.memories:
                if self._stop.is_set():
                    return
                self._build(mem, summary)
        except Exception as exc:  # the memory degrades to what was built; completions go on
            log.error("memory: indexing stopped (%s: %s)", type(exc).__name__, exc)
        summary.seconds = time.monotonic() - t0
        summary.persisted = all(m.folder is not None for m in self.memories)
        self.built.set()
        self.on_done(summary)
        while not self._stop.is_set():
            self._wake.wait(IDLE_WAIT_S)
            with self._passed:
                self._wake.clear()
                self._running = True
            if self._stop.is_set():
                return
            try:
                for mem in self.memories:
                    self._update(mem)
                    mem.release()  # the pages the last queries mapped: RSS is the heap, not the index
            except Exception as exc:
                log.error("memory: an update failed (%s: %s)", type(exc).__name__, exc)
            with self._passed:
                self._passes += 1
                self._running = False
                self._passed.notify_all()

    def _budget(self, mem: RootMemory) -> int:
        return self.limits.max_bytes if mem.folder is not None else min(self.limits.max_bytes, MEMORY_ONLY_BYTES)

    def _build(self, mem: RootMemory, summary: BuildSummary) -> None:
        self.on_progress("listing files", 0, 0)
        held = mem.load()
        listing = list_sources([mem.root], self.exclude, self.limits.max_files, self.skip)
        if listing.capped:
            summary.capped = True
            log.warning("memory: %s has more than %d files; the memory holds the first %d (setting memory.maxFiles)",
                        mem.root.name, self.limits.max_files, self.limits.max_files)
        if held:
            self._drop_excluded(mem)
        todo = mem.stale(listing.files)
        summary.files += len(listing.files) - len(todo)
        self._index(mem, todo, summary)
        mem.save()

    def _drop_excluded(self, mem: RootMemory) -> None:
        """Files the exclusion matches now are never read from a saved shard again."""
        if self.exclude is None:
            return
        for path in list(mem.where):
            if self.exclude(Path(path)):
                mem.changed(path, deleted=True)

    def _index(self, mem: RootMemory, paths: list[Path], summary: BuildSummary) -> None:
        batch: list = []
        batch_bytes = 0
        budget = self._budget(mem)
        full = False
        for i, path in enumerate(paths):
            if self._stop.is_set():
                return
            if mem.text_bytes + batch_bytes >= budget:
                if not full:
                    full = summary.capped = True
                    log.warning("memory: %s holds more text than the memory keeps (%d MB); the rest is left out "
                                "(setting memory.maxMegabytes)", mem.root.name, budget >> 20)
                break
            got = mem.read(path)
            if got is None:
                continue
            batch.append(got)
            batch_bytes += len(got[1])
            summary.read += 1
            if batch_bytes >= SHARD_BYTES:
                mem.add_shard(batch)
                summary.files += len(batch)
                batch, batch_bytes = [], 0
                self.on_progress(f"indexed {summary.files} files", i + 1, len(paths))
        if batch:
            mem.add_shard(batch)
            summary.files += len(batch)
        self.on_progress(f"indexed {summary.files} files", len(paths), len(paths))

    def _update(self, mem: RootMemory) -> None:
        changed = False
        for path in mem.take_pending():
            if self.exclude is not None and self.exclude(path):
                continue
            got = mem.read(path)
            if got is not None:
                mem.add_loose(*got)
                changed = True
        if mem.loose_bytes() >= LOOSE_MAX_BYTES:
            paths = [Path(p) for p in list(mem.loose)]
            self._index(mem, paths, BuildSummary())
            changed = True
        for name in mem.to_rebuild():
            self._index(mem, mem.drop_shard(name), BuildSummary())
            changed = True
        if changed:
            mem.save()
