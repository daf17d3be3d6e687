"""Soak: does the daemon's memory plateau under repeated load?

Ten rounds against one ``mercury-lsp serve`` (stdio, the embedded model unless ``--model``):
each round is a storm of inline-completion requests over a real standard-library file (all
sent at once, every one must be answered) plus open/edit/close cycles of a 5 MB document. The
daemon's RSS (``VmRSS``) is read after every round. It has plateaued when the last three rounds
are within ``PLATEAU_TOLERANCE`` of each other; the figure to compare with the README is the
largest RSS after a round, which must stay at most ``README_TOLERANCE`` above ``--readme-mb``
(the README's daemon RSS figure); the peak (``VmHWM``) is recorded too.

    python -m benchmarks.lsp.soak [--rounds 10] [--storm 500] [--readme-mb 390]

Prints a table, writes ``benchmarks/results/soak.json`` and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import sysconfig
import time
from pathlib import Path

from benchmarks import RESULTS as RESULTS_DIR
from benchmarks.common.jsonrpc import AsyncLspClient

RESULTS = RESULTS_DIR / "soak.json"
PLATEAU_TOLERANCE = 0.03  # the last three rounds' RSS within 3 % of each other
README_TOLERANCE = 0.10  # the bound: at most 10 % above the README's figure
BIG_DOC_BYTES = 5 * 1024 * 1024
STORM_FILE = Path(sysconfig.get_paths()["stdlib"]) / "json" / "encoder.py"


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field)) / 1024


async def storm(c: AsyncLspClient, uri: str, text: str, n: int) -> int:
    lines = text.split("\n")
    positions = [(i % len(lines), len(lines[i % len(lines)])) for i in range(0, n * 7, 7)][:n]
    futures = [c.request_future("textDocument/inlineCompletion", {
        "textDocument": {"uri": uri}, "position": {"line": line, "character": col},
        "context": {"triggerKind": 1}})[1] for line, col in positions]
    answers = await asyncio.wait_for(asyncio.gather(*futures), 1800)
    return sum(1 for a in answers if "result" in a or "error" in a)


async def big_doc_cycles(c: AsyncLspClient, cycles: int, round_no: int) -> None:
    unit = STORM_FILE.read_text(encoding="utf-8")
    big = (unit * (BIG_DOC_BYTES // len(unit) + 1))[:BIG_DOC_BYTES]
    for k in range(cycles):
        uri = f"file:///soak/big-{round_no}-{k}.py"
        c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": big}})
        c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 10, "character": 0}, "end": {"line": 10, "character": 0}},
             "text": "# soak\n"}]})
        c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    await c.request("mercury/stats")  # everything above is handled


async def main_async(args) -> dict:
    cmd = [sys.executable, "-m", "mercury_lsp.cli", "serve"] + (["--model", args.model] if args.model else [])
    c = await AsyncLspClient.start(*cmd)
    await c.initialize({"debounceMs": 0})
    status = await c.wait_notification("mercury/status", lambda p: p["state"] in ("ready", "error"), 600)
    if status["state"] != "ready":
        raise SystemExit(f"soak: the model did not load: {status['message']}")
    text = STORM_FILE.read_text(encoding="utf-8")
    uri = "file:///soak/storm.py"
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                       "text": text}})
    rounds = [{"round": 0, "rss_mb": round(rss_mb(c.proc.pid), 1), "answered": 0, "seconds": 0.0}]
    print(f"{'round':>5} {'answered':>9} {'seconds':>8} {'RSS MB':>8}")
    for r in range(1, args.rounds + 1):
        t0 = time.perf_counter()
        answered = await storm(c, uri, text, args.storm)
        await big_doc_cycles(c, args.doc_cycles, r)
        rounds.append({"round": r, "rss_mb": round(rss_mb(c.proc.pid), 1), "answered": answered,
                       "seconds": round(time.perf_counter() - t0, 1)})
        x = rounds[-1]
        print(f"{x['round']:>5} {x['answered']:>9} {x['seconds']:>8} {x['rss_mb']:>8}", flush=True)
    hwm = round(rss_mb(c.proc.pid, "VmHWM"), 1)
    code = await c.shutdown()
    after = [x["rss_mb"] for x in rounds[1:]]
    tail = after[-3:]
    peak = max(after)
    out = {
        "rounds": rounds, "storm_requests": args.storm, "doc_cycles_per_round": args.doc_cycles,
        "doc_bytes": BIG_DOC_BYTES, "plateau": (max(tail) - min(tail)) <= PLATEAU_TOLERANCE * max(tail),
        "peak_rss_mb": peak, "vm_hwm_mb": hwm, "readme_mb": args.readme_mb,
        "within_readme": peak <= (1 + README_TOLERANCE) * args.readme_mb,
        "all_answered": all(x["answered"] == args.storm for x in rounds[1:]), "exit_code": code,
    }
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--storm", type=int, default=500, help="inline-completion requests per round")
    p.add_argument("--doc-cycles", type=int, default=3, help="5 MB open/edit/close cycles per round")
    p.add_argument("--readme-mb", type=float, default=390.0, help="the README's daemon RSS figure")
    p.add_argument("--model", default=None)
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args()
    out = asyncio.run(main_async(args))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: out[k] for k in ("plateau", "peak_rss_mb", "vm_hwm_mb", "readme_mb", "within_readme",
                                          "all_answered", "exit_code")}))


if __name__ == "__main__":
    main()
