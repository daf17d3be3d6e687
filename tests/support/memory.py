"""Helpers for tests that build a repository memory on a real folder."""

from __future__ import annotations

import os
from pathlib import Path

from mercury_lsp.memory.service import Memory, MemoryOptions
from mercury_lsp.memory.store import RACY_NS

SETTLE_S = 30.0  # an upper bound on indexing a handful of files; never reached when all is well


def settle(*paths: Path) -> None:
    """Date files back past the racy window, as if written a while ago."""
    for p in paths:
        t = p.stat().st_mtime_ns - 2 * RACY_NS
        os.utime(p, ns=(t, t))


def write(root: Path, files: dict[str, str | bytes]) -> None:
    """Write ``files`` (relative path -> text or bytes) under ``root``, dated past the racy window."""
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
        settle(p)


def built(root: Path, **kw) -> Memory:
    """A started memory of ``root`` whose first build has finished."""
    opts = kw.pop("options", MemoryOptions())
    mem = Memory([root], opts, **kw)
    mem.start()
    assert mem.wait_built(SETTLE_S)
    return mem
