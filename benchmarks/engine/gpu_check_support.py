"""Shapes, timing and comparison helpers of the prepared GPU check (benchmarks/engine/gpu_check.py)."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from typing import Any

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
            self.lm_shapes = [(n, v, d) for n in (1, 7) for v, d in ((1003, 64), (2053, 72))]
            self.bw_vocab = 2053
            self.bw_lm_rows, self.bw_lm_dim = (4, 16), 64
            self.copy_bytes = 8 << 20
            self.model = TINY
            self.batches, self.canvases, self.prefix = (1, 2), (8, 16), 32
            self.reps, self.warmup, self.model_reps = 2, 1, 1
        else:
            self.lm_shapes = [(n, v, d) for n in (1, 7, 33) for v in (50257, 151936) for d in (64, 72)]
            self.lm_shapes += [(n, 152064, 3584) for n in (1, 33)]
            self.bw_vocab = 152064
            self.bw_lm_rows, self.bw_lm_dim = (32, 256, 1024, 8192), 3584
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
