"""Fuzzing over the OpenAPI document (schemathesis): no 500, errors in OpenAI's shape, the
server alive throughout. The default suite sends a share; the slow test the full >= 1,000
(``python -m benchmarks.http_api.fuzz`` records that run in benchmarks/results/http_fuzz.json).

The fuzzer runs as its own process (``python -m benchmarks.http_api.fuzz``), as a user runs it: in
the pytest process, hypothesis and schemathesis are pytest plugins whose modules pytest rewrites
with ``ast.parse`` when they are first imported, and a lazy import late in a full run, with other
tests' threads alive, hit CPython 3.11.7's shared AST state ("AST constructor recursion depth
mismatch", CPython gh-106905)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_SHARE = 12  # per (operation, mode): ~130 requests
FULL = 130  # per (operation, mode): >= 1,000 requests


def _check(tmp_path: Path, model: Path, per_case: int, minimum: int) -> None:
    out = tmp_path / "fuzz.json"
    proc = subprocess.run([sys.executable, "-m", "benchmarks.http_api.fuzz", "--per-case", str(per_case),
                           "--model", str(model), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert out.exists(), proc.stdout[-2000:] + proc.stderr[-4000:]
    totals = json.loads(out.read_text())
    assert totals["problems"] == [], totals
    assert totals["server_errors_500"] == 0 and totals["server_alive_at_end"], totals
    assert totals["requests"] >= minimum, totals
    assert int(totals["status_counts"].get("200", 0)) > 0  # valid requests reached the engine
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_fuzz_share(tmp_path, tiny_model):
    _check(tmp_path, tiny_model, DEFAULT_SHARE, 80)


@pytest.mark.slow
def test_fuzz_full(tmp_path, tiny_model):
    _check(tmp_path, tiny_model, FULL, 1000)
