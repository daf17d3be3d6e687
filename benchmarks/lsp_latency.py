"""LSP latency under typing: a client process replays real source files through the real server.

    python -m benchmarks.lsp_latency --model tiny --seconds 20
    python -m benchmarks.lsp_latency --files a.py b.py --preset fast        # embedded model

For each file, a region is removed from the document (the text after it stays: a real suffix)
and typed back one character per tick at ``--rate`` keystrokes/s: every keystroke sends a
``didChange`` and an ``inlineCompletion`` request, cancelling the previous one if still pending
(as an editor does). Reported:

* p50/p95 latency of the suggestions that would be shown (non-empty, and the document had not
  moved on when the answer arrived);
* stale: non-empty answers that do not fit the document at the version they were requested for
  (a server bug; must be 0); ``late``: valid answers that arrived after the next keystroke;
* cancelled / superseded / empty counts, cache hits (server counters, ``mercury/stats``);
* the daemon's CPU time and peak RSS (``VmHWM``).

``--model tiny`` serves a random-weights tiny checkpoint (the pipeline's overhead, not a model's).
Ends with one JSON line; also writes benchmarks/results/lsp_latency.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import get_args

from engine.options import Preset
from mercury_lsp.rpc_client import RawClient, RpcError

RESULTS = Path(__file__).parent / "results" / "lsp_latency.json"
DEFAULT_FILES = ("textwrap.py", "bisect.py", "colorsys.py", "heapq.py")


def percentile(data: list[float], q: float) -> float | None:
    if not data:
        return None
    s = sorted(data)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def proc_stats(pid: int) -> tuple[float | None, float | None]:
    """(CPU seconds, peak RSS MiB) of a live process, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        hwm = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                   if line.startswith("VmHWM:"))
        return cpu, hwm / 1024
    except (OSError, StopIteration, IndexError, ValueError):
        return None, None


def pick_region(text: str, budget_chars: int) -> tuple[int, int]:
    """A region starting at a line start around the middle of the file."""
    mid = text.find("\n", len(text) // 3) + 1
    return mid, min(len(text), mid + budget_chars)


async def replay(c: RawClient, path: Path, seconds: float, rate: float, stats: dict) -> None:
    text = path.read_text(encoding="utf-8")
    start, end = pick_region(text, int(seconds * rate) + 1)
    region = text[start:end]
    doc = text[:start] + text[end:]
    uri = path.resolve().as_uri()
    version = 1
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version,
                                                       "text": doc}})
    versions: dict[int, str] = {version: doc}
    line = doc.count("\n", 0, start)
    col = start - (doc.rfind("\n", 0, start) + 1)
    pending: tuple[int, asyncio.Future, float, int, int, int] | None = None
    tick = 1.0 / rate
    t_next = time.perf_counter()
    tasks = []

    async def collect(fut: asyncio.Future, sent: float, v: int, ln: int, cl: int) -> None:
        msg = await fut
        now = time.perf_counter()
        stats["responses"] += 1
        if "error" in msg:
            if msg["error"].get("code") == -32800:
                stats["cancelled"] += 1
            else:
                stats["errors"] += 1
            return
        items = (msg.get("result") or {}).get("items") or []
        if not items:
            stats["empty"] += 1
            return
        line_text = versions[v].split("\n")[ln] if ln < versions[v].count("\n") + 1 else ""
        if not items[0]["insertText"].startswith(line_text[:cl]):
            stats["stale"] += 1
        elif v != version:
            stats["late"] += 1
        else:
            stats["shown_ms"].append((now - sent) * 1000)

    for ch in region:
        if time.perf_counter() - stats["t0"] > stats["budget_s"]:
            break
        await asyncio.sleep(max(0.0, t_next - time.perf_counter()))
        t_next += tick
        if pending is not None and not pending[1].done():
            c.cancel(pending[0])
        version += 1
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": line, "character": col},
                                          "end": {"line": line, "character": col}}, "text": ch}]})
        doc = doc[:start] + ch + doc[start:]
        start += 1
        versions[version] = doc
        if ch == "\n":
            line, col = line + 1, 0
        else:
            col += 1 if ord(ch) < 0x10000 else 2
        msg_id, fut = c.request_future("textDocument/inlineCompletion", {
            "textDocument": {"uri": uri}, "position": {"line": line, "character": col},
            "context": {"triggerKind": 2}})
        stats["requests"] += 1
        pending = (msg_id, fut, time.perf_counter(), version, line, col)
        tasks.append(asyncio.ensure_future(collect(fut, pending[2], version, line, col)))
        versions.pop(version - 64, None)
    await asyncio.gather(*tasks)
    c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


async def main_async(args: argparse.Namespace) -> dict:
    model = args.model
    tmp = None
    if model == "tiny":
        tmp = tempfile.TemporaryDirectory()
        from engine.testing import make_tiny_checkpoint

        model = str(make_tiny_checkpoint(Path(tmp.name) / "tiny"))
    cmd = [sys.executable, "-m", "mercury_lsp.cli", "serve", "--log-level", "warning"]
    for flag, value in (("--model", model), ("--dtype", args.dtype), ("--threads", args.threads),
                        ("--preset", args.preset), ("--device", args.device)):
        if value is not None:
            cmd += [flag, str(value)]
    c = await RawClient.start(*cmd)
    t_start = time.perf_counter()
    await c.initialize(json.loads(args.settings) if args.settings else {})
    init_ms = (time.perf_counter() - t_start) * 1000
    status = await c.wait_notification("mercury/status", lambda p: p["state"] in ("ready", "error"), timeout=600)
    if status["state"] != "ready":
        raise SystemExit(f"model failed to load: {status['message']}")
    files = [Path(f) for f in args.files] if args.files else \
        [Path(sysconfig.get_paths()["stdlib"]) / f for f in DEFAULT_FILES]
    files = [f for f in files if f.is_file()]
    stats = {"requests": 0, "responses": 0, "cancelled": 0, "errors": 0, "empty": 0, "stale": 0,
             "late": 0, "shown_ms": [], "t0": time.perf_counter(), "budget_s": args.seconds}
    cpu0, _ = proc_stats(c.proc.pid)
    per_file = args.seconds / max(1, len(files))
    for f in files:
        await replay(c, f, per_file, args.rate, stats)
    cpu1, hwm = proc_stats(c.proc.pid)
    try:
        server = await c.request("mercury/stats")
    except RpcError:
        server = {}
    await c.shutdown()
    if tmp is not None:
        tmp.cleanup()
    shown = stats["shown_ms"]
    counters = server.get("counters", {})
    return {
        "model": args.model or "embedded", "preset": args.preset or "balanced", "files": [f.name for f in files],
        "seconds": round(time.perf_counter() - stats["t0"], 1), "rate": args.rate,
        "requests": stats["requests"], "shown": len(shown),
        "p50_ms": round(percentile(shown, 0.5), 1) if shown else None,
        "p95_ms": round(percentile(shown, 0.95), 1) if shown else None,
        "stale": stats["stale"], "late": stats["late"], "cancelled": stats["cancelled"],
        "empty": stats["empty"], "errors": stats["errors"],
        "superseded": counters.get("superseded"), "cache_hits": counters.get("cacheHits"),
        "engine_ms_p50": server.get("engineMsP50"), "initialize_ms": round(init_ms, 1),
        "daemon_cpu_s": round(cpu1 - cpu0, 2) if cpu0 is not None and cpu1 is not None else None,
        "peak_rss_mb": round(hwm, 1) if hwm is not None else None,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=None, help="'tiny', a checkpoint directory or hub id (default: embedded)")
    p.add_argument("--files", nargs="*", default=None, help="source files to replay (default: a few stdlib files)")
    p.add_argument("--seconds", type=float, default=20.0, help="total typing time")
    p.add_argument("--rate", type=float, default=10.0, help="keystrokes per second")
    p.add_argument("--preset", default=None, choices=get_args(Preset))
    p.add_argument("--device", default=None)
    p.add_argument("--dtype", default=None)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--settings", default=None, help="initializationOptions as JSON")
    args = p.parse_args(argv)
    result = asyncio.run(main_async(args))
    rows = [("requests", result["requests"]), ("suggestions shown", result["shown"]),
            ("p50 latency (ms)", result["p50_ms"]), ("p95 latency (ms)", result["p95_ms"]),
            ("stale (must be 0)", result["stale"]), ("late (arrived after next key)", result["late"]),
            ("cancelled", result["cancelled"]), ("superseded (server)", result["superseded"]),
            ("empty", result["empty"]), ("cache hits", result["cache_hits"]),
            ("daemon CPU (s)", result["daemon_cpu_s"]), ("peak RSS (MiB)", result["peak_rss_mb"])]
    print(f"lsp_latency: model={result['model']} preset={result['preset']} files={','.join(result['files'])}")
    for name, value in rows:
        print(f"  {name:<32} {value}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
