"""Speed and quality measurements, one subject a folder (engine, humaneval, train, lsp, http,
next_edit, refactor, completion); ``common`` holds what several share. Every benchmark prints a
table, writes JSON (and a PNG where a picture helps) under ``RESULTS`` and ends with one JSON line."""

from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent  # the repository root
RESULTS = HERE / "results"  # one current result per benchmark (git keeps the history)
DATA = HERE / "data"
