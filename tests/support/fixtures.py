"""Shared pytest fixtures (registered in ``tests/conftest.py``): the tiny random-weights checkpoint
and one torch thread per module."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.server import TINY_MODEL_DIR


@pytest.fixture(scope="session")
def tiny_model() -> Path:
    if not (TINY_MODEL_DIR / "config.json").exists():
        # A fixed hash seed makes the tokenizer (and so every suggestion) the same in every run.
        code = "import sys; from mercury_train.testing import make_tiny_checkpoint; make_tiny_checkpoint(sys.argv[1])"
        subprocess.run([sys.executable, "-c", code, str(TINY_MODEL_DIR)], check=True,
                       env={**os.environ, "PYTHONHASHSEED": "0"})
    yield TINY_MODEL_DIR
    shutil.rmtree(TINY_MODEL_DIR.parent, ignore_errors=True)


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny tensors: one torch thread is much faster than two on a shared, busy machine.

    Module-scoped; a module opts in with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
