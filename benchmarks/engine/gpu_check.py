"""One prepared GPU check for the fused kernel and the engine's step time (one call, < 8 min).

    python benchmarks/engine/gpu_check.py                     # on a machine with an NVIDIA GPU
    python benchmarks/engine/gpu_check.py --device cpu --tiny # the same logic on CPU, tiny shapes

Sections (each case is isolated: a failure is recorded and the run goes on):

1. correctness — ``fused_lm_head_confidence`` (the one kernel the engine runs, on its CUDA path)
   with ``backend="triton"`` against its torch reference on the device, fp32 and bf16, odd shapes;
2. bandwidth — the kernel's bytes moved / time (CUDA events, L2 flushed between runs)
   against the device's measured copy bandwidth (a large device-to-device copy), and its
   speed-up over the unfused torch path the engine uses today;
3. model — the step time of a Dream-7B-shaped ``mercury_engine.model.Transformer`` (random bf16
   weights, built directly on the device) at batch 1/8/32 for 32- and 256-token canvases
   after a ~512-token prefix: the uncached step (whole sequence) and the cached step (canvas
   only, prefix keys/values precomputed), each followed by the fused LM head + confidence,
   plus the cached step with the torch head for comparison; converted to tokens/s with
   ``--forwards-per-token`` (default: ``forwards_per_token_balanced`` from
   benchmarks/results/engine_speed.json, else 1.0): tokens/s = batch / (step_s * fpt).

Prints a table, writes ``gpu_check.json`` to ``--out`` (default benchmarks/results) and ends
with one JSON line of headline figures. Exits 0 with "no CUDA device: nothing to check" when
there is no GPU, 1 when a correctness case failed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]  # the repository (also when run as a script)

if __package__ in (None, ""):  # run as a script (python benchmarks/engine/gpu_check.py): import the repository
    sys.path.insert(0, str(ROOT))

from benchmarks.engine.gpu_check_sections import check_bandwidth, check_correctness, check_model  # noqa: E402
from benchmarks.engine.gpu_check_support import Plan, Timer  # noqa: E402

DEFAULT_OUT = ROOT / "benchmarks" / "results"
SPEED_FILE = DEFAULT_OUT / "engine_speed.json"
FPT_KEY = "forwards_per_token_balanced"


def default_forwards_per_token(path: Path = SPEED_FILE) -> tuple[float, str]:
    try:
        value = float(json.loads(path.read_text())[FPT_KEY])
        if value > 0 and math.isfinite(value):
            return value, f"{path.name}:{FPT_KEY}"
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return 1.0, "default 1.0"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu (needs --tiny)")
    p.add_argument("--tiny", action="store_true", help="tiny shapes and model (CPU smoke run of the logic)")
    p.add_argument("--forwards-per-token", type=float, default=None,
                   help=f"model forwards per generated token (default: {FPT_KEY} from "
                        f"benchmarks/results/engine_speed.json, else 1.0)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="directory for gpu_check.json")
    p.add_argument("--skip", default="", help="comma list of sections to skip: correctness,bandwidth,model")
    p.add_argument("--budget-s", type=float, default=450.0,
                   help="stop starting new sections after this many seconds (default 450)")
    args = p.parse_args(argv)
    if args.forwards_per_token is not None and not (args.forwards_per_token > 0):
        p.error("--forwards-per-token must be > 0")
    if args.device not in ("cuda", "cpu") and not args.device.startswith("cuda:"):
        p.error("--device must be cuda, cuda:N or cpu")
    if args.device == "cpu" and not args.tiny:
        p.error("--device cpu runs the kernels in the Triton interpreter: use it with --tiny")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.device == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported
    sys.path.insert(0, str(ROOT))
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("no CUDA device: nothing to check")
        return 0
    import mercury_engine.kernels as k

    if not k.HAS_TRITON:
        print("triton is not installed: nothing to check (pip install 'mercury-lsp[kernels]')")
        return 0
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = False  # fp32 references stay fp32
    plan = Plan(args.tiny)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    fpt, fpt_source = ((args.forwards_per_token, "--forwards-per-token") if args.forwards_per_token
                       else default_forwards_per_token())
    t_start = time.perf_counter()

    def log(msg: str) -> None:
        print(msg, flush=True)

    def time_left() -> bool:
        return time.perf_counter() - t_start < args.budget_s

    import triton

    report: dict[str, Any] = {
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu",
        "torch": torch.__version__, "triton": triton.__version__, "tiny": plan.tiny,
        "forwards_per_token": fpt, "forwards_per_token_source": fpt_source, "sections_skipped": [],
    }
    log(f"gpu_check on {report['device']} (torch {torch.__version__}, triton {triton.__version__}"
        f"{', tiny shapes' if plan.tiny else ''})")
    timer = Timer(torch, device)

    n_fail = 0
    if "correctness" not in skip:
        log("\n[1] correctness: backend='triton' vs the torch reference")
        cases = check_correctness(torch, k, device, plan, log)
        n_fail = sum(not c["ok"] for c in cases)
        report["correctness"] = {"passed": len(cases) - n_fail, "failed": n_fail, "cases": cases}
        log(f"  {len(cases) - n_fail} passed, {n_fail} failed "
            f"({time.perf_counter() - t_start:.0f} s so far)")
    for name, run in (("bandwidth", lambda: check_bandwidth(torch, k, device, plan, timer, log)),
                      ("model", lambda: check_model(torch, k, device, plan, timer, fpt, log))):
        if name in skip:
            continue
        if not time_left():
            report["sections_skipped"].append(name)
            log(f"\n[{name}] skipped: --budget-s {args.budget_s:.0f} s spent")
            continue
        log(f"\n[{'2' if name == 'bandwidth' else '3'}] {name}")
        try:
            report[name] = run()
        except Exception as exc:
            report[name] = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(limit=6)}
            log(f"  ERROR {report[name]['error']}")
        if device.type == "cuda":
            torch.cuda.empty_cache()

    report["seconds"] = round(time.perf_counter() - t_start, 1)
    report["headline"] = headline(report)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "gpu_check.json"
    path.write_text(json.dumps(report, indent=1, default=str) + "\n")
    log(f"\nwrote {path} in {report['seconds']} s")
    print(json.dumps(report["headline"], separators=(",", ":")))
    return 1 if n_fail else 0


def headline(report: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"device": report["device"], "tiny": report["tiny"]}
    if "correctness" in report:
        out["correctness_passed"] = report["correctness"]["passed"]
        out["correctness_failed"] = report["correctness"]["failed"]
    bw = report.get("bandwidth", {})
    if "copy" in bw:
        out["copy_gbps"] = round(bw["copy"]["gbps"], 1)
        for op in ("lm_head_confidence",):
            rows = [r for r in bw["kernels"] if r["op"] == op and "error" not in r]
            if rows:
                big = rows[-1]  # the largest shape
                out[f"{op}_copy_bw_frac"] = round(big["fraction_of_copy_bw"], 3)
                out[f"{op}_speedup_vs_torch"] = round(big["speedup_vs_torch"], 2)
    steps = [r for r in report.get("model", {}).get("steps", []) if "error" not in r]
    for r in steps:
        out[f"tok_s_b{r['batch']}_c{r['canvas']}"] = round(r["tokens_per_s_cached"], 1)
    if steps:
        out["forwards_per_token"] = report["forwards_per_token"]
    out["seconds"] = report["seconds"]
    return out


if __name__ == "__main__":
    sys.exit(main())
