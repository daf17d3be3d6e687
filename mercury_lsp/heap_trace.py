"""Finding what grows: a debug-only heap report, off unless ``MERCURY_LSP_HEAP_TRACE`` names a file.

With it set, the daemon starts ``tracemalloc`` and, every ``MERCURY_LSP_HEAP_TRACE_EVERY_S``
seconds (``REPORT_EVERY_S``), appends one JSON line to that file: the RSS, glibc's ``mallinfo2``
(heap in use, free but kept, mmapped blocks: to tell Python objects that grow from an allocator
that keeps freed pages), the collector's counts, and the allocation sites (file:line) whose memory
grew the most since the first report, with their block counts. The first report is the baseline
(taken after the model has loaded); a leak shows as a site whose size and count rise report after
report. Tracing costs time and memory (every allocation's traceback), so it is never on by default;
``benchmarks/lsp/soak.py --heap-trace FILE`` turns it on for a soak.
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import json
import logging
import os
import time
import tracemalloc
from collections import Counter
from pathlib import Path

from mercury_lsp import heap

log = logging.getLogger(__name__)

ENV_FILE = "MERCURY_LSP_HEAP_TRACE"
ENV_EVERY = "MERCURY_LSP_HEAP_TRACE_EVERY_S"
REPORT_EVERY_S = 60.0
ENV_FRAMES = "MERCURY_LSP_HEAP_TRACE_FRAMES"
# Frames kept per allocation. One keeps tracing cheap enough for a soak (six made each report take
# minutes in a daemon with torch loaded); more (the variable) show which caller of a helper allocates.
TRACE_FRAMES = 1
TOP_TYPES = 15  # object types whose count grew the most, listed per report
TOP_SITES = 25  # allocation sites listed per report


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
        "keepcost")]


def mallinfo() -> dict[str, float] | None:
    """glibc's heap figures in MB (``None`` elsewhere): arena (the main heap's size), hblkhd (in
    mmapped blocks), uordblks (in use), fordblks (free, kept by the allocator)."""
    libc = heap._libc
    if libc is None or not hasattr(libc, "mallinfo2"):
        return None
    libc.mallinfo2.restype = _MallInfo2
    m = libc.mallinfo2()
    return {k: round(getattr(m, k) / 2**20, 1) for k in ("arena", "hblkhd", "uordblks", "fordblks")}


def _rss_mb() -> float | None:
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024
    except (OSError, StopIteration):
        return None


class HeapTrace:
    """Appends a report to ``path`` every ``every_s`` seconds (a timer on the running loop)."""

    def __init__(self, path: Path, every_s: float = REPORT_EVERY_S, frames: int = TRACE_FRAMES) -> None:
        self.path = path
        self.every_s = every_s
        self.frames = frames
        self._base: tracemalloc.Snapshot | None = None
        self._types: Counter[str] | None = None
        self._t0 = time.monotonic()
        self._timer: asyncio.TimerHandle | None = None

    @classmethod
    def from_env(cls) -> HeapTrace | None:
        if not (name := os.environ.get(ENV_FILE)):
            return None
        return cls(Path(name), float(os.environ.get(ENV_EVERY) or REPORT_EVERY_S),
                   int(os.environ.get(ENV_FRAMES) or TRACE_FRAMES))

    def start(self) -> HeapTrace:
        tracemalloc.start(self.frames)
        self._timer = asyncio.get_running_loop().call_later(self.every_s, self._tick)
        log.info("heap trace on: a report every %.0f s to %s", self.every_s, self.path)
        return self

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        tracemalloc.stop()

    def _tick(self) -> None:
        try:
            self.report()
        except Exception:  # a debugging aid never ends the daemon
            log.exception("heap trace report failed")
        self._timer = asyncio.get_running_loop().call_later(self.every_s, self._tick)

    def report(self) -> dict:
        t0 = time.perf_counter()
        gc.collect()
        types = Counter(type(o).__name__ for o in gc.get_objects())
        snap = tracemalloc.take_snapshot()  # unfiltered: filter_traces is a Python loop over every trace
        traced, peak = tracemalloc.get_traced_memory()
        out: dict = {"t_s": round(time.monotonic() - self._t0, 1), "rss_mb": _rss_mb(),
                     "traced_mb": round(traced / 2**20, 1), "malloc": mallinfo(), "gc_counts": gc.get_count(),
                     "gc_objects": len(gc.get_objects()), "gc_frozen": gc.get_freeze_count()}
        if self._base is None:
            self._base, self._types = snap, types
        else:
            out["types_grown"] = (types - self._types).most_common(TOP_TYPES)
            group = "traceback" if self.frames > 1 else "lineno"
            out["grown"] = [
                {"site": str(d.traceback[0]), "callers": [str(f) for f in list(d.traceback)[1:4]],
                 "size_kb": round(d.size / 1024, 1), "grew_kb": round(d.size_diff / 1024, 1),
                 "count": d.count, "grew_count": d.count_diff}
                for d in snap.compare_to(self._base, group)[:TOP_SITES]]
        out["report_ms"] = round((time.perf_counter() - t0) * 1000)
        with self.path.open("a") as f:
            f.write(json.dumps(out) + "\n")
        return out
