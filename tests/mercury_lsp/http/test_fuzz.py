"""schemathesis ``--checks all`` over the OpenAPI document, open and with an API key: no check
fails (no server error; statuses, content types and bodies as documented; schema-valid requests
accepted, schema-invalid ones refused; undocumented methods refused; the key enforced), and the
server is alive at the end. The default suite runs a share; the slow test the benchmark's own
size (``python -m benchmarks.http_api.fuzz`` records that run in
benchmarks/results/http_fuzz.json).

The fuzzer runs as its own process, as a user runs it: in the pytest process, hypothesis and
schemathesis are pytest plugins whose modules pytest rewrites with ``ast.parse`` when they are
first imported, and a lazy import late in a full run, with other tests' threads alive, hit
CPython 3.11.7's shared AST state ("AST constructor recursion depth mismatch", CPython gh-106905)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_SHARE = 10  # examples per operation and phase: ~500 requests in the two runs
FULL = 200  # the benchmark's: ~4,000


def _check(tmp_path: Path, model: Path, per_case: int, minimum: int) -> None:
    out = tmp_path / "fuzz.json"
    proc = subprocess.run([sys.executable, "-m", "benchmarks.http_api.fuzz", "--max-examples", str(per_case),
                           "--model", str(model), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert out.exists(), proc.stdout[-2000:] + proc.stderr[-4000:]
    totals = json.loads(out.read_text())
    for name, arm in totals["arms"].items():
        assert arm["exit_code"] == 0 and arm["unique_failures"] == 0, (name, arm.get("failures"), arm.get("output_tail"))
        assert arm["server_alive_at_end"] and arm["operations_tested"] == 6, (name, arm)
    assert totals["requests"] >= minimum, totals
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_schemathesis_checks_all_share(tmp_path, tiny_model):
    _check(tmp_path, tiny_model, DEFAULT_SHARE, 300)


@pytest.mark.slow
def test_schemathesis_checks_all_full(tmp_path, tiny_model):
    _check(tmp_path, tiny_model, FULL, 2000)
