"""Serving the tiny test model: the ``serve`` command line, and a document with many places to
complete (``PROBE_TEXT``)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

# Created once per test session (the server only reads it after `initialized`).
_RUN = os.environ.get("MERCURY_TEST_RUN", str(os.getpid()))
TINY_MODEL_DIR = Path(tempfile.gettempdir()) / f"mercury-lsp-tests-{_RUN}" / "tiny"


def serve_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "mercury_lsp.cli", "serve", "--model", str(TINY_MODEL_DIR),
            "--dtype", "float32", "--threads", "1", *extra]


# A document with many places to complete: with random weights, most suggestions are
# undecodable bytes (cut to nothing); `probe_positions` lists where to look for a real one.
PROBE_TEXT = (
    "import os\n\n\ndef add(a, b):\n    return a\n\n\ndef mul(x, y):\n    z = x\n    return z\n\n\n"
    "class Point:\n    def __init__(self, x):\n        self.x = x\n\n\nfor i in range(10):\n    print(i)\n"
    "total = 0\nname = 'a'\nvalues = [1, 2]\nresult = add(1, 2)\n"
    + "".join(f"item_{i} = values[{i % 2}] + total * {i}\n" for i in range(24))
)


def probe_positions() -> list[tuple[int, int]]:
    """(line, column) at the end of every line that is completed as a single line."""
    out = []
    for i, line in enumerate(PROBE_TEXT.split("\n")):
        if line.strip() and not line.rstrip().endswith(":"):
            out.append((i, len(line)))
    return out
