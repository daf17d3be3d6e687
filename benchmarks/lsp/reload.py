"""Model reloads: does the daemon give a replaced model's memory back?

One ``mercury-lsp serve`` (stdio, the embedded model unless ``--model``) per variant: after
the first load and a burst of inline completions (which start the engine's scheduler), the
client switches ``context.maxContextTokens`` between two values with
``workspace/didChangeConfiguration`` ``--reloads`` times — each switch reloads the model — and
sends the same burst after each reload. The daemon's RSS (``VmRSS``) and thread count are read
after every reload; the figure is the least-squares growth in MB per reload.

Variants: this tree, and with ``--before REF`` (repeatable) the daemon of an older commit (run
from a temporary ``git worktree``, ``benchmarks/common/checkouts``) in the same run, side by side.

    python -m benchmarks.lsp.reload [--reloads 8] [--requests 20] [--before a1aef85 --before 6691226]

Prints a table, writes ``benchmarks/results/reload.json`` and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sysconfig
from pathlib import Path

from benchmarks import RESULTS as RESULTS_DIR
from benchmarks.common.checkouts import checkout, cli_argv, commit_of
from benchmarks.common.jsonrpc import AsyncLspClient

RESULTS = RESULTS_DIR / "reload.json"
CONTEXTS = (512, 448)  # two context budgets: switching between them reloads the model
# At most this much growth per reload counts as "freed" (allocator noise; a kept model of the
# embedded size is about 20 MB per reload).
FREED_MB_PER_RELOAD = 2.0
DOC = Path(sysconfig.get_paths()["stdlib"]) / "json" / "encoder.py"
LOAD_TIMEOUT_S = 600


def proc_status(pid: int) -> dict[str, float]:
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    return {"rss_mb": round(int(fields["VmRSS"].split()[0]) / 1024, 1), "threads": int(fields["Threads"])}


def slope(ys: list[float]) -> float:
    """Least-squares growth per step of ``ys`` (one value per reload)."""
    n = len(ys)
    xm, ym = (n - 1) / 2, sum(ys) / n
    return sum((i - xm) * (y - ym) for i, y in enumerate(ys)) / max(1e-9, sum((i - xm) ** 2 for i in range(n)))


async def burst(c: AsyncLspClient, uri: str, lines: list[str], n: int) -> int:
    futures = [c.request_future("textDocument/inlineCompletion", {
        "textDocument": {"uri": uri}, "position": {"line": i * 7 % len(lines), "character": len(lines[i * 7 % len(lines)])},
        "context": {"triggerKind": 1}})[1] for i in range(n)]
    answers = await asyncio.wait_for(asyncio.gather(*futures), LOAD_TIMEOUT_S)
    return sum(1 for a in answers if "result" in a)


async def ready(c: AsyncLspClient, seen: int) -> None:
    """Wait for the ``seen + 1``-th ``mercury/status`` that ends a load."""
    done = [0]

    def ends_load(p: dict) -> bool:
        if p["state"] in ("ready", "error"):
            done[0] += 1
        return done[0] > seen

    await c.wait_notification("mercury/status", ends_load, LOAD_TIMEOUT_S)
    last = [p for p in c.notifications["mercury/status"] if p["state"] in ("ready", "error")][-1]
    if last["state"] != "ready":
        raise SystemExit(f"reload: the model did not load: {last['message']}")


async def run_variant(label: str, source: Path | None, args) -> dict:
    cmd = cli_argv(source) + ["serve", "--threads", str(args.threads)] + (["--model", args.model] if args.model else [])
    c = await AsyncLspClient.start(*cmd, stderr=asyncio.subprocess.DEVNULL)
    settings = {"debounceMs": 0, "context": {"maxContextTokens": CONTEXTS[0]}}
    await c.initialize(settings)
    await ready(c, 0)
    text = DOC.read_text(encoding="utf-8")
    uri = "file:///reload/encoder.py"
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    lines = text.split("\n")
    rows = [{"reload": 0, "answered": await burst(c, uri, lines, args.requests), **proc_status(c.proc.pid)}]
    print(f"{label}\n{'reload':>6} {'answered':>9} {'RSS MB':>8} {'threads':>8}")
    for i in range(1, args.reloads + 1):
        settings = {**settings, "context": {"maxContextTokens": CONTEXTS[i % 2]}}
        c.notify("workspace/didChangeConfiguration", {"settings": settings})
        await ready(c, i)
        rows.append({"reload": i, "answered": await burst(c, uri, lines, args.requests), **proc_status(c.proc.pid)})
    for r in rows:
        print(f"{r['reload']:>6} {r['answered']:>9} {r['rss_mb']:>8} {r['threads']:>8}", flush=True)
    code = await c.shutdown()
    after = [r["rss_mb"] for r in rows[1:]]
    per_reload = round(slope(after), 2)
    return {"label": label, "source": "this tree" if source is None else str(source), "rows": rows,
            "mb_per_reload": per_reload, "threads_added": rows[-1]["threads"] - rows[1]["threads"],
            "freed": per_reload <= FREED_MB_PER_RELOAD, "all_answered": all(r["answered"] == args.requests for r in rows),
            "exit_code": code}


async def main_async(args) -> dict:
    variants = []
    with contextlib.ExitStack() as stack:
        for ref in args.before:
            old = stack.enter_context(checkout(ref))
            variants.append(await run_variant(f"before ({commit_of(ref)[:7]})", old, args))
        variants.append(await run_variant("after (this tree)", None, args))
    return {"reloads": args.reloads, "requests_per_reload": args.requests, "contexts": list(CONTEXTS),
            "model": args.model or "embedded", "threads": args.threads,
            "freed_mb_per_reload": FREED_MB_PER_RELOAD, "variants": variants}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--reloads", type=int, default=8)
    p.add_argument("--requests", type=int, default=20, help="inline completions after each load")
    p.add_argument("--before", action="append", default=[], metavar="REF",
                   help="also measure the daemon of this commit (repeatable)")
    p.add_argument("--threads", type=int, default=1, help="the daemon's CPU threads")
    p.add_argument("--model", default=None)
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args()
    out = asyncio.run(main_async(args))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({v["label"]: {k: v[k] for k in ("mb_per_reload", "threads_added", "freed", "all_answered")}
                      for v in out["variants"]}))


if __name__ == "__main__":
    main()
