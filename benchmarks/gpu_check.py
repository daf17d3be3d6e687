"""One prepared GPU check for the fused kernels and the engine's step time (one call, < 8 min).

    python benchmarks/gpu_check.py                     # on a machine with an NVIDIA GPU
    python benchmarks/gpu_check.py --device cpu --tiny # the same logic on CPU, tiny shapes

Sections (each case is isolated: a failure is recorded and the run goes on):

1. correctness — every op (``fused_confidence``, ``fused_lm_head_confidence``,
   ``fused_rmsnorm``) with ``backend="triton"`` against its torch reference on the device,
   fp32 and bf16, odd shapes, NaN/-inf rows and argmax ties;
2. bandwidth — each kernel's bytes moved / time (CUDA events, L2 flushed between runs)
   against the device's measured copy bandwidth (a large device-to-device copy), and its
   speed-up over the unfused torch path the engine uses today;
3. model — the step time of a Dream-7B-shaped ``engine.model.Transformer`` (random bf16
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
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results"
SPEED_FILE = DEFAULT_OUT / "engine_speed.json"
FPT_KEY = "forwards_per_token_balanced"

DREAM_7B = dict(vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_layers=28,
                num_heads=28, num_kv_heads=4, head_dim=128, qkv_bias=True,
                max_position_embeddings=4096)
TINY = dict(vocab_size=1003, hidden_size=72, intermediate_size=176, num_layers=2, num_heads=4,
            num_kv_heads=2, head_dim=18, qkv_bias=True, max_position_embeddings=256)


# ---------------------------------------------------------------------------- plan
class Plan:
    """Shapes and repetitions for a full (GPU) or tiny (CPU smoke) run."""

    def __init__(self, tiny: bool) -> None:
        self.tiny = tiny
        if tiny:
            self.conf_shapes = [(n, v) for n in (1, 7) for v in (1003, 2053)]
            self.lm_shapes = [(n, v, d) for n in (1, 7) for v, d in ((1003, 64), (2053, 72))]
            self.rms_shapes = [(n, d) for n in (1, 7) for d in (70, 200)]
            self.bw_conf_rows, self.bw_vocab = (4, 16), 2053
            self.bw_lm_rows, self.bw_lm_dim = (4, 16), 64
            self.bw_rms_rows, self.bw_rms_dim = (8, 64), 200
            self.copy_bytes = 8 << 20
            self.model = TINY
            self.batches, self.canvases, self.prefix = (1, 2), (8, 16), 32
            self.reps, self.warmup, self.model_reps = 2, 1, 1
        else:
            self.conf_shapes = [(n, v) for n in (1, 7, 33) for v in (50257, 151936)]
            self.lm_shapes = [(n, v, d) for n in (1, 7, 33) for v in (50257, 151936) for d in (64, 72)]
            self.lm_shapes += [(n, 152064, 3584) for n in (1, 33)]
            self.rms_shapes = [(n, d) for n in (1, 7, 33) for d in (70, 200, 896, 3584)]
            self.bw_conf_rows, self.bw_vocab = (32, 256, 2048, 8192), 152064
            self.bw_lm_rows, self.bw_lm_dim = (32, 256, 1024, 8192), 3584
            self.bw_rms_rows, self.bw_rms_dim = (256, 8192, 32768), 3584
            self.copy_bytes = 2 << 30
            self.model = DREAM_7B
            self.batches, self.canvases, self.prefix = (1, 8, 32), (32, 256), 512
            self.reps, self.warmup, self.model_reps = 20, 3, 5


# ---------------------------------------------------------------------------- timing
class Timer:
    """Median wall time of a callable: CUDA events (with an L2 flush before each run) on
    CUDA, perf_counter elsewhere."""

    def __init__(self, torch, device) -> None:
        self.torch, self.device = torch, device
        self.cuda = device.type == "cuda"
        self.flush = torch.empty(256 << 20, dtype=torch.uint8, device=device) if self.cuda else None

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize(self.device)

    def ms(self, fn: Callable[[], Any], reps: int, warmup: int, flush_l2: bool = True) -> float:
        for _ in range(warmup):
            fn()
        self.sync()
        times = []
        for _ in range(max(1, reps)):
            if self.cuda:
                if flush_l2:
                    self.flush.zero_()
                start = self.torch.cuda.Event(enable_timing=True)
                end = self.torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end))
            else:
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)


# ---------------------------------------------------------------------------- comparison
def compare(torch, name: str, actual, expected, atol: float, rtol: float) -> dict[str, Any]:
    """allclose with NaN == NaN; returns the worst element instead of raising."""
    a, e = actual.detach().double().cpu(), expected.detach().double().cpu()
    if a.shape != e.shape:
        return {"field": name, "ok": False, "error": f"shape {tuple(a.shape)} vs {tuple(e.shape)}"}
    nan_a, nan_e = a.isnan(), e.isnan()
    same = (a == e) | (nan_a & nan_e)
    diff = torch.where(same, 0.0, (a - e).abs()).nan_to_num(math.inf)
    excess = diff - (atol + rtol * e.abs().nan_to_num(0.0, 0.0, 0.0))
    flat = int(excess.flatten().argmax())
    idx = tuple(int(k) for k in torch.unravel_index(torch.tensor(flat), a.shape))
    ok = bool((excess <= 0).all()) and torch.equal(nan_a, nan_e)
    return {"field": name, "ok": ok, "max_abs_diff": float(diff.max()), "worst_index": list(idx),
            "kernel": float(a[idx]), "reference": float(e[idx]), "atol": atol, "rtol": rtol}


def compare_tokens(torch, actual, expected, logits, tie_tol: float) -> dict[str, Any]:
    """Equal tokens, or tokens whose reference logits tie within ``tie_tol``."""
    diff_rows = (actual != expected).nonzero().flatten().tolist()
    bad = []
    for r in diff_rows:
        la, le = float(logits[r, int(actual[r])]), float(logits[r, int(expected[r])])
        if not abs(la - le) <= tie_tol:
            bad.append({"row": r, "kernel": int(actual[r]), "reference": int(expected[r]),
                        "kernel_logit": la, "reference_logit": le})
    return {"field": "token", "ok": not bad, "rows_differing": len(diff_rows), "bad": bad[:3]}


# ---------------------------------------------------------------------------- section 1
def check_correctness(torch, k, device, plan: Plan, log) -> list[dict[str, Any]]:
    from engine.kernels.confidence import confidence_reference, confidence_triton, resolve_backend
    from engine.kernels.lm_head_confidence import lm_head_confidence_reference
    from engine.kernels.rmsnorm import rmsnorm_reference

    cases: list[dict[str, Any]] = []
    gen = torch.Generator(device=device).manual_seed(0)
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16}
    conf_tol = {"prob": (1e-5, 1e-4), "entropy": (1e-4, 1e-4), "margin": (1e-5, 1e-4)}
    lm_tol = {"prob": (1e-4, 1e-3), "entropy": (1e-3, 1e-3), "margin": (1e-4, 1e-3)}
    rms_tol = {torch.float32: (1e-5, 1e-5), torch.bfloat16: (1e-2, 1.6e-2)}

    def run_case(name: str, fn: Callable[[], list[dict[str, Any]]]) -> None:
        t0 = time.perf_counter()
        try:
            checks = fn()
            ok = all(c["ok"] for c in checks)
            case = {"case": name, "ok": ok, "checks": checks}
        except Exception as exc:  # record and go on: one GPU call must report everything
            case = {"case": name, "ok": False, "error": f"{type(exc).__name__}: {exc}",
                    "traceback": traceback.format_exc(limit=4)}
        case["seconds"] = round(time.perf_counter() - t0, 3)
        cases.append(case)
        if not case["ok"]:
            log(f"  FAIL {name}: {json.dumps({x: case[x] for x in case if x != 'traceback'})[:600]}")

    def conf_checks(out, ref, logits, tol, tie_tol):
        checks = [compare_tokens(torch, out.token, ref.token, logits, tie_tol)]
        same = out.token == ref.token
        for f in ("prob", "entropy", "margin"):
            checks.append(compare(torch, f, getattr(out, f)[same], getattr(ref, f)[same], *tol[f]))
        return checks

    checks_auto = resolve_backend("auto", device)
    cases.append({"case": "auto backend picks triton on this device", "ok": device.type != "cuda"
                  or checks_auto == "triton", "backend": checks_auto})

    for dname, dt in dtypes.items():
        for n, v in plan.conf_shapes:
            def conf_case(n=n, v=v, dt=dt):
                x = (torch.randn(n, v, generator=gen, device=device) * 3).to(dt)
                out = k.fused_confidence(x, with_entropy=True, with_margin=True, backend="triton")
                ref = confidence_reference(x, with_entropy=True, with_margin=True)
                return conf_checks(out, ref, x.float(), conf_tol, 0.0)
            run_case(f"confidence {dname} N={n} V={v}", conf_case)

        for n, v, d in plan.lm_shapes:
            def lm_case(n=n, v=v, d=d, dt=dt):
                h = torch.randn(n, d, generator=gen, device=device).to(dt)
                w = (torch.randn(v, d, generator=gen, device=device) * (2.0 / d**0.5)).to(dt)
                out = k.fused_lm_head_confidence(h, w, with_entropy=True, with_margin=True, backend="triton")
                ref = lm_head_confidence_reference(h, w, with_entropy=True, with_margin=True, fp32_logits=True)
                return conf_checks(out, ref, h.float() @ w.float().T, lm_tol, 1e-3)
            run_case(f"lm_head_confidence {dname} N={n} V={v} D={d}", lm_case)

        for n, d in plan.rms_shapes:
            def rms_case(n=n, d=d, dt=dt):
                x = (torch.randn(n, d, generator=gen, device=device) * 2).to(dt)
                r = torch.randn(n, d, generator=gen, device=device).to(dt)
                w = (1 + 0.3 * torch.randn(d, generator=gen, device=device)).to(dt)
                checks = []
                for res in (None, r):
                    out = k.fused_rmsnorm(x, w, res, eps=1e-6, backend="triton")
                    ref = rmsnorm_reference(x, w, res, eps=1e-6)
                    checks.append(compare(torch, "y" if res is None else "y+res", out.y, ref.y, *rms_tol[dt]))
                    if res is not None:
                        checks.append(compare(torch, "residual", out.residual, ref.residual, 0.0, 0.0))
                return checks
            run_case(f"rmsnorm {dname} N={n} D={d}", rms_case)

        def special_case(dt=dt):
            v = 4099
            x = torch.randn(8, v, generator=gen, device=device) * 2
            x[0, ::2] = -math.inf
            x[1] = -math.inf
            x[2, [v // 2, v - 3]] = math.nan
            x[3, [v // 3, v - 1]] = math.inf
            x[4, 10], x[4, v - 2] = math.inf, math.nan
            x[5] = -math.inf
            x[5, v - 1] = 0.0
            x[6, [5, 2000, 4098]] = 50.0  # ties: lowest index
            x[7] = 1.0  # uniform
            x = x.to(dt)
            checks = []
            for splits in (None, 1, 3):
                out = confidence_triton(x, with_entropy=True, with_margin=True, num_splits=splits)
                ref = confidence_reference(x, with_entropy=True, with_margin=True)
                want = [int(x[0].float().argmax()), 0, v // 2, v // 3, v - 2, v - 1, 5, 0]
                checks.append({"field": f"special tokens splits={splits}", "ok": out.token.tolist() == want
                               == ref.token.tolist(), "kernel": out.token.tolist(), "expected": want})
                for f in ("prob", "entropy", "margin"):
                    checks.append(compare(torch, f"{f} splits={splits}", getattr(out, f), getattr(ref, f),
                                          *conf_tol[f]))
            return checks
        run_case(f"confidence {dname} NaN/-inf/+inf/ties", special_case)
    return cases


# ---------------------------------------------------------------------------- section 2
def check_bandwidth(torch, k, device, plan: Plan, timer: Timer, log) -> dict[str, Any]:
    from engine.decode import predict

    res: dict[str, Any] = {"kernels": []}
    copy_ms = copy_time_ms(torch, device, plan, timer)
    copy_gbps = 2 * plan.copy_bytes / (copy_ms * 1e-3) / 1e9
    res["copy"] = {"bytes": 2 * plan.copy_bytes, "ms": copy_ms, "gbps": copy_gbps}
    log(f"  device copy: {copy_gbps:8.1f} GB/s ({plan.copy_bytes >> 20} MiB each way, {copy_ms:.3f} ms)")
    bf16 = torch.bfloat16

    def record(op: str, shape: str, nbytes: int, fused: Callable, unfused: Callable, flops: float = 0.0):
        try:
            ms = timer.ms(fused, plan.reps, plan.warmup)
            ref_ms = timer.ms(unfused, max(3, plan.reps // 4), 1)
            row = {"op": op, "shape": shape, "bytes": nbytes, "ms": ms, "gbps": nbytes / (ms * 1e-3) / 1e9,
                   "torch_ms": ref_ms, "speedup_vs_torch": ref_ms / ms}
            row["fraction_of_copy_bw"] = row["gbps"] / copy_gbps
            if flops:
                row["tflops"] = flops / (ms * 1e-3) / 1e12
        except Exception as exc:
            row = {"op": op, "shape": shape, "error": f"{type(exc).__name__}: {exc}"}
        res["kernels"].append(row)
        log("  " + fmt_bw(row))

    v = plan.bw_vocab
    for n in plan.bw_conf_rows:
        x = torch.randn(n, v, device=device).to(bf16)
        record("confidence(max_prob)", f"N={n} V={v} bf16", x.numel() * 2 + n * 12,
               lambda x=x: k.fused_confidence(x, backend="triton"),
               lambda x=x: predict(x, 0.0, "max_prob", None))
        record("confidence(+entropy+margin)", f"N={n} V={v} bf16", x.numel() * 2 + n * 20,
               lambda x=x: k.fused_confidence(x, with_entropy=True, with_margin=True, backend="triton"),
               lambda x=x: (predict(x, 0.0, "neg_entropy", None), predict(x, 0.0, "margin", None)))
    d = plan.bw_lm_dim
    w = (torch.randn(v, d, device=device) * d**-0.5).to(bf16)
    for n in plan.bw_lm_rows:
        h = torch.randn(n, d, device=device).to(bf16)
        record("lm_head_confidence", f"N={n} V={v} D={d} bf16", w.numel() * 2 + h.numel() * 2 + n * 12,
               lambda h=h, w=w: k.fused_lm_head_confidence(h, w, backend="triton"),
               lambda h=h, w=w: predict(h @ w.T, 0.0, "max_prob", None), flops=2.0 * n * v * d)
    d = plan.bw_rms_dim
    for m in plan.bw_rms_rows:
        x = torch.randn(m, d, device=device).to(bf16)
        r = torch.randn(m, d, device=device).to(bf16)
        wt = torch.ones(d, device=device, dtype=bf16)

        def unfused(x=x, r=r, wt=wt):
            s = x + r
            s32 = s.float()
            return wt * (s32 * torch.rsqrt(s32.pow(2).mean(-1, keepdim=True) + 1e-6)).to(s.dtype), s
        record("rmsnorm+residual", f"M={m} D={d} bf16", 4 * x.numel() * 2 + d * 2,
               lambda x=x, r=r, wt=wt: k.fused_rmsnorm(x, wt, r, backend="triton"), unfused)
    return res


def copy_time_ms(torch, device, plan: Plan, timer: Timer) -> float:
    """Median time of a device-to-device copy of ``plan.copy_bytes`` (moves twice that)."""
    src = torch.ones(plan.copy_bytes, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    return timer.ms(lambda: dst.copy_(src), plan.reps, plan.warmup, flush_l2=False)


def fmt_bw(row: dict[str, Any]) -> str:
    if "error" in row:
        return f"{row['op']:<28} {row['shape']:<26} ERROR {row['error'][:80]}"
    extra = f" {row['tflops']:7.1f} TFLOP/s" if "tflops" in row else ""
    return (f"{row['op']:<28} {row['shape']:<26} {row['ms']:9.4f} ms {row['gbps']:8.1f} GB/s "
            f"({100 * row['fraction_of_copy_bw']:5.1f}% of copy){extra}  torch {row['torch_ms']:9.4f} ms "
            f"x{row['speedup_vs_torch']:.2f}")


# ---------------------------------------------------------------------------- section 3
def check_model(torch, k, device, plan: Plan, timer: Timer, fpt: float, log) -> dict[str, Any]:
    from engine.config import ModelConfig
    from engine.decode import predict
    from engine.model import Transformer

    cfg = ModelConfig(**plan.model)
    t0 = time.perf_counter()
    default_dtype = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device(device):  # parameters are created (and randomly initialised) on the device
            model = Transformer(cfg)
    finally:
        torch.set_default_dtype(default_dtype)
    model.eval().requires_grad_(False)
    timer.sync()
    build_s = time.perf_counter() - t0
    n_params = sum(p.numel() for p in model.parameters())
    log(f"  model: {n_params / 1e9:.2f} B parameters (bf16) built on {device} in {build_s:.1f} s")
    w = model.output_embedding  # [V, D]
    rows = []
    for b in plan.batches:
        for c in plan.canvases:
            row: dict[str, Any] = {"batch": b, "canvas": c, "prefix": plan.prefix}
            try:
                with torch.inference_mode():
                    t = plan.prefix + c
                    idx = torch.randint(0, cfg.vocab_size, (b, t), device=device)  # [B, P+C]
                    pos = torch.arange(t, device=device).expand(b, t)  # [B, P+C]
                    _, ctx = model.forward_hidden(idx[:, :plan.prefix], pos[:, :plan.prefix], return_kv=True)
                    canvas, cpos = idx[:, plan.prefix:], pos[:, plan.prefix:]  # [B, C]

                    def full_step(idx=idx, pos=pos):
                        h, _ = model.forward_hidden(idx, pos)  # [B, P+C, D]
                        return k.fused_lm_head_confidence(h[:, plan.prefix:].reshape(-1, cfg.hidden_size), w)

                    def cached_step(canvas=canvas, cpos=cpos, ctx=ctx):
                        h, _ = model.forward_hidden(canvas, cpos, ctx_kv=ctx)  # [B, C, D]
                        return k.fused_lm_head_confidence(h.reshape(-1, cfg.hidden_size), w)

                    def cached_step_torch_head(canvas=canvas, cpos=cpos, ctx=ctx):
                        h, _ = model.forward_hidden(canvas, cpos, ctx_kv=ctx)  # [B, C, D]
                        return predict(model.lm_head(h).reshape(-1, cfg.vocab_size), 0.0, "max_prob", None)

                    for name, fn in (("full_ms", full_step), ("cached_ms", cached_step),
                                     ("cached_torch_head_ms", cached_step_torch_head)):
                        row[name] = timer.ms(fn, plan.model_reps, 1, flush_l2=False)
                row["tokens_per_s_cached"] = b / (row["cached_ms"] * 1e-3 * fpt)
                row["tokens_per_s_full"] = b / (row["full_ms"] * 1e-3 * fpt)
            except Exception as exc:
                row["error"] = f"{type(exc).__name__}: {exc}"
            if device.type == "cuda":
                torch.cuda.empty_cache()
            rows.append(row)
            log("  " + fmt_model(row))
    return {"config": plan.model, "parameters": n_params, "build_s": build_s, "forwards_per_token": fpt,
            "steps": rows}


def fmt_model(row: dict[str, Any]) -> str:
    head = f"batch {row['batch']:>3} canvas {row['canvas']:>4} prefix {row['prefix']:>4}"
    if "error" in row:
        return f"{head}  ERROR {row['error'][:100]}"
    return (f"{head}  full {row['full_ms']:9.2f} ms  cached {row['cached_ms']:9.2f} ms  "
            f"cached+torch head {row['cached_torch_head_ms']:9.2f} ms  "
            f"{row['tokens_per_s_cached']:10.1f} tok/s cached  {row['tokens_per_s_full']:10.1f} tok/s full")


# ---------------------------------------------------------------------------- main
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
    import engine.kernels as k

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
        for op in ("confidence(max_prob)", "lm_head_confidence", "rmsnorm+residual"):
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
