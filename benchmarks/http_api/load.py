"""Load on the HTTP API: 1, 8 and 32 concurrent clients replay HumanEval-infilling prompts
against ``mercury-lsp http``, with batching on (``--batch 16``, the default) and off
(``--batch 1``) side by side in one run.

    nice -n 10 python -m benchmarks.http_api.load                       # embedded model
    python -m benchmarks.http_api.load --model tiny --clients 1,2 --requests 4 --repeats 1   # smoke

Both servers run at once, each in its own process; the levels are interleaved — for each
repeat and each level, one server then the other (the order alternates between repeats) — so
a change in the machine's load hits both modes alike. The clients are this file's own (httpx,
closed loop: each sends its next request when the previous one is answered) and share no code
with the server. Each level sends ``max(--requests, 3 x clients)`` requests, prompts taken in
order from the single-line benchmark (prefix = ``prompt``, suffix = ``suffix``).

Reported per mode and level (medians over ``--repeats``): p50/p95 latency, completion tokens/s
and requests/s over the level's wall time, the server's peak RSS, and **tokens per server
CPU-second** (the server process's user + system time over the level: what batching saves
whatever the neighbours do). Targets (batching on, per repeat and their median): p95 at 8
clients <= 2x the single-client p95, throughput at 8 clients >= 3x single-client.
benchmarks/engine/batch_forward measures the ceiling batching has on the machine. Writes
benchmarks/results/http_load.{json,png}; ends with one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks import RESULTS as RESULTS_DIR
from benchmarks.common.report import pyplot
from benchmarks.http_api.server import HttpProcess, cpu_seconds, peak_rss_mib
from benchmarks.humaneval import tasks as humaneval

RESULTS = RESULTS_DIR / "http_load.json"
WARMUP_REQUESTS = 4
P95_TARGET_RATIO = 2.0  # p95 at 8 clients / p95 at 1 client, at most
THROUGHPUT_TARGET_RATIO = 3.0  # throughput at 8 clients / at 1 client, at least
REQUEST_TIMEOUT_S = 300


def percentile(data: list[float], q: float) -> float:
    s = sorted(data)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


async def run_level(url: str, prompts: list[tuple[str, str]], clients: int, total: int, max_tokens: int) -> dict:
    jobs: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    for i in range(total):
        jobs.put_nowait(prompts[i % len(prompts)])
    latencies: list[float] = []
    tokens = 0
    errors: dict[str, int] = {}

    async def client() -> None:
        nonlocal tokens
        async with httpx.AsyncClient(base_url=url, timeout=REQUEST_TIMEOUT_S) as c:
            while not jobs.empty():
                prefix, suffix = jobs.get_nowait()
                t0 = time.perf_counter()
                r = await c.post("/v1/completions", json={"prompt": prefix, "suffix": suffix,
                                                          "max_tokens": max_tokens, "temperature": 0})
                if r.status_code != 200:
                    errors[str(r.status_code)] = errors.get(str(r.status_code), 0) + 1
                    continue
                latencies.append((time.perf_counter() - t0) * 1000)
                tokens += r.json()["usage"]["completion_tokens"]

    t0 = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    wall = time.perf_counter() - t0
    return {"clients": clients, "requests": len(latencies), "errors": errors,
            "p50_ms": round(percentile(latencies, 0.5), 1) if latencies else None,
            "p95_ms": round(percentile(latencies, 0.95), 1) if latencies else None,
            "tokens_per_s": round(tokens / wall, 1), "requests_per_s": round(len(latencies) / wall, 2),
            "completion_tokens": tokens, "wall_s": round(wall, 2)}


def start_servers(model_args: list[str], batches: list[int], levels: list[int], threads: int | None) -> dict:
    servers: dict[int, HttpProcess] = {}
    try:
        for batch in batches:
            servers[batch] = HttpProcess([*model_args, "--batch", str(batch), "--max-running", str(max(levels)),
                                          "--max-waiting", str(max(levels)),
                                          *(["--threads", str(threads)] if threads else [])])
    except BaseException:
        for srv in servers.values():
            srv.stop()
        raise
    return servers


async def measure(srv: HttpProcess, prompts, clients: int, total: int, max_tokens: int) -> dict:
    cpu0 = cpu_seconds(srv.pid)
    row = await run_level(srv.url, prompts, clients, total, max_tokens)
    cpu1 = cpu_seconds(srv.pid)
    row["server_cpu_s"] = round(cpu1 - cpu0, 2) if cpu0 is not None and cpu1 is not None else None
    row["tokens_per_cpu_s"] = (round(row["completion_tokens"] / row["server_cpu_s"], 1)
                               if row["server_cpu_s"] else None)
    row["rss_mib"] = round(peak_rss_mib(srv.pid) or 0.0, 1)
    return row


async def run_all(servers: dict[int, HttpProcess], levels: list[int], prompts, args) -> dict[int, list[list[dict]]]:
    """Per batch size: per repeat, the rows of every level (modes interleaved level by level)."""
    for srv in servers.values():
        await run_level(srv.url, prompts, 1, WARMUP_REQUESTS, args.max_tokens)
    runs: dict[int, list[list[dict]]] = {b: [] for b in servers}
    order = list(servers)
    for rep in range(args.repeats):
        for b in servers:
            runs[b].append([])
        for clients in levels:
            for b in (order if rep % 2 == 0 else order[::-1]):
                row = await measure(servers[b], prompts, clients, max(args.requests, 3 * clients), args.max_tokens)
                runs[b][-1].append(row)
                print(f"  repeat {rep + 1} batch={b:>2} clients={clients:>2}: p50 {row['p50_ms']} ms, "
                      f"p95 {row['p95_ms']} ms, {row['tokens_per_s']} tok/s, "
                      f"{row['tokens_per_cpu_s']} tok/CPU-s, errors {row['errors']}", flush=True)
    return runs


def median_rows(repeats: list[list[dict]]) -> list[dict]:
    """Per level, the median of each figure over the repeats (peak RSS: the largest)."""
    out = []
    for rows in zip(*repeats, strict=True):
        errors: dict[str, int] = {}
        for r in rows:
            for k, n in r["errors"].items():
                errors[k] = errors.get(k, 0) + n
        med = {"clients": rows[0]["clients"], "repeats": len(rows), "errors": errors,
               "requests": sum(r["requests"] for r in rows)}
        for key in ("p50_ms", "p95_ms", "tokens_per_s", "requests_per_s", "tokens_per_cpu_s"):
            vals = [r[key] for r in rows if r[key] is not None]
            med[key] = round(statistics.median(vals), 1) if vals else None
        med["rss_mib"] = max(r["rss_mib"] for r in rows)
        out.append(med)
    return out


def targets(levels: list[dict]) -> dict:
    by = {r["clients"]: r for r in levels}
    if 1 not in by or 8 not in by or not by[1]["p95_ms"] or not by[8]["p95_ms"]:
        return {}
    p95_ratio = by[8]["p95_ms"] / by[1]["p95_ms"]
    tput_ratio = by[8]["tokens_per_s"] / max(by[1]["tokens_per_s"], 1e-9)
    out = {"p95_8_over_1": round(p95_ratio, 2), "p95_target_met": p95_ratio <= P95_TARGET_RATIO,
           "throughput_8_over_1": round(tput_ratio, 2), "throughput_target_met": tput_ratio >= THROUGHPUT_TARGET_RATIO}
    if by[1].get("tokens_per_cpu_s") and by[8].get("tokens_per_cpu_s"):
        out["cpu_efficiency_8_over_1"] = round(by[8]["tokens_per_cpu_s"] / by[1]["tokens_per_cpu_s"], 2)
    return out


def plot(report: dict, path: Path) -> None:
    plt = pyplot()
    if plt is None:
        return
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for mode in report["modes"]:
        xs = [r["clients"] for r in mode["levels"]]
        label = "batching on" if mode["batch"] > 1 else "batching off"
        a.plot(xs, [r["p95_ms"] for r in mode["levels"]], marker="o", label=label)
        b.plot(xs, [r["tokens_per_s"] for r in mode["levels"]], marker="o", label=label)
    a.set(xlabel="concurrent clients", ylabel="p95 latency (ms)", xscale="log", title="latency")
    b.set(xlabel="concurrent clients", ylabel="completion tokens/s", xscale="log", title="throughput")
    a.legend()
    b.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="model directory, 'tiny' (random weights), default: embedded")
    ap.add_argument("--clients", default="1,8,32")
    ap.add_argument("--requests", type=int, default=24, help="requests per level (at least 3 per client)")
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=None, help="torch threads of the server")
    ap.add_argument("--batches", default="16,1", help="batch sizes to compare (1 = batching off)")
    ap.add_argument("--repeats", type=int, default=3, help="passes over every level and mode (medians reported)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    levels = [int(c) for c in args.clients.split(",")]
    batches = [int(b) for b in args.batches.split(",")]
    problems = humaneval.load_benchmark("single-line")
    prompts = [(p.prompt, p.suffix) for p in problems]
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or ""
        if model == "tiny":
            from mercury_train.testing import make_tiny_checkpoint

            model = str(make_tiny_checkpoint(Path(tmp) / "tiny"))
        servers = start_servers(["--model", model] if model else [], batches, levels, args.threads)
        try:
            runs = asyncio.run(run_all(servers, levels, prompts, args))
        finally:
            for srv in servers.values():
                srv.stop()
    modes = [{"batch": b, "levels": median_rows(runs[b]), "runs": runs[b]} for b in batches]
    report = {"benchmark": "http_load", "model": args.model or "embedded", "max_tokens": args.max_tokens,
              "prompts": "HumanEval single-line infilling", "repeats": args.repeats,
              "threads": args.threads, "modes": modes}
    on = next((m for m in modes if m["batch"] > 1), None)
    if on is not None:
        report["targets"] = targets(on["levels"])
        report["targets_per_repeat"] = [targets(rows) for rows in on["runs"]]
    print("\n| batching | clients | p50 ms | p95 ms | tokens/s | req/s | tokens/CPU-s | peak RSS MiB |\n"
          "|---|---|---|---|---|---|---|---|")
    for m in modes:
        for r in m["levels"]:
            print(f"| {'on' if m['batch'] > 1 else 'off'} | {r['clients']} | {r['p50_ms']} | {r['p95_ms']} | "
                  f"{r['tokens_per_s']} | {r['requests_per_s']} | {r['tokens_per_cpu_s']} | {r['rss_mib']} |")
    for i, t in enumerate(report.get("targets_per_repeat", []), start=1):
        print(f"repeat {i}: {t}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    plot(report, args.out.with_suffix(".png"))
    print(json.dumps({"benchmark": "http_load", **report.get("targets", {}),
                      "levels": {f"{'on' if m['batch'] > 1 else 'off'}@{r['clients']}":
                                 [r["p95_ms"], r["tokens_per_s"], r["tokens_per_cpu_s"]]
                                 for m in modes for r in m["levels"]}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
