"""Where one completion request's time goes, stage by stage, with settings side by side.

    nice -n 10 python -m benchmarks.lsp.request_profile [--positions 60] [--arms all]
        [--out benchmarks/results/request_profile.json]

The daemon's pipeline is run in-process, stage by stage, at typing positions of held-out
standard-library files (``benchmarks/train/heldout``; never in the training corpus): a line is
typed back a few characters at a time, as an editor sends requests while the user types.
Stages, timed separately on the same request:

* ``parse`` — the incremental tree-sitter parse of the edited document;
* ``window`` — the syntax-aware context window (mercury_lsp/context.py);
* ``tokenize`` — the engine's canvas: prefix/suffix tokenized, healed, fitted;
* ``forward`` — the model's forward passes (every ``forward_hidden`` call of the decode);
* ``commit`` — the rest of the decode: LM head, scores, the commit rule, bookkeeping;
* ``guard`` — trimming a repeat of the suffix and the syntax guard (mercury_lsp/completion);
* ``json`` — the inline-completion item built and serialised as the server's JSON-RPC reply.

Arms (one process, positions interleaved arm by arm): the incremental context cache off and
on, each with a decoder (and cache) of its own. Prints a table of medians, writes
JSON and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from benchmarks import RESULTS as RESULTS_DIR

RESULTS = RESULTS_DIR / "request_profile.json"
STAGES = ("parse", "window", "tokenize", "forward", "commit", "guard", "json")
TYPE_STEP = 3  # characters typed between two requests on a line
SKIP_LINES = 80  # typing starts this far into a file: a cursor deep in real code, not in its imports
PER_FILE = 4  # files contribute at most 1/PER_FILE of the positions each
ARMS = {  # name -> context reuse (thread counts are compared across daemons: benchmarks/lsp_latency,
    # since switching torch's thread count inside one process costs more than the work measured)
    "nocache": False,
    "cache": True,
}
URI = "file:///profile.py"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.lsp.request_profile", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=None, help="model directory (default: the embedded model)")
    p.add_argument("--positions", type=int, default=60, help="requests per arm")
    p.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated, of {','.join(ARMS)}")
    p.add_argument("--out", type=Path, default=RESULTS)
    return p


def typing_positions(files: list[tuple[str, str]], n: int) -> list[tuple[str, int]]:
    """(document text, cursor): lines of real code typed back TYPE_STEP characters at a time."""
    out: list[tuple[str, int]] = []
    for _, text in files:
        offset, mine = 0, 0
        for number, line in enumerate(text.splitlines(keepends=True)):
            body = line.rstrip("\n")
            start = offset + len(body) - len(body.lstrip())
            offset += len(line)
            if number < SKIP_LINES or len(body.strip()) < 12 or body.lstrip().startswith("#"):
                continue
            if mine >= max(1, n // PER_FILE):
                break
            for cut in range(start + 4, offset - 1, TYPE_STEP):  # the rest of the line not typed yet
                out.append((text[:cut] + text[offset - 1:], cut))
                mine += 1
                if len(out) >= n:
                    return out
    return out


class ForwardTimer:
    """Times every ``forward_hidden`` call of a model (the benchmark's wrapper, not the engine's)."""

    def __init__(self, model) -> None:
        self.model, self.inner, self.seconds = model, model.forward_hidden, 0.0
        model.forward_hidden = self

    def __call__(self, *args, **kwargs):
        t0 = time.perf_counter()
        out = self.inner(*args, **kwargs)
        self.seconds += time.perf_counter() - t0
        return out


def profile_one(engine, dec, store, grammars, converter, settings, text: str, cursor: int, version: int,
                reuse: bool, timer: ForwardTimer) -> dict[str, float]:
    from mercury_engine.canvas import build_canvas
    from mercury_engine.options import InfillOptions
    from mercury_lsp.completion.items import inline_items
    from mercury_lsp.completion.pipeline import finish
    from mercury_lsp.completion.service import Suggestion
    from mercury_lsp.context import Budget, build_window
    from mercury_lsp.documents import PositionEncoding

    ms: dict[str, float] = {}
    store.change(URI, version, [(None, text)], PositionEncoding.UTF16)
    doc = store.get(URI)
    snap = doc.snapshot(settings.syntax_max_bytes)
    t0 = time.perf_counter()
    data = snap.text.encode("utf-8")
    tree = grammars.parse(snap, data)
    ms["parse"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    window = build_window(snap, tree, cursor, settings, Budget(engine.context_tokens, 3.0))
    ms["window"] = time.perf_counter() - t0
    opts = InfillOptions(single_line=window.kind == "line", context_reuse=reuse)
    t0 = time.perf_counter()
    canvas = build_canvas(engine.tokenizer, window.prefix, window.suffix, window.max_tokens,
                          engine.context_tokens, opts.heal)
    ms["tokenize"] = time.perf_counter() - t0
    timer.seconds = 0.0
    t0 = time.perf_counter()
    result = dec.run([dec.start(canvas, opts)])[0]
    decode = time.perf_counter() - t0
    ms["forward"], ms["commit"] = timer.seconds, decode - timer.seconds
    t0 = time.perf_counter()
    out, _ = finish(result.text, snap, tree, data, window, settings, grammars) if result.text else ("", False)
    ms["guard"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    items = inline_items(doc, Suggestion(out, cursor, window.replace_end, window.kind, version, False),
                         PositionEncoding.UTF16)
    json.dumps({"jsonrpc": "2.0", "id": version, "result": converter.unstructure(items)})
    ms["json"] = time.perf_counter() - t0
    return {k: v * 1000 for k, v in ms.items()}


def run(args: argparse.Namespace) -> dict:
    import torch
    from pygls.protocol import default_converter

    from benchmarks.train.heldout import heldout_files
    from mercury_engine import Engine
    from mercury_engine.fast_sampler import FastDecoder
    from mercury_lsp.config import Settings
    from mercury_lsp.documents import DocumentStore
    from mercury_lsp.syntax import Grammars, grammar_for

    names = args.arms.split(",")
    engine = Engine.load(args.model)
    timer = ForwardTimer(engine.model)
    grammars, converter, settings = Grammars(), default_converter(), Settings()
    positions = typing_positions(heldout_files(), args.positions)
    stores, decoders = {}, {}
    for name in names:  # each arm its own decoder: a context cache of its own
        decoders[name] = FastDecoder(engine.model, engine.tokenizer)
        stores[name] = DocumentStore(grammar_for)
        stores[name].open(URI, "python", 0, positions[0][0])
    rows: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    version = 0
    for text, cursor in positions:
        version += 1
        for name in names:  # interleaved: every arm sees the same load at the same moment
            reuse = ARMS[name]
            rows[name].append(profile_one(engine, decoders[name], stores[name], grammars, converter, settings, text, cursor,
                                          version, reuse, timer))
    arms = []
    for name in names:
        med = {s: round(statistics.median(r[s] for r in rows[name]), 2) for s in STAGES}
        totals = sorted(sum(r.values()) for r in rows[name])
        arms.append({"arm": name, "threads": torch.get_num_threads(), "context_reuse": ARMS[name],
                     "requests": len(rows[name]), "median_ms": med,
                     "total_p50_ms": round(totals[len(totals) // 2], 1),
                     "total_p95_ms": round(totals[min(len(totals) - 1, round(0.95 * (len(totals) - 1)))], 1)})
    return {"positions": len(positions), "type_step": TYPE_STEP, "loadavg_1m": round(os.getloadavg()[0], 2),
            "nproc": os.cpu_count(), "arms": arms,
            "cache": {n: d.context_cache.stats.as_dict() for n, d in decoders.items() if ARMS[n]}}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"one request, stage medians in ms ({result['positions']} typing positions; load {result['loadavg_1m']} "
          f"on {result['nproc']} cores)")
    print(f"  {'':<18}" + "".join(f"{s:>9}" for s in STAGES) + f"{'p50':>9}{'p95':>9}")
    for a in result["arms"]:
        print(f"  {a['arm']:<18}" + "".join(f"{a['median_ms'][s]:>9}" for s in STAGES)
              + f"{a['total_p50_ms']:>9}{a['total_p95_ms']:>9}")
    print(json.dumps({a["arm"]: {"p50_ms": a["total_p50_ms"], "p95_ms": a["total_p95_ms"]} for a in result["arms"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
