"""Fuzz the HTTP API from its own OpenAPI document (schemathesis + hypothesis).

    python -m benchmarks.http_api.fuzz --per-case 130          # >= 1,000 requests, tiny model

For every operation, requests valid for the schema (``positive``) and invalid ones
(``negative``: wrong types, missing fields, garbage bodies) are sent to a live
``mercury-lsp http``; every answer must be a non-500 status, and errors must be OpenAI's error
object. The server must stay alive throughout. Writes benchmarks/results/http_fuzz.json and
ends with one JSON line.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks import RESULTS as RESULTS_DIR

RESULTS = RESULTS_DIR / "http_fuzz.json"
# Each request's answer: the tiny model answers in well under this.
REQUEST_TIMEOUT_S = 60
FUZZ_LIMITS = {"maxTokens": 8, "requestTimeoutS": 30}  # bounded work per generated request


def fuzz(base_url: str, per_case: int, alive=lambda: True) -> dict:
    """Send ``per_case`` generated requests per (operation, mode); returns the totals."""
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis import GenerationMode

    doc = httpx.get(base_url + "/openapi.json", timeout=REQUEST_TIMEOUT_S).json()
    schema = schemathesis.openapi.from_dict(doc)
    statuses: collections.Counter[int] = collections.Counter()
    problems: list[str] = []

    def check(case, mode) -> None:
        op = case.operation
        r = case.call(base_url=base_url, timeout=REQUEST_TIMEOUT_S)
        statuses[r.status_code] += 1
        if r.status_code >= 500 and r.status_code != 503:
            problems.append(f"{op.method.upper()} {op.path} ({mode.value}): {r.status_code} {r.text[:200]}")
        elif r.status_code >= 400:
            try:
                err = r.json()["error"]
                assert isinstance(err["message"], str) and isinstance(err["type"], str)
            except (ValueError, KeyError, TypeError, AssertionError):
                problems.append(f"{op.method.upper()} {op.path}: {r.status_code} is not an error object")
        if not alive():
            problems.append("the server died")
            raise AssertionError("the server died")

    for result in schema.get_all_operations():
        op = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            run = settings(max_examples=per_case, database=None, deadline=None, derandomize=True,
                           suppress_health_check=list(HealthCheck), report_multiple_bugs=False)(
                given(case=op.as_strategy(generation_mode=mode))(_bind(check, mode)))
            try:
                run()
            except Unsatisfiable:  # nothing to make invalid (GET without parameters)
                continue
    return {"requests": sum(statuses.values()), "status_counts": {str(k): v for k, v in sorted(statuses.items())},
            "server_errors_500": statuses.get(500, 0), "problems": problems[:20], "problem_count": len(problems)}


def _bind(check, mode):
    def one(case) -> None:
        check(case, mode)

    return one


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-case", type=int, default=130, help="examples per operation and mode (6 x 2 cases)")
    ap.add_argument("--model", default="tiny", help="'tiny' (random weights, made here) or a model directory")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    from benchmarks.http_api.server import HttpProcess

    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if model == "tiny":
            from mercury_train.testing import make_tiny_checkpoint

            model = str(make_tiny_checkpoint(Path(tmp) / "tiny"))
        srv = HttpProcess(["--model", model, "--threads", "1", "--limits", json.dumps(FUZZ_LIMITS)])
        t0 = time.perf_counter()
        try:
            totals = fuzz(srv.url, args.per_case, lambda: srv.alive)
            alive = srv.alive and httpx.get(srv.url + "/health", timeout=REQUEST_TIMEOUT_S).status_code == 200
        finally:
            srv.stop()
    report = {"benchmark": "http_fuzz", "per_case": args.per_case, "model": args.model,
              "seconds": round(time.perf_counter() - t0, 1), "server_alive_at_end": alive, **totals}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"{report['requests']} requests, statuses {report['status_counts']}, 500s: {report['server_errors_500']}, "
          f"problems: {report['problem_count']}, server alive: {alive}")
    print(json.dumps(report))
    return 0 if report["problem_count"] == 0 and alive else 1


if __name__ == "__main__":
    sys.exit(main())
