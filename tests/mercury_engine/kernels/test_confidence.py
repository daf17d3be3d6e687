"""The confidence statistics' semantics (``confidence_reference`` in mercury_engine/kernels/confidence.py:
the spec the fused LM-head kernel is tested against, tests/mercury_engine/kernels/test_lm_head_confidence.py)
and how the kernels' backend is chosen."""

import math
import os
import subprocess
import sys

import pytest
import torch

from mercury_engine.decode import predict
from mercury_engine.kernels.confidence import HAS_TRITON, confidence_reference, resolve_backend
from tests.support.kernel_asserts import assert_close

NAN, INF = float("nan"), float("inf")


def random_logits(n: int, v: int, dtype: torch.dtype, seed: int = 0, scale: float = 3.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, v, generator=g) * scale  # [N, V]
    x[::3, (torch.arange(0, n, 3) * 7919) % v] += 4 * scale  # a few confident rows: one token far ahead
    return x.to(dtype)


# ---------------------------------------------------------------------------- special values
def special_rows(v: int) -> tuple[torch.Tensor, list[int]]:
    """Rows with -inf, NaN and +inf; returns logits and the documented token of each row."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, v, generator=g) * 2  # [8, V]
    tokens = []
    x[0, ::2] = -INF  # half the vocabulary forbidden
    tokens.append(int(x[0].argmax()))
    x[1] = -INF  # all forbidden -> token 0, NaN stats
    tokens.append(0)
    x[2, [v // 2, v - 3]] = NAN  # NaN -> its first position
    tokens.append(v // 2)
    x[3, [v // 3, v - 1]] = INF  # +inf -> its first position, NaN stats
    tokens.append(v // 3)
    x[4, 10], x[4, v - 2] = INF, NAN  # NaN beats +inf
    tokens.append(v - 2)
    x[5] = -INF
    x[5, v - 1] = 0.0  # one allowed token, in the last (partial) chunk -> prob 1, entropy 0, margin 1
    tokens.append(v - 1)
    x[6] = NAN  # all NaN -> token 0
    tokens.append(0)
    x[7, : v // 2] = -INF  # an ordinary row after the invalid ones
    tokens.append(int(x[7].argmax()))
    return x, tokens



@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_nan_and_inf_rows(dtype: torch.dtype) -> None:
    x, tokens = special_rows(1001)
    out = confidence_reference(x.to(dtype), with_entropy=True, with_margin=True)
    assert out.token.tolist() == tokens == torch.argmax(x.to(dtype).float(), dim=-1).tolist()
    invalid = [1, 2, 3, 4, 6]
    for field in (out.prob, out.entropy, out.margin):
        assert field[invalid].isnan().all()
        assert torch.isfinite(field[[0, 5, 7]]).all()
    assert out.prob[5].item() == 1.0 and out.entropy[5].item() == 0.0 and out.margin[5].item() == 1.0


def test_argmax_ties_pick_lowest_index_and_a_uniform_row() -> None:
    v = 1000
    x = torch.randn(4, v, generator=torch.Generator().manual_seed(3))
    x[0, [5, 200, 999]] = 10.0
    x[1, [999, 640]] = 10.0
    x[2] = 1.5  # all equal: token 0, uniform
    x[3, [130, 131]] = 10.0
    out = confidence_reference(x, with_entropy=True, with_margin=True)
    assert out.token.tolist() == [5, 640, 0, 130]
    assert out.margin[[0, 1, 3]].abs().max().item() < 1e-7  # two equal maxima: margin 0
    assert_close("uniform prob", out.prob[2:3], torch.tensor([1 / v]), atol=1e-9, rtol=1e-5)
    assert_close("uniform entropy", out.entropy[2:3], torch.tensor([math.log(v)]), atol=1e-5, rtol=1e-5)


def test_single_token_vocabulary() -> None:
    out = confidence_reference(torch.tensor([[0.3], [-INF], [NAN]]), with_entropy=True, with_margin=True)
    assert out.token.tolist() == [0, 0, 0]
    assert out.prob[0].item() == 1.0 and out.entropy[0].item() == 0.0 and out.margin[0].item() == 1.0
    assert out.prob[1:].isnan().all()


# ---------------------------------------------------------------------------- reference semantics
def test_reference_agrees_with_sampler_predict() -> None:
    x = random_logits(12, 997, torch.float32, seed=11)
    x[3, ::3] = -INF
    ref = confidence_reference(x, with_entropy=True, with_margin=True)
    token, p = predict(x, 0.0, "max_prob", None)
    assert torch.equal(ref.token, token)
    assert_close("prob vs predict", ref.prob, p, atol=1e-6, rtol=1e-5)
    _, m = predict(x, 0.0, "margin", None)
    assert_close("margin vs predict", ref.margin, m, atol=1e-6, rtol=1e-5)
    _, ne = predict(x, 0.0, "neg_entropy", None)
    assert_close("entropy vs predict", ref.entropy, -ne, atol=1e-5, rtol=1e-5)


# ---------------------------------------------------------------------------- dispatch
def test_backend_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    monkeypatch.delenv("MERCURY_KERNELS", raising=False)
    assert resolve_backend("auto", cpu) == "torch"
    assert resolve_backend("auto", cuda) == ("triton" if HAS_TRITON else "torch")
    assert resolve_backend("triton", cpu) == "triton"
    assert resolve_backend("torch", cuda) == "torch"
    monkeypatch.setenv("MERCURY_KERNELS", "triton")
    assert resolve_backend("auto", cpu) == "triton"
    assert resolve_backend("torch", cpu) == "torch"  # an explicit argument wins
    monkeypatch.setenv("MERCURY_KERNELS", "torch")
    assert resolve_backend("auto", cuda) == "torch"
    monkeypatch.setenv("MERCURY_KERNELS", "gpu")
    with pytest.raises(ValueError, match="MERCURY_KERNELS must be one of"):
        resolve_backend("auto", cpu)


def test_modules_import_and_run_without_triton() -> None:
    """With ``import triton`` failing, every op still imports, the torch path works and
    backend='triton' explains what is missing."""
    code = """
import sys
sys.modules["triton"] = None  # makes `import triton` raise ImportError
import torch
from mercury_engine.kernels import HAS_TRITON, fused_lm_head_confidence
assert not HAS_TRITON
assert fused_lm_head_confidence(torch.randn(3, 4), torch.randn(11, 4)).prob.shape == (3,)
try:
    fused_lm_head_confidence(torch.randn(3, 4), torch.randn(11, 4), backend="triton")
except RuntimeError as exc:
    assert "needs the 'triton' package" in str(exc), exc
else:
    raise AssertionError("backend='triton' without triton did not raise")
print("ok")
"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    res = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-2000:]
