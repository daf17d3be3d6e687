"""Smoke test of ``benchmarks.refactor.batch``: it runs the real command, scores it and ends with one
JSON line (syntax mode, one or two cases of each kind, no fill, no export cases: the model-backed rows
and the fetched repositories are the benchmark's)."""

from __future__ import annotations

import json

import pytest

from benchmarks.refactor import batch as refactor


@pytest.mark.slow  # two whole command runs per case as separate processes
def test_refactor_benchmark_scores_and_reports(tmp_path, capsys):
    out = tmp_path / "refactor.json"
    assert refactor.main(["--modes", "syntax", "--renames", "1", "--params", "1", "--signatures", "1",
                          "--fill-stubs", "0", "--exports", "0", "--out", str(out)]) == 0
    head = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert head["benchmark"] == "refactor"
    assert head["syntax_recall"] == 1.0 and head["syntax_precision"] == 1.0
    doc = json.loads(out.read_text())
    syntax = doc["propagate"]["syntax"]
    assert syntax["cases"] == 8 and syntax["files_per_s"] > 0
    assert set(syntax["kinds"]) == {"rename", "add_parameter", "remove_parameter", "reorder_parameters",
                                    "rename_parameter", "docs", "repeat"}
