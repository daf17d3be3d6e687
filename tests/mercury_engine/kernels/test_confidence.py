"""The fused confidence kernel (mercury_engine/kernels/confidence.py) against its torch reference.

The Triton code runs on the CPU through the Triton interpreter (TRITON_INTERPRET=1, set here
before triton is imported; ``./dev test`` exports it too).
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import math  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from mercury_engine.decode import predict  # noqa: E402
from mercury_engine.kernels import confidence as conf_mod  # noqa: E402
from mercury_engine.kernels.confidence import (  # noqa: E402
    HAS_TRITON,
    confidence_reference,
    confidence_triton,
    fused_confidence,
    resolve_backend,
)
from tests.support.kernel_asserts import assert_close, interpreter_only  # noqa: E402

NAN, INF = float("nan"), float("inf")
# Both dtypes are upcast to the same fp32 values before any arithmetic, so the statistics
# only differ by summation order / exp rounding: the tolerances are the same for fp32 and bf16.
TOL = {
    torch.float32: {"prob": (1e-6, 1e-5), "entropy": (2e-5, 1e-5), "margin": (1e-6, 1e-5)},
    torch.bfloat16: {"prob": (1e-6, 1e-5), "entropy": (2e-5, 1e-5), "margin": (1e-6, 1e-5)},
    torch.float16: {"prob": (1e-6, 1e-5), "entropy": (2e-5, 1e-5), "margin": (1e-6, 1e-5)},
}

needs_interpreter = interpreter_only(conf_mod._confidence_kernel)


# ---------------------------------------------------------------------------- helpers
def assert_tokens(actual: torch.Tensor, expected: torch.Tensor, logits: torch.Tensor | None = None) -> None:
    if not torch.equal(actual.cpu(), expected.cpu()):
        rows = (actual.cpu() != expected.cpu()).nonzero().flatten()
        r = int(rows[0])
        extra = ""
        if logits is not None:
            lr = logits[r].float()
            extra = (f"; logits there: kernel's {lr[int(actual[r])].item()!r}, "
                     f"reference's {lr[int(expected[r])].item()!r}")
        raise AssertionError(f"token: {rows.numel()} of {actual.numel()} rows differ; first row {r}: "
                             f"kernel {int(actual[r])} vs reference {int(expected[r])}{extra}")


def check_against_reference(logits: torch.Tensor, **kw) -> None:
    """Kernel (backend='triton') vs reference, entropy and margin included."""
    out = confidence_triton(logits, with_entropy=True, with_margin=True, **kw)
    ref = confidence_reference(logits, with_entropy=True, with_margin=True)
    assert out.token.dtype == torch.int64 and out.prob.dtype == torch.float32
    assert_tokens(out.token, ref.token, logits)
    tol = TOL[logits.dtype]
    for field in ("prob", "entropy", "margin"):
        atol, rtol = tol[field]
        assert_close(field, getattr(out, field), getattr(ref, field), atol=atol, rtol=rtol)


def random_logits(n: int, v: int, dtype: torch.dtype, seed: int = 0, scale: float = 3.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, v, generator=g) * scale  # [N, V]
    # a few confident rows: one token far ahead
    x[::3, (torch.arange(0, n, 3) * 7919) % v] += 4 * scale
    return x.to(dtype)


# ---------------------------------------------------------------------------- kernel vs reference
@needs_interpreter
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("v", [50257, 151936])
@pytest.mark.parametrize("n", [1, 7, 33])
def test_matches_reference(n: int, v: int, dtype: torch.dtype) -> None:
    check_against_reference(random_logits(n, v, dtype, seed=n * 31 + v))


@needs_interpreter
@pytest.mark.parametrize(("n", "v", "splits", "block_r", "block_v"), [
    (7, 50257, 3, 2, 4096),   # 13 chunks -> splits of 5, 5, 3; odd rows per program
    (5, 1000, 7, 1, 128),     # 8 chunks -> 4 splits of 2
    (3, 4097, 64, 4, 16),     # more requested splits than chunks of the last one
])
def test_split_vocabulary_merge(n: int, v: int, splits: int, block_r: int, block_v: int) -> None:
    check_against_reference(random_logits(n, v, torch.float32, seed=v), num_splits=splits,
                            block_r=block_r, block_v=block_v)


@needs_interpreter
@pytest.mark.parametrize(("with_entropy", "with_margin"), [(False, False), (True, False), (False, True)])
def test_optional_outputs(with_entropy: bool, with_margin: bool) -> None:
    x = random_logits(9, 3001, torch.float32, seed=5)
    for kw in ({}, {"num_splits": 3, "block_v": 256}):
        out = confidence_triton(x, with_entropy=with_entropy, with_margin=with_margin, **kw)
        ref = confidence_reference(x, with_entropy=with_entropy, with_margin=with_margin)
        assert (out.entropy is None) == (not with_entropy) and (out.margin is None) == (not with_margin)
        assert_tokens(out.token, ref.token, x)
        assert_close("prob", out.prob, ref.prob, atol=1e-6, rtol=1e-5)
        if with_entropy:
            assert_close("entropy", out.entropy, ref.entropy, atol=2e-5, rtol=1e-5)
        if with_margin:
            assert_close("margin", out.margin, ref.margin, atol=1e-6, rtol=1e-5)


@needs_interpreter
def test_float16_and_strided_rows() -> None:
    wide = random_logits(6, 3000, torch.float16, seed=9)
    x = wide[:, 17:2917]  # rows strided by 3000, last dim contiguous
    assert not x.is_contiguous() and x.stride(-1) == 1
    check_against_reference(x, block_v=512)
    check_against_reference(x[::2], block_v=512)  # every other row


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


@needs_interpreter
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("kw", [{}, {"block_v": 128}, {"block_v": 128, "num_splits": 5}, {"block_r": 8}],
                         ids=["one-chunk", "chunks", "splits", "rows"])
def test_nan_and_inf_rows(dtype: torch.dtype, kw: dict) -> None:
    x, tokens = special_rows(1001)
    x = x.to(dtype)
    with np.errstate(all="ignore"):  # the interpreter computes NaN/inf intermediates in numpy
        check_against_reference(x, **kw)
        out = confidence_triton(x, with_entropy=True, with_margin=True, **kw)
    assert out.token.tolist() == tokens
    assert out.token.tolist() == torch.argmax(x.float(), dim=-1).tolist()  # documented equivalence
    invalid = [1, 2, 3, 4, 6]
    for field in (out.prob, out.entropy, out.margin):
        assert field[invalid].isnan().all()
        assert torch.isfinite(field[[0, 5, 7]]).all()
    assert out.prob[5].item() == 1.0 and out.entropy[5].item() == 0.0 and out.margin[5].item() == 1.0


@needs_interpreter
def test_argmax_ties_pick_lowest_index() -> None:
    v = 1000
    x = torch.randn(4, v, generator=torch.Generator().manual_seed(3))
    x[0, [5, 200, 999]] = 10.0  # across chunks (block_v=128) and splits
    x[1, [999, 640]] = 10.0
    x[2] = 1.5  # all equal: token 0, uniform
    x[3, [130, 131]] = 10.0  # neighbours in one chunk
    for kw in ({}, {"block_v": 128}, {"block_v": 128, "num_splits": 8}, {"block_v": 16, "num_splits": 3}):
        out = confidence_triton(x, with_entropy=True, with_margin=True, **kw)
        ref = confidence_reference(x, with_entropy=True, with_margin=True)
        assert out.token.tolist() == [5, 640, 0, 130] == ref.token.tolist(), kw
        assert out.margin[[0, 1, 3]].abs().max().item() < 1e-7, kw  # two equal maxima: margin 0
        assert_close("uniform prob", out.prob[2:3], torch.tensor([1 / v]), atol=1e-9, rtol=1e-5)
        assert_close("uniform entropy", out.entropy[2:3], torch.tensor([math.log(v)]), atol=1e-5, rtol=1e-5)


@needs_interpreter
def test_bf16_ties_everywhere() -> None:
    # coarse bf16 logits: many exact duplicates of the maximum
    x = (torch.randint(-8, 3, (9, 5003), generator=torch.Generator().manual_seed(4)) / 2).to(torch.bfloat16)
    check_against_reference(x, block_v=256, num_splits=4)
    check_against_reference(x)


@needs_interpreter
def test_single_token_vocabulary() -> None:
    x = torch.tensor([[0.3], [-INF], [NAN]])
    with np.errstate(all="ignore"):
        out = confidence_triton(x, with_entropy=True, with_margin=True)
    ref = confidence_reference(x, with_entropy=True, with_margin=True)
    assert out.token.tolist() == ref.token.tolist() == [0, 0, 0]
    for a, e in zip(out[1:], ref[1:], strict=True):
        assert_close("v=1", a, e, atol=0, rtol=0)
    assert out.prob[0].item() == 1.0 and out.entropy[0].item() == 0.0 and out.margin[0].item() == 1.0


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


# ---------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize(("bad", "exc", "words"), [
    (torch.zeros(3, 5, dtype=torch.int32), TypeError, "logits must be float32, bfloat16 or float16"),
    (torch.zeros(3, 5, dtype=torch.float64), TypeError, "logits must be float32"),
    (torch.zeros(5), ValueError, "logits must be 2-D"),
    (torch.zeros(2, 3, 5), ValueError, "logits must be 2-D"),
    (torch.zeros(0, 5), ValueError, "logits must be non-empty"),
    (torch.zeros(3, 0), ValueError, "logits must be non-empty"),
    (torch.zeros(5, 3).T, ValueError, "logits must be contiguous in its last dimension"),
    ([[1.0, 2.0]], TypeError, "logits must be a torch.Tensor"),
])
@pytest.mark.parametrize("backend", ["torch", "triton", "auto"])
def test_bad_inputs_raise_clear_errors(bad, exc, words: str, backend: str) -> None:
    with pytest.raises(exc, match=words):
        fused_confidence(bad, backend=backend)
    if HAS_TRITON:
        with pytest.raises(exc, match=words):
            confidence_triton(bad)


def test_bad_backend_and_tiling() -> None:
    x = torch.zeros(2, 8)
    with pytest.raises(ValueError, match="backend must be one of"):
        fused_confidence(x, backend="cuda")
    if HAS_TRITON:
        with pytest.raises(ValueError, match="block_v must be a power of two"):
            confidence_triton(x, block_v=100)
        with pytest.raises(ValueError, match="num_splits must be a positive integer"):
            confidence_triton(x, num_splits=0)


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


def test_dispatch_calls_the_chosen_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(conf_mod, "confidence_triton", lambda *a, **k: calls.append("triton") or "T")
    monkeypatch.setattr(conf_mod, "confidence_reference", lambda *a, **k: calls.append("torch") or "R")
    x = torch.zeros(2, 8)
    monkeypatch.delenv("MERCURY_KERNELS", raising=False)
    assert conf_mod.fused_confidence(x) == "R"
    assert conf_mod.fused_confidence(x, backend="triton") == "T"
    monkeypatch.setenv("MERCURY_KERNELS", "triton")
    assert conf_mod.fused_confidence(x) == "T"
    assert calls == ["torch", "triton", "triton"]


@needs_interpreter
def test_triton_backend_through_public_op() -> None:
    x = random_logits(4, 777, torch.bfloat16, seed=2)
    out = fused_confidence(x, with_entropy=True, with_margin=True, backend="triton")
    ref = fused_confidence(x, with_entropy=True, with_margin=True, backend="torch")
    assert_tokens(out.token, ref.token, x)
    assert_close("prob", out.prob, ref.prob, atol=1e-6, rtol=1e-5)


def test_modules_import_and_run_without_triton() -> None:
    """With ``import triton`` failing, every op still imports, the torch path works and
    backend='triton' explains what is missing."""
    code = """
import sys
sys.modules["triton"] = None  # makes `import triton` raise ImportError
import torch
from mercury_engine.kernels import HAS_TRITON, fused_confidence, fused_lm_head_confidence, fused_rmsnorm
assert not HAS_TRITON
x = torch.randn(3, 11)
assert fused_confidence(x, with_margin=True).token.shape == (3,)
assert fused_lm_head_confidence(torch.randn(3, 4), torch.randn(11, 4)).prob.shape == (3,)
assert fused_rmsnorm(x, torch.ones(11), x).y.shape == (3, 11)
for call in (lambda: fused_confidence(x, backend="triton"),
             lambda: fused_lm_head_confidence(torch.randn(3, 4), torch.randn(11, 4), backend="triton"),
             lambda: fused_rmsnorm(x, torch.ones(11), backend="triton")):
    try:
        call()
    except RuntimeError as exc:
        assert "needs the 'triton' package" in str(exc), exc
    else:
        raise AssertionError("backend='triton' without triton did not raise")
print("ok")
"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    res = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-2000:]
