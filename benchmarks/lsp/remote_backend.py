"""Backend latency: one suggestion through ``mercury-lsp serve`` with the ``openai-fim`` backend
pointed at llama.cpp's server, against the same completion asked of llama-server directly (the
body the backend sends), side by side in one run. The difference is what the language server
adds (context window, prompt format, shaping, the LSP round trip). llama-server serves the tiny
random GGUF of benchmarks/common/llama_server.py (``./dev llama``): the figures are the
protocol's cost, not a real model's speed.

    python -m benchmarks.lsp.remote_backend [--requests 40]

Prints a table, writes benchmarks/results/lsp_remote_backend.json, ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import urllib.request

from benchmarks import RESULTS as RESULTS_DIR
from benchmarks.common import llama_server
from benchmarks.common.jsonrpc import LspProcess
from benchmarks.common.report import git_state, write_atomic

RESULTS = RESULTS_DIR / "lsp_remote_backend.json"
MAX_TOKENS = 16
WARMUP = 3  # requests before timing (connections opened, caches of both servers warm)
DOC = "def total(values, scale):\n    acc = 0\n    for v in values:\n        acc += v * scale\n    return acc\n"


def _quantiles(ms: list[float]) -> dict[str, float]:
    q = statistics.quantiles(ms, n=20)
    return {"n": len(ms), "p50_ms": round(statistics.median(ms), 1), "p95_ms": round(q[18], 1),
            "mean_ms": round(statistics.fmean(ms), 1)}


def direct(srv: llama_server.LlamaServer, n: int) -> list[float]:
    """POST /v1/completions as the openai-fim backend does (starcoder FIM prompt), n times."""
    out = []
    for i in range(WARMUP + n):
        prompt = f"<fim_prefix>{DOC}# {i}\n<fim_suffix>\n<fim_middle>"
        body = json.dumps({"prompt": prompt, "max_tokens": MAX_TOKENS, "temperature": 0,
                           "stop": ["<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<|endoftext|>"]}).encode()
        req = urllib.request.Request(srv.url + "/v1/completions", data=body, headers={"Content-Type": "application/json"})
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=60) as r:
            r.read()
        if i >= WARMUP:
            out.append((time.perf_counter() - t0) * 1000)
    return out


def through_lsp(srv: llama_server.LlamaServer, n: int) -> list[float]:
    """inlineCompletion through ``mercury-lsp serve --settings {backend: openai-fim}``; each request
    after an edit (a new line), so no cache or typeahead answers it."""
    settings = {"backend": {"api": "openai-fim", "url": srv.url, "promptFormat": "starcoder"},
                "maxTokens": MAX_TOKENS, "prefetch": False, "syntaxGuard": "off"}
    lsp = LspProcess([sys.executable, "-m", "mercury_lsp.cli", "serve", "--settings", json.dumps(settings)])
    uri = "file:///bench/total.py"
    out = []
    try:
        lsp.request("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {}})
        lsp.notify("initialized", {})
        lsp.wait_notification("mercury/status", lambda p: p["state"] in ("ready", "error"), 120)
        lsp.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                             "text": DOC}})
        lines = DOC.count("\n")
        for i in range(WARMUP + n):
            line = lines + i
            lsp.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": i + 2}, "contentChanges": [
                {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
                 "text": f"# {i}\n"}]})
            t0 = time.perf_counter()
            lsp.request("textDocument/inlineCompletion", {"textDocument": {"uri": uri},
                                                          "position": {"line": line + 1, "character": 0},
                                                          "context": {"triggerKind": 1}})
            if i >= WARMUP:
                out.append((time.perf_counter() - t0) * 1000)
    finally:
        lsp.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=40)
    args = ap.parse_args()
    why = llama_server.missing()
    if why:
        sys.exit(f"benchmarks.lsp.remote_backend: {why}")
    with llama_server.LlamaServer() as srv:
        rows = {"llama-server /v1/completions": _quantiles(direct(srv, args.requests)),
                "mercury-lsp serve -> llama-server": _quantiles(through_lsp(srv, args.requests))}
    head = f"{'arm':<36}{'n':>5}{'p50 ms':>9}{'p95 ms':>9}{'mean ms':>9}"
    print("Backend latency (openai-fim, llama.cpp, tiny random GGUF; one machine, side by side)")
    print(head + "\n" + "-" * len(head))
    for arm, r in rows.items():
        print(f"{arm:<36}{r['n']:>5}{r['p50_ms']:>9}{r['p95_ms']:>9}{r['mean_ms']:>9}")
    lsp, raw = rows["mercury-lsp serve -> llama-server"], rows["llama-server /v1/completions"]
    summary = {"benchmark": "lsp_remote_backend", "lsp_p50_ms": lsp["p50_ms"], "direct_p50_ms": raw["p50_ms"],
               "overhead_p50_ms": round(lsp["p50_ms"] - raw["p50_ms"], 1), "load": os.getloadavg()[0]}
    write_atomic(RESULTS, json.dumps({"rows": rows, "summary": summary, "git": git_state(),
                                      "llama_server": str(llama_server.binary()),
                                      "model": str(llama_server.model())}, indent=1) + "\n")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
