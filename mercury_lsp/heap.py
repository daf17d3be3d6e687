"""Giving freed memory back to the system.

glibc keeps freed heap memory for reuse, and after a large block is freed it raises its mmap
threshold, so the next multi-megabyte strings (a reopened 5 MB document, a reloaded model's
buffers) come from the heap too and the process's RSS never goes down. ``malloc_trim`` returns
the free pages. Elsewhere (macOS, musl, Windows) this is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import sys

log = logging.getLogger(__name__)

# Documents at least this large return their memory when closed (smaller ones: not worth a trim).
TRIM_AFTER_CHARS = 1 << 20

_libc = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _libc.malloc_trim  # noqa: B018 - glibc only
    except (OSError, AttributeError):
        _libc = None


def release_free_memory(collect: bool = False) -> None:
    """Hand free heap pages back to the system (``collect``: run the cycle collector first)."""
    if collect:
        gc.collect()
    if _libc is not None:
        _libc.malloc_trim(0)
