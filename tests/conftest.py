"""Shared fixtures and helpers live in ``tests/support/``; registered (and re-exported) here."""

from __future__ import annotations

import os
import tempfile

# Triton kernels run on the CPU through the interpreter (set before anything imports triton).
os.environ.setdefault("TRITON_INTERPRET", "1")
# The refactor CLI's persistent index goes to a directory of this run, not the user's cache.
# A next-edit rule that raises fails its test (the daemon logs and skips it: ``pipeline``).
os.environ["MERCURY_LSP_STRICT_RULES"] = "1"
os.environ["MERCURY_LSP_CACHE"] = tempfile.mkdtemp(prefix="mercury-lsp-test-cache-")

from tests.support.fixtures import one_torch_thread, tiny_model  # noqa: E402, F401
from tests.support.server import PROBE_TEXT, TINY_MODEL_DIR, probe_positions, serve_command  # noqa: E402, F401
