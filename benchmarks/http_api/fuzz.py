"""Fuzz the HTTP API from its own OpenAPI document: schemathesis ``--checks all``.

    python -m benchmarks.http_api.fuzz --max-examples 200          # tiny model, about 3,000 requests
    python -m benchmarks.http_api.fuzz --before main                # and the same against main's server

schemathesis runs as a user runs it (``st run URL/openapi.json --checks all``), against a live
``mercury-lsp http`` on the tiny model, twice: on loopback without a key, and with an API key
(``--api-key-file``; the document then says every path but ``/health`` needs it, and the run
sends it). Every check it has must pass: no server error, every status, content type and body as
the document states, schema-valid requests accepted and schema-invalid ones refused, methods
the document lacks refused with 405, a request without the key refused. The server must be alive
at the end. ``--before REF`` runs the same against the server of REF too (from a temporary
``git worktree``; its own document), recorded beside. Writes ``benchmarks/results/http_fuzz.json``
(schemathesis' own report's totals per run) and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks import RESULTS as RESULTS_DIR
from benchmarks.common.checkouts import checkout, cli_argv, commit_of
from benchmarks.http_api.server import HttpProcess

RESULTS = RESULTS_DIR / "http_fuzz.json"
ST = str(Path(sys.executable).parent / "st")
REQUEST_TIMEOUT_S = 60  # one answer: the tiny model answers in well under this
FUZZ_LIMITS = {"maxTokens": 8, "requestTimeoutS": 30}  # bounded work per generated request
KEY = "fuzz-benchmark-key-0123456789"
SEED = 1


def run_schemathesis(url: str, max_examples: int, report: Path, key: str | None) -> dict:
    """One ``st run --checks all``; the totals of its JSON report."""
    cmd = [ST, "run", f"{url}/openapi.json", "--checks", "all", "--max-examples", str(max_examples),
           "--seed", str(SEED), "--workers", "1", "--request-timeout", str(REQUEST_TIMEOUT_S), "--no-color",
           "--report", "json", "--report-json-path", str(report)]
    if key is not None:
        cmd += ["--header", f"Authorization: Bearer {key}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=report.parent)  # its cache stays there
    if not report.exists():
        return {"exit_code": proc.returncode, "error": (proc.stdout + proc.stderr)[-3000:]}
    r = json.loads(report.read_text())
    return {"exit_code": r["exit_code"], "generated": r["test_cases"]["generated"],
            "with_failures": r["test_cases"]["with_failures"], "unique_failures": r["test_cases"]["unique_failures"],
            "errored": r["test_cases"]["errored"], "failures": r["failures"][:20], "errors": r["errors"][:20],
            "operations_tested": r["operations"]["tested"], "phases": {k: v["status"] for k, v in r["phases"].items()},
            "seconds": round(r["running_time"], 1),
            "output_tail": "" if r["exit_code"] == 0 else proc.stdout[-3000:]}


def fuzz_arm(model: str, max_examples: int, tmp: Path, keyed: bool, argv: list[str] | None = None) -> dict:
    args = ["--model", model, "--threads", "1", "--limits", json.dumps(FUZZ_LIMITS)]
    if keyed:
        key_file = tmp / "api-key"
        key_file.write_text(KEY + "\n")
        args += ["--api-key-file", str(key_file)]
    srv = HttpProcess(args, argv=argv)
    try:
        out = run_schemathesis(srv.url, max_examples, tmp / f"report-{'keyed' if keyed else 'open'}.json",
                               KEY if keyed else None)
        out["server_alive_at_end"] = srv.alive and httpx.get(srv.url + "/health", timeout=REQUEST_TIMEOUT_S).status_code == 200
    finally:
        srv.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-examples", type=int, default=200, help="schemathesis' examples per operation and phase")
    ap.add_argument("--model", default="tiny", help="'tiny' (random weights, made here) or a model directory")
    ap.add_argument("--before", default=None, help="also run against the server of this commit (or ref)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    before = None
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if model == "tiny":
            from mercury_train.testing import make_tiny_checkpoint

            model = str(make_tiny_checkpoint(Path(tmp) / "tiny"))
        if args.before:
            with checkout(args.before) as tree:
                before = {"commit": commit_of(args.before)[:12], "arms": {
                    name: fuzz_arm(model, args.max_examples, Path(tmp), keyed, cli_argv(tree))
                    for name, keyed in (("open", False), ("keyed", True))}}
        arms = {name: fuzz_arm(model, args.max_examples, Path(tmp), keyed) for name, keyed in
                (("open", False), ("keyed", True))}
    ok = all(a["exit_code"] == 0 and a.get("server_alive_at_end") for a in arms.values())
    report = {"benchmark": "http_fuzz", "tool": "schemathesis --checks all", "max_examples": args.max_examples,
              "seed": SEED, "model": args.model, "seconds": round(time.perf_counter() - t0, 1),
              "requests": sum(a.get("generated", 0) for a in arms.values()),
              "failures": sum(a.get("unique_failures", 0) for a in arms.values()), "passed": ok, "arms": arms,
              "before": before}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"{'run':<14}{'test cases':>11}{'failures':>9}{'errors':>7}{'alive':>7}{'s':>7}")
    rows = [*(("before " + n, a) for n, a in (before or {"arms": {}})["arms"].items()), *arms.items()]
    for name, a in rows:
        print(f"{name:<14}{a.get('generated', 0):>11}{a.get('unique_failures', '-')!s:>9}{a.get('errored', '-')!s:>7}"
              f"{a.get('server_alive_at_end')!s:>7}{a.get('seconds', '-')!s:>7}")
    print(json.dumps({k: v for k, v in report.items() if k not in ("arms", "before")}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
