"""Fuzzing over the OpenAPI document (schemathesis): no 500, errors in OpenAI's shape, the
server alive throughout. The default suite sends a share; the slow test the full >= 1,000
(``python -m benchmarks.http_fuzz`` records that run in benchmarks/results/http_fuzz.json)."""

from __future__ import annotations

import contextlib
import importlib
import json
import pkgutil

import pytest
import schemathesis

from benchmarks.http_fuzz import FUZZ_LIMITS, fuzz
from tests.support.http import LiveServer


def _import_all(package) -> None:
    """Import every submodule now, at collection. schemathesis is a pytest plugin, so pytest
    rewrites its modules with ``ast.parse`` when they are imported; imported lazily late in a full
    run, that hit CPython 3.11.7's shared AST state ("AST constructor recursion depth mismatch")."""
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        with contextlib.suppress(Exception):  # optional integrations whose libraries are absent
            importlib.import_module(info.name)


_import_all(schemathesis)

DEFAULT_SHARE = 12  # per (operation, mode): ~130 requests
FULL = 130  # per (operation, mode): >= 1,000 requests


@pytest.fixture(scope="module")
def server(tiny_model):
    srv = LiveServer("--limits", json.dumps(FUZZ_LIMITS), model=tiny_model).start().ready()
    yield srv
    srv.stop()


def _check(server, per_case: int, minimum: int) -> None:
    totals = fuzz(server.url, per_case, lambda: server.alive)
    assert totals["problems"] == [], totals
    assert totals["server_errors_500"] == 0 and server.alive
    assert totals["requests"] >= minimum, totals
    assert int(totals["status_counts"].get("200", 0)) > 0  # valid requests reached the engine


def test_fuzz_share(server):
    _check(server, DEFAULT_SHARE, 80)


@pytest.mark.slow
def test_fuzz_full(server):
    _check(server, FULL, 1000)
