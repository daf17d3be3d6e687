"""The daemon's allocator settings (mercury_lsp/heap.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from mercury_lsp import heap

THREADS = 8  # more threads allocating at once than the cap: each would get an arena of its own

# A process that starts THREADS threads which all allocate while alive together, then prints
# glibc's per-arena statistics (malloc_stats writes them to stderr, one "Arena N:" each).
PROBE = textwrap.dedent(f"""
    import ctypes, sys, threading
    from mercury_lsp import heap
    if sys.argv[1] == "capped":
        assert heap.configure_allocator()
    barrier = threading.Barrier({THREADS})
    def work():
        blocks = [bytearray(200_000) for _ in range(4)]  # past pymalloc: glibc's malloc
        barrier.wait()
    threads = [threading.Thread(target=work) for _ in range({THREADS})]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    heap._libc.malloc_stats()
""")


def arenas(mode: str, env: dict[str, str] | None = None) -> int:
    import os

    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True,
                         env={**os.environ, **(env or {})})
    return sum(line.startswith("Arena ") for line in out.stderr.splitlines())


@pytest.mark.skipif(heap._libc is None or not hasattr(heap._libc, "mallopt"), reason="glibc only")
def test_the_daemon_caps_the_allocators_arenas(monkeypatch):
    """Every thread that allocated had an arena of its own, each keeping its free space (issue 27,
    F11: the soak's heaps reached twice the memory in use). Capped, threads share ARENA_MAX."""
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert arenas("default") > heap.ARENA_MAX
    assert arenas("capped") <= heap.ARENA_MAX


# A 5 MB block freed, then another: how much of the second is mapped on its own (mallinfo2's
# hblkhd), not carved from the heap.
LARGE = textwrap.dedent("""
    import ctypes, sys
    from mercury_lsp import heap
    if sys.argv[1] == "configured":
        assert heap.configure_allocator()
    class Info(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                    "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
    heap._libc.mallinfo2.restype = Info
    first = bytearray(5 << 20)
    del first  # glibc's own threshold rises to 5 MB here
    second = bytearray(5 << 20)
    print(heap._libc.mallinfo2().hblkhd)
""")


@pytest.mark.skipif(heap._libc is None or not hasattr(heap._libc, "mallinfo2"), reason="glibc >= 2.33 only")
def test_large_blocks_stay_mapped_after_one_is_freed(monkeypatch):
    """The soak's 5 MB documents: by default the second one comes from the heap (and leaves a hole
    there when freed); with the daemon's fixed threshold every one is mapped and given back."""
    import os

    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)

    def mapped(mode: str) -> int:
        out = subprocess.run([sys.executable, "-c", LARGE, mode], capture_output=True, text=True, check=True,
                             env=dict(os.environ))
        return int(out.stdout.split()[-1])

    assert mapped("default") < 5 << 20
    assert mapped("configured") >= 5 << 20


def test_the_environment_wins(monkeypatch):
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", str(1 << 20))
    assert heap.configure_allocator() is False


def test_the_heap_trace_names_what_grew(tmp_path, monkeypatch):
    """The debugging report (``MERCURY_LSP_HEAP_TRACE``): off without its variable; with it, each
    report after the first lists the allocation sites that grew since, with their counts."""
    import json
    import tracemalloc

    from mercury_lsp.heap_trace import ENV_FILE, HeapTrace

    monkeypatch.delenv(ENV_FILE, raising=False)
    assert HeapTrace.from_env() is None
    monkeypatch.setenv(ENV_FILE, str(tmp_path / "trace.jsonl"))
    trace = HeapTrace.from_env()
    kept = []
    tracemalloc.start(trace.frames)
    try:
        trace.report()
        kept.extend(bytearray(1000) for _ in range(2000))  # ~2 MB from this line
        second = trace.report()
    finally:
        tracemalloc.stop()
    top = second["grown"][0]
    assert "test_heap.py" in top["site"] and top["grew_count"] >= 2000 and top["grew_kb"] > 1900
    lines = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert len(lines) == 2 and "grown" not in lines[0] and lines[1]["rss_mb"] > 0



def test_a_busy_daemon_trims_and_an_idle_one_lets_go_once():
    """While messages come, each period ends with a trim; the first period without one runs the
    idle release (next edit's kept trees), once, until messages come again."""
    released = []
    trim = heap.PeriodicTrim(on_idle=[lambda: released.append(1)])
    assert trim.due() is None  # a daemon that never worked does nothing
    trim.touch()
    assert trim.due() == trim._trim
    assert trim.due() == trim._release
    assert trim.due() is None and trim.due() is None
    trim._release()
    assert released == [1] and trim.trims == 1
    trim.touch()
    assert trim.due() == trim._trim and trim.due() == trim._release


def test_the_daemons_idle_release_drops_next_edits_kept_trees():
    from mercury_lsp.next_edit.query import DocState
    from mercury_lsp.next_edit.tree import DISK_TREES, parse_all
    from mercury_lsp.server.transport import IDLE_RELEASE
    from mercury_lsp.syntax import Grammars

    grammars = Grammars()
    if grammars.parser("python") is None:
        pytest.skip("no Python grammar")
    parse_all([DocState("file:///ws/kept.py", "x = 1\n", "python", None)], grammars)
    assert DISK_TREES.bytes > 0
    trim = heap.PeriodicTrim(on_idle=IDLE_RELEASE)
    trim.touch()
    trim.due()
    trim.due()()  # the idle release
    assert len(DISK_TREES) == 0 and DISK_TREES.bytes == 0
