"""The fused RMSNorm (+ residual) kernel (mercury_engine/kernels/rmsnorm.py) against its torch
reference, run on the CPU through the Triton interpreter (TRITON_INTERPRET=1)."""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from mercury_engine.kernels import rmsnorm as rms_mod  # noqa: E402
from mercury_engine.kernels.rmsnorm import (  # noqa: E402
    HAS_TRITON,
    fused_rmsnorm,
    rmsnorm_reference,
    rmsnorm_triton,
)
from mercury_engine.model import RMSNorm  # noqa: E402
from tests.support.kernel_asserts import assert_close, interpreter_only  # noqa: E402

NAN, INF = float("nan"), float("inf")
# y: the kernel and torch differ only in the order of the sum of squares and in rsqrt's last
# bit; after rounding to a 16-bit dtype that is at most one unit in the last place of the
# normalized value and one more after the weight product (bf16: 2**-8 relative, fp16: 2**-11).
TOL = {torch.float32: (1e-5, 1e-5), torch.bfloat16: (1e-2, 1.6e-2), torch.float16: (2e-3, 2e-3)}

needs_interpreter = interpreter_only(rms_mod._rmsnorm_kernel)


# ---------------------------------------------------------------------------- helpers
def make_inputs(shape: tuple[int, ...], dtype: torch.dtype, seed: int = 0, w_dtype: torch.dtype | None = None):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(*shape, generator=g) * 2).to(dtype)
    residual = (torch.randn(*shape, generator=g) * 3).to(dtype)
    weight = (1 + 0.5 * torch.randn(shape[-1], generator=g)).to(w_dtype or dtype)
    return x, weight, residual


def check_against_reference(x, weight, residual, eps: float = 1e-6) -> None:
    out = rmsnorm_triton(x, weight, residual, eps=eps)
    ref = rmsnorm_reference(x, weight, residual, eps=eps)
    assert out.y.dtype == x.dtype and out.y.shape == x.shape
    atol, rtol = TOL[x.dtype]
    assert_close("y", out.y, ref.y, atol=atol, rtol=rtol)
    if residual is None:
        assert out.residual is None and ref.residual is None
    else:
        assert out.residual.dtype == x.dtype
        assert_close("residual", out.residual, ref.residual, atol=0, rtol=0)  # one rounding: exact


# ---------------------------------------------------------------------------- kernel vs reference
@needs_interpreter
@pytest.mark.parametrize("with_residual", [False, True], ids=["plain", "residual"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=["fp32", "bf16", "fp16"])
@pytest.mark.parametrize("d", [70, 200, 896])
@pytest.mark.parametrize("rows", [1, 7, 33])
def test_matches_reference(rows: int, d: int, dtype: torch.dtype, with_residual: bool) -> None:
    x, weight, residual = make_inputs((rows, d), dtype, seed=rows * d)
    check_against_reference(x, weight, residual if with_residual else None)


@needs_interpreter
@pytest.mark.parametrize("d", [3584, pytest.param(8191, marks=pytest.mark.slow)])
def test_model_sized_rows(d: int) -> None:
    x, weight, residual = make_inputs((2, 5, d), torch.bfloat16, seed=d)
    check_against_reference(x, weight, residual, eps=1e-5)


@needs_interpreter
def test_leading_dims_strides_and_mixed_weight_dtype() -> None:
    x, _, residual = make_inputs((3, 4, 200), torch.bfloat16, seed=2)
    weight32 = 1 + torch.rand(200)  # fp32 weight on bf16 activations: output stays bf16
    check_against_reference(x, weight32, residual)
    wide = torch.randn(6, 300).to(torch.bfloat16)
    xs = wide[:, 50:250]  # rows strided by 300
    check_against_reference(xs, weight32.bfloat16(), residual.reshape(-1, 200)[:6])
    check_against_reference(x[:, ::2], weight32, None)  # non-viewable leading dims


@needs_interpreter
def test_bf16_rounding_is_nearest_even() -> None:
    """The residual sum is rounded like torch: ties to even, carrying into the exponent."""
    x = torch.tensor([[1.9921875, 1.0, 1.0, -3.0, 1.0078125, 256.0, 3.0e38]], dtype=torch.bfloat16)
    r = torch.tensor([[2**-8, 2**-8, 3 * 2**-9, -2**-7, 2**-8, 1.0, 3.0e38]], dtype=torch.bfloat16)
    with np.errstate(all="ignore"):  # the last column overflows on purpose
        out = rmsnorm_triton(x, torch.ones(7, dtype=torch.bfloat16), r)
    # 1.99609375 -> 2.0 (carry), 1.00390625 -> 1.0 (tie to even), 1.005859375 -> 1.0078125,
    # -3.0078125 -> -3.0 (tie to even), 1.01171875 -> 1.015625 (tie to even, up), 257 -> 256, overflow -> inf
    assert out.residual.float().tolist() == (x + r).float().tolist()
    assert (x + r).float().tolist()[0][:3] == [2.0, 1.0, 1.0078125]


# ---------------------------------------------------------------------------- exactness vs the model
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_reference_is_the_model_rmsnorm(dtype: torch.dtype) -> None:
    norm = RMSNorm(200, eps=1e-6).to(dtype)
    with torch.no_grad():
        norm.weight.copy_(1 + 0.3 * torch.randn(200))
    x, _, a = make_inputs((2, 7, 200), dtype, seed=5)
    out = fused_rmsnorm(x, norm.weight, a, eps=norm.eps, backend="torch")
    with torch.no_grad():
        s = x + a  # the unfused Block: x = x + a; norm(x)
        assert torch.equal(out.residual, s)
        assert torch.equal(out.y, norm(s))
        assert torch.equal(fused_rmsnorm(x, norm.weight, eps=norm.eps, backend="torch").y, norm(x))


@needs_interpreter
def test_kernel_close_to_the_model_rmsnorm() -> None:
    norm = RMSNorm(896, eps=1e-6).to(torch.bfloat16)
    x, _, a = make_inputs((33, 896), torch.bfloat16, seed=6)
    with torch.no_grad():
        expected = norm(x + a)
    out = fused_rmsnorm(x, norm.weight, a, eps=norm.eps, backend="triton")
    assert_close("y vs RMSNorm", out.y, expected, atol=1e-2, rtol=1.6e-2)


# ---------------------------------------------------------------------------- special values
@needs_interpreter
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_nan_and_inf(dtype: torch.dtype) -> None:
    x, weight, residual = make_inputs((5, 70), dtype, seed=7)
    x[1, 3] = NAN  # whole row 1 NaN
    x[2, 10] = INF  # row 2: 0 except NaN at 10
    residual[3, 69] = -INF  # row 3 (through the residual): 0 except NaN at 69
    x[4] = 0.0  # zero row: 0 (eps keeps rsqrt finite)
    residual[4] = 0.0
    with np.errstate(all="ignore"):
        for res in (residual, None):
            check_against_reference(x, weight, res)
        out = rmsnorm_triton(x, weight, residual)
    assert out.y[1].isnan().all()
    assert out.y[2, 10].isnan() and (out.y[2, torch.arange(70) != 10] == 0).all()
    assert out.y[3, 69].isnan() and (out.y[3, :69] == 0).all()
    assert (out.y[4] == 0).all()
    assert torch.isfinite(out.y[0]).all()
    assert out.residual[2, 10].item() == INF and out.residual[3, 69].item() == -INF


@needs_interpreter
def test_eps_is_used() -> None:
    x = torch.full((2, 70), 1e-3)
    w = torch.ones(70)
    for eps in (0.0, 1e-6, 1e-2):
        check_against_reference(x, w, None, eps=eps)
    big = rmsnorm_triton(x, w, eps=1e-2).y[0, 0].item()
    assert abs(big - 1e-3 / (1e-6 + 1e-2) ** 0.5) < 1e-6


# ---------------------------------------------------------------------------- bad inputs
X, WT = torch.zeros(3, 8), torch.ones(8)


@pytest.mark.parametrize(("x", "weight", "residual", "eps", "exc", "words"), [
    (X.int(), WT, None, 1e-6, TypeError, "x must be float32, bfloat16 or float16"),
    (X, WT.double(), None, 1e-6, TypeError, "weight must be float32, bfloat16 or float16"),
    (X, WT, X.bfloat16(), 1e-6, TypeError, "residual must have x's dtype"),
    (torch.tensor(1.0), WT, None, 1e-6, ValueError, "x must have at least one dimension"),
    (X, torch.ones(9), None, 1e-6, ValueError, "weight must be 1-D with x's hidden size 8"),
    (X, torch.ones(1, 8), None, 1e-6, ValueError, "weight must be 1-D"),
    (X, WT, torch.zeros(4, 8), 1e-6, ValueError, "residual must have x's shape"),
    (torch.zeros(0, 8), WT, None, 1e-6, ValueError, "x must be non-empty"),
    (torch.zeros(8, 3).T, WT, None, 1e-6, ValueError, "x must be contiguous in its last dimension"),
    (X, WT, torch.zeros(8, 3).T, 1e-6, ValueError, "residual must be contiguous in its last dimension"),
    (X, torch.ones(8, device="meta"), None, 1e-6, ValueError, "weight must be on x's device"),
    (X, WT, torch.zeros(3, 8, device="meta"), 1e-6, ValueError, "residual must be on x's device"),
    (X, WT, None, -1.0, ValueError, "eps must be a finite number >= 0"),
    (X, WT, None, float("nan"), ValueError, "eps must be a finite number >= 0"),
    (X.tolist(), WT, None, 1e-6, TypeError, "x must be a torch.Tensor"),
])
@pytest.mark.parametrize("backend", ["torch", "triton", "auto"])
def test_bad_inputs_raise_clear_errors(x, weight, residual, eps, exc, words: str, backend: str) -> None:
    with pytest.raises(exc, match=words):
        fused_rmsnorm(x, weight, residual, eps=eps, backend=backend)
    if HAS_TRITON:
        with pytest.raises(exc, match=words):
            rmsnorm_triton(x, weight, residual, eps=eps)


def test_dispatch(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(rms_mod, "rmsnorm_triton", lambda *a, **k: calls.append("triton"))
    monkeypatch.setattr(rms_mod, "rmsnorm_reference", lambda *a, **k: calls.append("torch"))
    monkeypatch.delenv("MERCURY_KERNELS", raising=False)
    rms_mod.fused_rmsnorm(X, WT)
    rms_mod.fused_rmsnorm(X, WT, backend="triton")
    monkeypatch.setenv("MERCURY_KERNELS", "triton")
    rms_mod.fused_rmsnorm(X, WT)
    rms_mod.fused_rmsnorm(X, WT, backend="torch")
    assert calls == ["torch", "triton", "triton", "torch"]
    with pytest.raises(ValueError, match="backend must be one of"):
        rms_mod.fused_rmsnorm(X, WT, backend="gpu")
