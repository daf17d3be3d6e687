"""Issue 18's three serious failures as regression tests: each fails on the daemon before the
hardening and passes on this tree.

The tests drive a ``mercury-lsp serve`` subprocess; ``MERCURY_TEST_SERVER_SOURCE`` makes them
drive the daemon of a checkout of ``--before`` instead (a temporary ``git worktree``,
``benchmarks/common/checkouts``; the tests and the client stay this tree's). Against the old daemon
each test runs in its own pytest process (a killed server must not fail the next test); against
this tree they run together, as CI runs them. The outcome and the first line of the failure are
recorded per test.

    python -m benchmarks.lsp.regressions [--before a1aef85] [--jobs 4] [--only TEXT]

Prints a table, writes ``benchmarks/results/regressions.json`` and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks import RESULTS as RESULTS_DIR
from benchmarks.common.checkouts import PRE_HARDENING, REPO, checkout, commit_of
from tests.support.server import SERVER_SOURCE_ENV

RESULTS = RESULTS_DIR / "regressions.json"
TEST_TIMEOUT_S = 900  # one pytest process (a deaf server costs each health check its timeout)
MESSAGE_CHARS = 240

HARDENING = "tests/mercury_lsp/server/test_hardening.py"
ACCESS = "tests/mercury_lsp/server/test_access.py"
BAD_LENGTHS = ("abc", "-5", "4.0e1", "None", "+100", "-100")
FAILURES: dict[str, list[str]] = {
    "1. one malformed frame kills the stdio server; a bad Content-Length leaves it deaf": [
        f"{HARDENING}::test_json_nested_5000_deep_does_not_kill_the_server",
        f"{HARDENING}::test_header_line_over_64_kib_does_not_kill_the_server",
        *(f"{HARDENING}::test_bad_content_length_is_answered_and_the_server_resynchronises[{x}]"
          for x in BAD_LENGTHS),
    ],
    "2. TCP off loopback without a key; one client breaks the shared model; paths and tracebacks leak": [
        f"{ACCESS}::test_non_loopback_tcp_without_a_token_does_not_listen",
        f"{ACCESS}::test_one_client_cannot_break_the_model_or_probe_paths",
        f"{ACCESS}::test_errors_sent_over_tcp_carry_no_traceback",
    ],
    "3. a lone UTF-16 surrogate in didChange silently desynchronises the document": [
        f"{HARDENING}::test_lone_surrogate_in_did_change_keeps_the_document_in_sync",
    ],
}


def run_pytest(nodes: list[str], source: Path | None) -> dict[str, dict]:
    """Outcome (passed / failed / error / skipped) and failure message per node id."""
    env = {k: v for k, v in os.environ.items() if k != SERVER_SOURCE_ENV}
    env.setdefault("TRITON_INTERPRET", "1")
    if source is not None:
        env[SERVER_SOURCE_ENV] = str(source)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        try:
            subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
                            *nodes], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=TEST_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return {n: {"outcome": "timeout", "message": f"no result within {TEST_TIMEOUT_S} s"} for n in nodes}
        return _outcomes(report, nodes) if report.exists() else {
            n: {"outcome": "error", "message": "pytest wrote no report"} for n in nodes}


def _outcomes(report: Path, nodes: list[str]) -> dict[str, dict]:
    by_name: dict[str, dict] = {}
    for case in ET.parse(report).iter("testcase"):
        name = case.get("name", "")
        kinds = {child.tag: child for child in case if child.tag in ("failure", "error", "skipped")}
        if "failure" in kinds:
            outcome, detail = "failed", kinds["failure"]
        elif "error" in kinds:
            outcome, detail = "error", kinds["error"]
        elif "skipped" in kinds:
            outcome, detail = "skipped", kinds["skipped"]
        else:
            outcome, detail = "passed", None
        message = (detail.get("message") or detail.text or "") if detail is not None else ""
        first = next((line.strip() for line in message.splitlines() if line.strip()), "")
        if name not in by_name or by_name[name]["outcome"] == "passed":  # a teardown error after a pass
            by_name[name] = {"outcome": outcome, "message": first[:MESSAGE_CHARS]}
    return {n: by_name.get(n.split("::")[-1], {"outcome": "missing", "message": ""}) for n in nodes}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--before", default=PRE_HARDENING, metavar="REF", help="the commit before the fixes")
    p.add_argument("--jobs", type=int, default=4, help="old-daemon test processes at once")
    p.add_argument("--only", default="", metavar="TEXT",
                   help="run only the tests whose id contains TEXT (their rows replace those in --out)")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args()
    nodes = [n for tests in FAILURES.values() for n in tests if args.only in n]
    kept = json.loads(args.out.read_text())["tests"] if args.only and args.out.exists() else []
    t0 = time.perf_counter()
    before: dict[str, dict] = {}
    with checkout(args.before) as old, ThreadPoolExecutor(args.jobs) as pool:
        # Mostly waiting (a dead or deaf server costs each check its timeout): run several at once.
        for node, got in zip(nodes, pool.map(lambda n: run_pytest([n], old), nodes), strict=True):
            before.update(got)
            print(f"before  {before[node]['outcome']:>8}  {node.split('::')[-1]}", flush=True)
    after = run_pytest(nodes, None)
    rows = [r for r in kept if r["test"] not in nodes]  # --only: the other tests' rows stay
    for failure, tests in FAILURES.items():
        for node in (n for n in tests if n in nodes):
            rows.append({"failure": failure, "test": node, "before": before[node], "after": after[node],
                         "proves": before[node]["outcome"] in ("failed", "error") and after[node]["outcome"] == "passed"})
    order = [n for tests in FAILURES.values() for n in tests]
    rows.sort(key=lambda r: order.index(r["test"]))
    print(f"\n{'before':>8} {'after':>8}  test")
    for failure in FAILURES:
        print(failure)
        for r in (r for r in rows if r["failure"] == failure):
            print(f"{r['before']['outcome']:>8} {r['after']['outcome']:>8}  {r['test'].split('::')[-1]}")
            print(f"{'':>18}before: {r['before']['message'][:110]}")
    out = {"before": commit_of(args.before), "after": "this tree (" + commit_of("HEAD")[:12] + " + working tree)",
           "seconds": round(time.perf_counter() - t0, 1), "tests": rows,
           "all_proved": all(r["proves"] for r in rows)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({"before": out["before"][:12], "tests": len(rows), "failed_before": sum(
        r["before"]["outcome"] in ("failed", "error") for r in rows), "passed_after": sum(
        r["after"]["outcome"] == "passed" for r in rows), "all_proved": out["all_proved"]}))


if __name__ == "__main__":
    main()
