"""Fixtures of the corpus builders' tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def index_dir(tmp_path) -> Path:
    """An empty folder standing in for a package index (archives made in the test go here)."""
    src = tmp_path / "index"
    src.mkdir()
    return src
