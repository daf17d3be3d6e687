"""The three sections of the prepared GPU check (benchmarks/engine/gpu_check.py): the fused LM-head
kernel's correctness, its bandwidth against the device's copy bandwidth, and the step time of a
Dream-7B-shaped model."""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable
from typing import Any

from benchmarks.engine.gpu_check_support import Plan, Timer, compare, compare_tokens


# ---------------------------------------------------------------------------- section 1
def check_correctness(torch, k, device, plan: Plan, log) -> list[dict[str, Any]]:
    from mercury_engine.kernels.confidence import resolve_backend
    from mercury_engine.kernels.lm_head_confidence import lm_head_confidence_reference

    cases: list[dict[str, Any]] = []
    gen = torch.Generator(device=device).manual_seed(0)
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16}
    lm_tol = {"prob": (1e-4, 1e-3), "entropy": (1e-3, 1e-3), "margin": (1e-4, 1e-3)}

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
        for n, v, d in plan.lm_shapes:
            def lm_case(n=n, v=v, d=d, dt=dt):
                h = torch.randn(n, d, generator=gen, device=device).to(dt)
                w = (torch.randn(v, d, generator=gen, device=device) * (2.0 / d**0.5)).to(dt)
                out = k.fused_lm_head_confidence(h, w, with_entropy=True, with_margin=True, backend="triton")
                ref = lm_head_confidence_reference(h, w, with_entropy=True, with_margin=True, fp32_logits=True)
                return conf_checks(out, ref, h.float() @ w.float().T, lm_tol, 1e-3)
            run_case(f"lm_head_confidence {dname} N={n} V={v} D={d}", lm_case)

    return cases


# ---------------------------------------------------------------------------- section 2
def check_bandwidth(torch, k, device, plan: Plan, timer: Timer, log) -> dict[str, Any]:
    from mercury_engine.decode import predict

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
    d = plan.bw_lm_dim
    w = (torch.randn(v, d, device=device) * d**-0.5).to(bf16)
    for n in plan.bw_lm_rows:
        h = torch.randn(n, d, device=device).to(bf16)
        record("lm_head_confidence", f"N={n} V={v} D={d} bf16", w.numel() * 2 + h.numel() * 2 + n * 12,
               lambda h=h, w=w: k.fused_lm_head_confidence(h, w, backend="triton"),
               lambda h=h, w=w: predict(h @ w.T, 0.0, "max_prob", None), flops=2.0 * n * v * d)
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
    from mercury_engine.config import ModelConfig
    from mercury_engine.decode import predict
    from mercury_engine.model import Transformer

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
