"""LSP latency under real typing: an outside client replays typing traces through the daemon.

    nice -n 10 python -m benchmarks.lsp.latency                       # before/after, one run
    nice -n 10 python -m benchmarks.lsp.latency --arms after_no_fallback,after
    python -m benchmarks.lsp.latency --model tiny --seconds 10 --arms after

The traces (``benchmarks/lsp/typing_trace``) type back regions of held-out standard-library files
(never in the model's training corpus) with word pauses, typos fixed by a backspace and cursor
jumps. Every key sends a ``didChange``; as an editor does, an ``inlineCompletion`` request goes
out once the keyboard has been idle ``--debounce-ms``, and a pending one is cancelled by the
next key. The same trace runs once per arm (a fresh daemon with that arm's settings):
``before`` switches the new features off (typeahead, the incremental context cache,
prefetch, the daemon's thread share, the syntax guard's prefix fallback),
``typeahead`` switches the context cache and prefetch off, ``after`` is the shipped defaults
(one torch thread per two cores, leaving the editor the rest), ``after_all_threads`` the same
with one torch thread per core, ``after_no_prefetch`` the same with speculative prefetch off and
``after_no_fallback`` the same with the syntax guard's prefix fallback off (``syntaxGuard:
"drop"``: a suggestion whose first line adds parse errors is dropped, not cut to its longest
valid prefix).

Each arm types up to ``--seconds`` (default 160 s; the three files' regions run out after about
110 s) over three files: 81 pause points, where a 40 s trace has 15 (the share's binomial
standard error about 5 points instead of 12: one miss more or less moved a 40 s run's figure by
7 points). Reported per arm:

* p50/p95 latency of shown suggestions (non-empty, fitting the document, document unchanged);
* the share of word-pause points showing a suggestion within ``FAST_MS``;
* typeahead: requests made while the user was typing into the shown suggestion, and how many
  were answered with the rest of it;
* stale (an answer that does not fit the document it was asked for) and unanswered (no
  response at all), both must be 0; the daemon's CPU time and peak RSS (``VmHWM``);
* the syntax guard's work (the daemon's counters, requests and prefetches): completions it left
  empty, and completions it cut to a prefix of their first line.

Prints a table, writes benchmarks/results/lsp_latency.json and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import RESULTS as RESULTS_DIR
from benchmarks.common.jsonrpc import AsyncLspClient
from benchmarks.lsp.typing_trace import Key, TextModel, make_trace
from benchmarks.train.heldout import heldout_files

RESULTS = RESULTS_DIR / "lsp_latency.json"
FAST_MS = 100.0  # a suggestion within this reads as instant at a pause
EDITOR_DEBOUNCE_MS = 60  # an editor's inline-suggest debounce (VS Code waits ~50-75 ms)
ANSWER_WAIT_S = 30.0  # after the trace, a request still without a response is "unanswered"
TRACE_FILES = 3  # held-out files per run (each gets seconds / TRACE_FILES of typing)
TRACE_SECONDS = 160.0  # typing per arm: ~80 pause points (a 40 s trace has 15; see the docstring)
CANCELLED = -32800
# What the client announces: ghost text, no work-done progress (as every arm has been measured)
CAPABILITIES = {"general": {"positionEncodings": ["utf-16"]},
                "textDocument": {"inlineCompletion": {}, "synchronization": {}}}
ARMS = {
    # Typeahead off (the suggestion cache answers only exact repeats), no context reuse, no
    # prefetch, torch's thread count (one per core), the syntax guard without its prefix fallback.
    "before": {"typeahead": False, "contextCache": False, "prefetch": False, "threads": os.cpu_count() or 1,
               "syntaxGuard": "drop"},
    "typeahead": {"contextCache": False, "prefetch": False},  # typeahead alone (and the thread default)
    "after": {},  # shipped defaults (one torch thread per two cores: mercury_lsp.config.daemon_threads)
    "after_all_threads": {"threads": os.cpu_count() or 1},  # shipped defaults but one thread per core
    "after_no_prefetch": {"prefetch": False},  # shipped defaults without speculative prefetch
    "after_no_fallback": {"syntaxGuard": "drop"},  # shipped defaults without the guard's prefix fallback
}


def percentile(data: list[float], q: float) -> float | None:
    if not data:
        return None
    s = sorted(data)
    return round(s[min(len(s) - 1, int(round(q * (len(s) - 1))))], 1)


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


class Replay:
    """One trace through one daemon; the counts of ``Replay.stats``."""

    def __init__(self, c: AsyncLspClient, debounce_s: float) -> None:
        self.c = c
        self.debounce_s = debounce_s
        self.shown_ms: list[float] = []
        self.n = dict(requests=0, pause_requests=0, pause_fast=0, typeahead_chances=0, typeahead_hits=0,
                      stale=0, late=0, cancelled=0, empty=0, errors=0, unanswered=0)
        self.futures: list[asyncio.Future] = []
        self.version = 0  # the client's newest document version
        self.seconds = 0.0  # time spent replaying

    async def run(self, uri: str, doc: str, keys: list[Key]) -> None:
        c = self.c
        t0 = time.perf_counter()
        model = TextModel(doc)
        version = 1
        c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                           "version": version, "text": doc}})
        shown: str | None = None  # the whole-line insertText of the suggestion on screen
        pending = None
        for key in keys:
            if pending is not None and not pending[1].done():
                c.cancel(pending[0])
            version += 1
            self.version = version
            change = model.apply(key.start, key.end, key.insert)
            c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                "contentChanges": [change]})
            cursor = key.start + len(key.insert)
            ls, le = model.line_span(cursor)
            line = model.text[ls:le]
            col = cursor - ls
            if shown is not None and not (shown.startswith(line[:col]) and shown.endswith(line[col:])):
                shown = None  # typing diverged: the editor hides the suggestion
            if key.delay_s * 1000 < self.debounce_s * 1000:
                await asyncio.sleep(key.delay_s)
                continue
            await asyncio.sleep(self.debounce_s)
            chance = shown is not None and bool(shown[col:].strip()) and len(shown) - len(line) > 0
            self.n["typeahead_chances"] += chance
            msg_id, fut = c.request_future("textDocument/inlineCompletion", {
                "textDocument": {"uri": uri}, "position": model.position(cursor), "context": {"triggerKind": 2}})
            sent = time.perf_counter()
            self.n["requests"] += 1
            self.n["pause_requests"] += key.pause
            pending = (msg_id, fut)
            state = {"version": version, "line": line, "col": col, "pause": key.pause, "chance": chance,
                     "shown": shown}
            holder: dict = {}
            task = asyncio.ensure_future(self._collect(fut, sent, state, holder))
            self.futures.append(task)
            remaining = key.delay_s - self.debounce_s
            t_end = time.perf_counter() + remaining
            try:
                await asyncio.wait_for(asyncio.shield(task), remaining)
            except TimeoutError:
                pass
            if holder.get("insert") is not None:
                shown = holder["insert"]
            await asyncio.sleep(max(0.0, t_end - time.perf_counter()))
        c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        self.seconds += time.perf_counter() - t0

    async def _collect(self, fut: asyncio.Future, sent: float, st: dict, holder: dict) -> None:
        try:
            msg = await asyncio.wait_for(fut, ANSWER_WAIT_S)
        except (TimeoutError, ConnectionError):
            self.n["unanswered"] += 1
            return
        ms = (time.perf_counter() - sent) * 1000
        if "error" in msg:
            self.n["cancelled" if msg["error"].get("code") == CANCELLED else "errors"] += 1
            return
        items = (msg.get("result") or {}).get("items") or []
        if not items:
            self.n["empty"] += 1
            return
        insert = items[0]["insertText"]
        if not insert.startswith(st["line"][:st["col"]]):
            self.n["stale"] += 1
            return
        if self.version != st["version"]:
            self.n["late"] += 1
            return
        self.shown_ms.append(ms)
        holder["insert"] = insert
        self.n["pause_fast"] += st["pause"] and ms <= FAST_MS
        self.n["typeahead_hits"] += st["chance"] and insert == st["shown"]


async def start_daemon(settings: dict, args) -> AsyncLspClient:
    cmd = [sys.executable, "-m", "mercury_lsp.cli", "serve", "--log-level", "warning"]
    if args.model:
        cmd += ["--model", args.model]
    c = await AsyncLspClient.start(*cmd)
    await c.initialize(settings, CAPABILITIES)
    status = await c.wait_notification("mercury/status", lambda p: p["state"] in ("ready", "error"), 600)
    if status["state"] != "ready":
        raise SystemExit(f"model failed to load: {status['message']}")
    return c


async def run_arms(names: list[str], traces: list[tuple[str, str, list[Key]]], args) -> list[dict]:
    """Every arm's daemon starts first; the traces then alternate between arms (A B A B ...), so
    the load of a shared machine drifting during the run falls on both alike."""
    clients = [await start_daemon(ARMS[n], args) for n in names]
    replays = [Replay(c, args.debounce_ms / 1000) for c in clients]
    cpu0 = [proc_stats(c.proc.pid)[0] for c in clients]
    for uri, doc, keys in traces:
        for r in replays:
            await r.run(uri, doc, keys)
            await asyncio.gather(*r.futures)
    return [await finish_arm(n, c, r, cpu) for n, c, r, cpu in zip(names, clients, replays, cpu0, strict=True)]


async def finish_arm(name: str, c: AsyncLspClient, r: Replay, cpu0: float | None) -> dict:
    settings = ARMS[name]
    cpu1, hwm = proc_stats(c.proc.pid)
    server = await c.request("mercury/stats", None)
    await c.shutdown()
    n = r.n
    counters = server.get("counters", {})
    return {
        "arm": name, "settings": settings, "seconds": round(r.seconds, 1), **n,
        "shown": len(r.shown_ms), "p50_ms": percentile(r.shown_ms, 0.5), "p95_ms": percentile(r.shown_ms, 0.95),
        "pause_fast_share": round(n["pause_fast"] / n["pause_requests"], 3) if n["pause_requests"] else None,
        "typeahead_hit_rate": round(n["typeahead_hits"] / n["typeahead_chances"], 3) if n["typeahead_chances"] else None,
        "server_cache_hits": counters.get("cacheHits"), "prefetch_used": counters.get("prefetchUsed"),
        "guard_dropped": counters.get("guardDropped"), "guard_prefix": counters.get("guardPrefix"),
        "engine_ms_p50": round(server["engineMsP50"], 1) if server.get("engineMsP50") else None,
        "daemon_cpu_s": round(cpu1 - cpu0, 2) if cpu0 is not None and cpu1 is not None else None,
        "peak_rss_mb": round(hwm, 1) if hwm is not None else None,
    }


def load_traces(args) -> list[tuple[str, str, list[Key]]]:
    files = [(str(Path(f).resolve()), Path(f).read_text(encoding="utf-8")) for f in args.files] if args.files \
        else heldout_files()[:TRACE_FILES]
    per_file = args.seconds / max(1, len(files))
    traces = []
    for i, (name, text) in enumerate(files):
        doc, keys = make_trace(text, per_file, args.rate, seed=args.seed + i)
        traces.append((Path(tempfile.gettempdir(), "mercury-trace", Path(name).name).as_uri(), doc, keys))
    return traces


ROWS = (("requests (debounced)", "requests"), ("suggestions shown", "shown"), ("p50 shown (ms)", "p50_ms"),
        ("p95 shown (ms)", "p95_ms"), ("pause points", "pause_requests"),
        (f"pauses shown <= {FAST_MS:.0f} ms", "pause_fast_share"), ("typeahead chances", "typeahead_chances"),
        ("typeahead hit rate", "typeahead_hit_rate"), ("stale (must be 0)", "stale"),
        ("unanswered (must be 0)", "unanswered"), ("late (after next key)", "late"), ("cancelled", "cancelled"),
        ("empty", "empty"), ("errors", "errors"), ("server cache hits", "server_cache_hits"),
        ("prefetch answers", "prefetch_used"), ("guard: left empty", "guard_dropped"),
        ("guard: cut to a prefix", "guard_prefix"),
        ("engine p50 (ms)", "engine_ms_p50"), ("daemon CPU (s)", "daemon_cpu_s"), ("peak RSS (MiB)", "peak_rss_mb"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=None, help="'tiny' (random weights), a checkpoint directory (default: embedded)")
    p.add_argument("--files", nargs="*", default=None, help="source files to type (default: held-out stdlib files)")
    p.add_argument("--seconds", type=float, default=TRACE_SECONDS, help="typing time per arm")
    p.add_argument("--rate", type=float, default=8.0, help="keystrokes per second while typing a word")
    p.add_argument("--debounce-ms", type=float, default=EDITOR_DEBOUNCE_MS, help="the editor's debounce")
    p.add_argument("--seed", type=int, default=17)
    p.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated, of {','.join(ARMS)}")
    args = p.parse_args(argv)
    tmp = None
    if args.model == "tiny":
        from mercury_train.testing import make_tiny_checkpoint

        tmp = tempfile.TemporaryDirectory()
        args.model = str(make_tiny_checkpoint(Path(tmp.name) / "tiny"))
    traces = load_traces(args)
    load0 = os.getloadavg()
    arms = asyncio.run(run_arms(args.arms.split(","), traces, args))
    result = {"model": "tiny" if tmp else (args.model or "embedded"), "keys": sum(len(t[2]) for t in traces),
              "files": [Path(t[0]).name for t in traces], "rate": args.rate, "debounce_ms": args.debounce_ms,
              "loadavg_1m": [round(load0[0], 2), round(os.getloadavg()[0], 2)], "nproc": os.cpu_count(),
              "arms": arms}
    if tmp is not None:
        tmp.cleanup()
    print(f"lsp_latency: model={result['model']} files={','.join(result['files'])} keys={result['keys']} "
          f"load1m={result['loadavg_1m']}")
    print(f"  {'':<28}" + "".join(f"{a['arm']:>12}" for a in arms))
    for label, key in ROWS:
        print(f"  {label:<28}" + "".join(f"{str(a[key]):>12}" for a in arms))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
