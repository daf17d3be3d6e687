"""Soak: does the daemon's memory stop growing under a long mixed load?

One ``mercury-lsp serve`` (stdio, the embedded model unless ``--model``) is driven for
``--minutes`` by one client as fast as it answers, the way a day in an editor looks compressed:
sessions that open a file of a real workspace (copies of standard-library packages, the root
the client initializes with, so next edit reads unopened files through the word index) or a
new scratch document, type into it (``typing_trace``: didChange per key, an inline completion at
every word pause), rename a name and ask ``mercury/nextEdit`` there (its background update reads
the workspace), check ``mercury/documentState``, and close it; every ``--big-every`` sessions a
5 MB document is opened, edited and closed, and the settings are pushed again. Every request
must be answered.

The daemon's RSS (``VmRSS``) is sampled every ``--sample-s``; the figure is the growth over the
last ``--tail-minutes`` as a least-squares slope in MB/min, which must be under
``MAX_TAIL_MB_PER_MIN``. The load average at the start and the end is recorded: the soak shares
the CPU with whatever else runs (it is a memory figure, not a timing).

    nice -n 10 python -m benchmarks.lsp.soak [--minutes 30] [--tail-minutes 10]

To find what grows, ``--heap-trace FILE`` has the daemon append a report every minute
(``mercury_lsp/heap_trace.py``: glibc's heap in use and free, and the allocation sites that grew);
tracing slows the daemon several times over, so such a run's RSS is not the figure.

Prints a table, writes ``benchmarks/results/soak.json`` and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks import RESULTS as RESULTS_DIR
from benchmarks.common.jsonrpc import AsyncLspClient
from benchmarks.common.report import git_state
from benchmarks.lsp.typing_trace import TextModel, make_trace

RESULTS = RESULTS_DIR / "soak.json"
MAX_TAIL_MB_PER_MIN = 1.0  # issue 27: the last ten minutes grow less than this
BIG_DOC_BYTES = 5 * 1024 * 1024
STDLIB = Path(sysconfig.get_paths()["stdlib"])
# The workspace: standard-library packages copied to a temporary root (about 300 Python files).
WORKSPACE_PACKAGES = ("json", "email", "asyncio", "http", "logging", "xml", "concurrent", "importlib")
KEYS_PER_SESSION = 60  # typed keys per session (a few words: several inline completions)
TYPING_RATE = 8.0  # keys/s of the trace (only its shape matters: nothing waits on its delays)
SCRATCH_EVERY = 3  # every third session edits a new untitled document instead of a workspace file
REQUEST_TIMEOUT_S = 300.0  # one answer on a busy shared CPU; longer counts as unanswered
_NAME = re.compile(r"\b([a-z_][a-z0-9_]{3,})\s*=")  # an assigned name to rename


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field)) / 1024


def tail_slope(samples: list[dict], minutes: float) -> float | None:
    """Least-squares RSS slope (MB/min) over the samples of the last ``minutes``."""
    if not samples:
        return None
    end = samples[-1]["t_s"]
    pts = [(s["t_s"] / 60, s["rss_mb"]) for s in samples if s["t_s"] >= end - minutes * 60]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    var = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / var if var else None


def make_workspace(root: Path) -> list[Path]:
    for pkg in WORKSPACE_PACKAGES:
        shutil.copytree(STDLIB / pkg, root / pkg, ignore=shutil.ignore_patterns("__pycache__", "test*"))
    return sorted(p for p in root.rglob("*.py") if 2_000 <= p.stat().st_size <= 60_000)


class Driver:
    def __init__(self, c: AsyncLspClient) -> None:
        self.c = c
        self.requests = 0
        self.outcomes: Counter[str] = Counter()

    async def ask(self, method: str, params) -> dict | None:
        self.requests += 1
        _, fut = self.c.request_future(method, params)
        try:
            msg = await asyncio.wait_for(fut, REQUEST_TIMEOUT_S)
        except TimeoutError:
            self.outcomes["unanswered"] += 1
            return None
        self.outcomes["result" if "result" in msg else f"error {msg['error'].get('code')}"] += 1
        return msg.get("result")

    async def session(self, uri: str, text: str, seed: int) -> None:
        c = self.c
        doc, keys = make_trace(text, KEYS_PER_SESSION / TYPING_RATE, TYPING_RATE, seed)
        model = TextModel(doc)
        version = 1
        c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": doc}})
        for key in keys[:KEYS_PER_SESSION]:
            version += 1
            change = model.apply(key.start, key.end, key.insert)
            c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                "contentChanges": [change]})
            if key.pause:
                await self.ask("textDocument/inlineCompletion", {
                    "textDocument": {"uri": uri}, "position": model.position(key.start + len(key.insert)),
                    "context": {"triggerKind": 2}})
        if m := _NAME.search(model.text):  # a rename: next edit offers the other occurrences
            version += 1
            change = model.apply(m.start(1), m.end(1), m.group(1) + "_renamed")
            c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                "contentChanges": [change]})
            await self.ask("mercury/nextEdit", {"textDocument": {"uri": uri, "version": version},
                                                "position": model.position(m.end(1))})
        await self.ask("mercury/documentState", {"textDocument": {"uri": uri}})
        c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    async def big_doc(self, n: int, unit: str) -> None:
        c = self.c
        big = (unit * (BIG_DOC_BYTES // len(unit) + 1))[:BIG_DOC_BYTES]
        uri = f"untitled:soak-big-{n}.py"
        c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": big}})
        c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 10, "character": 0}, "end": {"line": 10, "character": 0}},
             "text": "# soak\n"}]})
        c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        c.notify("workspace/didChangeConfiguration", {"settings": {"mercury": {"debounceMs": 0}}})
        await self.ask("mercury/stats", None)


async def main_async(args) -> dict:
    work = Path(tempfile.mkdtemp(prefix="mercury-soak-"))
    root = work / "workspace"
    files = make_workspace(root)
    env = {"MERCURY_LSP_CACHE": str(work / "cache")}  # the word index of this run only
    if args.heap_trace:  # debugging: the daemon reports what grew (mercury_lsp/heap_trace.py)
        env |= {"MERCURY_LSP_HEAP_TRACE": str(args.heap_trace.resolve()),
                "MERCURY_LSP_HEAP_TRACE_EVERY_S": str(args.heap_trace_every_s)}
    cmd = [sys.executable, "-m", "mercury_lsp.cli", "serve"] + (["--model", args.model] if args.model else [])
    c = await AsyncLspClient.start(*cmd, env=env)
    load_start = os.getloadavg()
    try:
        await c.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {
            "general": {"positionEncodings": ["utf-16"]}, "textDocument": {"inlineCompletion": {}}},
            "initializationOptions": {"debounceMs": 0}})
        c.notify("initialized", {})
        status = await c.wait_notification("mercury/status", lambda p: p["state"] in ("ready", "error"), 600)
        if status["state"] != "ready":
            raise SystemExit(f"soak: the model did not load: {status['message']}")
        d = Driver(c)
        samples: list[dict] = []
        t0 = time.monotonic()
        print(f"{'minute':>7} {'requests':>9} {'RSS MB':>8}")

        async def sample() -> None:
            while True:
                samples.append({"t_s": round(time.monotonic() - t0, 1), "rss_mb": round(rss_mb(c.proc.pid), 1),
                                "requests": d.requests, "load_1m": round(os.getloadavg()[0], 2)})
                s = samples[-1]
                print(f"{s['t_s'] / 60:>7.1f} {s['requests']:>9} {s['rss_mb']:>8}", flush=True)
                await asyncio.sleep(args.sample_s)

        sampler = asyncio.ensure_future(sample())
        rng = random.Random(args.seed)
        unit = files[0].read_text(encoding="utf-8")
        n = 0
        while time.monotonic() - t0 < args.minutes * 60:
            n += 1
            path = rng.choice(files)
            uri = f"untitled:soak-{n}.py" if n % SCRATCH_EVERY == 0 else path.as_uri()
            await d.session(uri, path.read_text(encoding="utf-8"), n)
            if n % args.big_every == 0:
                await d.big_doc(n, unit)
        sampler.cancel()
        samples.append({"t_s": round(time.monotonic() - t0, 1), "rss_mb": round(rss_mb(c.proc.pid), 1),
                        "requests": d.requests})
        hwm = round(rss_mb(c.proc.pid, "VmHWM"), 1)
    finally:
        code = await c.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    slope = tail_slope(samples, args.tail_minutes)
    return {
        "minutes": args.minutes, "tail_minutes": args.tail_minutes, "sessions": n, "requests": d.requests,
        "outcomes": dict(d.outcomes), "all_answered": d.outcomes["unanswered"] == 0,
        "workspace_files": len(files), "samples": samples,
        "rss_start_mb": samples[0]["rss_mb"], "rss_end_mb": samples[-1]["rss_mb"], "vm_hwm_mb": hwm,
        "tail_mb_per_min": None if slope is None else round(slope, 3),
        "tail_ok": slope is not None and slope < MAX_TAIL_MB_PER_MIN,
        "load_start": [round(x, 2) for x in load_start], "load_end": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(), "exit_code": code, **git_state(),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=float, default=30.0)
    p.add_argument("--tail-minutes", type=float, default=10.0, help="the growth is measured over these")
    p.add_argument("--sample-s", type=float, default=15.0, help="seconds between RSS samples")
    p.add_argument("--big-every", type=int, default=20, help="sessions between 5 MB document cycles")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--model", default=None)
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--heap-trace", type=Path, default=None,
                   help="debugging: the daemon appends tracemalloc reports (what grew) to this file; slows it")
    p.add_argument("--heap-trace-every-s", type=float, default=60.0)
    args = p.parse_args()
    out = asyncio.run(main_async(args))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: out[k] for k in ("minutes", "requests", "all_answered", "rss_start_mb", "rss_end_mb",
                                          "vm_hwm_mb", "tail_mb_per_min", "tail_ok", "load_start", "exit_code")}))


if __name__ == "__main__":
    main()
