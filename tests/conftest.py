"""Shared fixtures and helpers live in ``tests/support/``; registered (and re-exported) here."""

from __future__ import annotations

import os

# Triton kernels run on the CPU through the interpreter (set before anything imports triton).
os.environ.setdefault("TRITON_INTERPRET", "1")

from tests.support.fixtures import one_torch_thread, tiny_model  # noqa: E402, F401
from tests.support.server import PROBE_TEXT, TINY_MODEL_DIR, probe_positions, serve_command  # noqa: E402, F401
