"""The fused LM-head + confidence kernel (mercury_engine/kernels/lm_head_confidence.py) against its
torch reference, run on the CPU through the Triton interpreter (TRITON_INTERPRET=1)."""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from mercury_engine.kernels import lm_head_confidence as lm_mod  # noqa: E402
from mercury_engine.kernels.confidence import confidence_reference  # noqa: E402
from mercury_engine.kernels.lm_head_confidence import (  # noqa: E402
    HAS_TRITON,
    fused_lm_head_confidence,
    lm_head_confidence_reference,
    lm_head_confidence_triton,
)
from tests.support.kernel_asserts import assert_close, interpreter_only  # noqa: E402

NAN = float("nan")
# Kernel vs the fp32-logit reference: the products of the inputs are exact in fp32 for every
# supported dtype, only the summation order differs (logit error ~1e-6 relative), so one set of
# tolerances serves fp32, bf16 and fp16.
TOL = {
    torch.float32: {"prob": (1e-5, 1e-4), "entropy": (1e-4, 1e-4), "margin": (1e-5, 1e-4)},
    torch.bfloat16: {"prob": (1e-5, 1e-4), "entropy": (1e-4, 1e-4), "margin": (1e-5, 1e-4)},
    torch.float16: {"prob": (1e-5, 1e-4), "entropy": (1e-4, 1e-4), "margin": (1e-5, 1e-4)},
}
# Two tokens whose fp32 logits are this close may swap under a different summation order.
TIE_LOGIT_TOL = 1e-4

needs_interpreter = interpreter_only(lm_mod._lm_head_confidence_kernel)


# ---------------------------------------------------------------------------- helpers
def assert_tokens(actual: torch.Tensor, expected: torch.Tensor, logits: torch.Tensor) -> None:
    """Equal tokens, except where the reference's logits of both tokens tie within rounding."""
    for r in (actual != expected).nonzero().flatten().tolist():
        a, e = int(actual[r]), int(expected[r])
        la, le = logits[r, a].item(), logits[r, e].item()
        if not abs(la - le) <= TIE_LOGIT_TOL:
            raise AssertionError(f"token: row {r}: kernel {a} (reference logit {la!r}) vs reference {e} "
                                 f"(logit {le!r}); {int((actual != expected).sum())} rows differ")


def check_against_reference(hidden: torch.Tensor, weight: torch.Tensor, **kw) -> None:
    out = lm_head_confidence_triton(hidden, weight, with_entropy=True, with_margin=True, **kw)
    ref = lm_head_confidence_reference(hidden, weight, with_entropy=True, with_margin=True, fp32_logits=True)
    logits = hidden.float() @ weight.float().T  # [N, V]
    assert out.token.dtype == torch.int64 and out.prob.dtype == torch.float32
    assert_tokens(out.token, ref.token, logits)
    same = out.token == ref.token  # near-tied rows that swapped have different (valid) stats
    tol = TOL[hidden.dtype]
    for field in ("prob", "entropy", "margin"):
        atol, rtol = tol[field]
        assert_close(field, getattr(out, field)[same], getattr(ref, field)[same], atol=atol, rtol=rtol)


def make_inputs(n: int, v: int, d: int, dtype: torch.dtype, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(n, d, generator=g)  # [N, D]
    weight = torch.randn(v, d, generator=g) * (2.0 / d**0.5)  # [V, D]: logits ~ N(0, 4)
    return hidden.to(dtype), weight.to(dtype)


# ---------------------------------------------------------------------------- kernel vs reference
FAST = [(1, 50257, 64, torch.float32), (7, 50257, 72, torch.bfloat16), (33, 50257, 72, torch.float32),
        (33, 50257, 64, torch.bfloat16), (7, 151936, 64, torch.float32)]
SLOW = [(n, v, d, dt) for n in (1, 7, 33) for v in (50257, 151936) for d in (64, 72)
        for dt in (torch.float32, torch.bfloat16) if (n, v, d, dt) not in FAST]


@needs_interpreter
@pytest.mark.parametrize(("n", "v", "d", "dtype"), FAST + [pytest.param(*c, marks=pytest.mark.slow) for c in SLOW],
                         ids=lambda x: str(x).replace("torch.", ""))
def test_matches_reference(n: int, v: int, d: int, dtype: torch.dtype) -> None:
    check_against_reference(*make_inputs(n, v, d, dtype, seed=n + v + d))


@needs_interpreter
@pytest.mark.parametrize(("n", "v", "d", "kw"), [
    (7, 5003, 72, {"num_splits": 4, "block_v": 256}),               # split vocabulary + merge
    (33, 1001, 40, {"block_n": 16, "block_v": 256, "block_d": 16}),  # 3 row tiles, 3 hidden steps
    (20, 999, 200, {"block_n": 16, "block_v": 128, "block_d": 64, "num_splits": 3}),
    (5, 16, 16, {}),                                                  # everything one tile
])
def test_tilings(n: int, v: int, d: int, kw: dict) -> None:
    for dtype in (torch.float32, torch.bfloat16):
        check_against_reference(*make_inputs(n, v, d, dtype, seed=v), **kw)


@needs_interpreter
def test_float16_and_strided_rows() -> None:
    hidden, weight = make_inputs(12, 2001, 48, torch.float16, seed=3)
    h_wide = torch.zeros(12, 80, dtype=torch.float16)
    h_wide[:, 5:53] = hidden
    w_wide = torch.zeros(2001, 64, dtype=torch.float16)
    w_wide[:, 3:51] = weight
    h, w = h_wide[:, 5:53], w_wide[:, 3:51]  # row strides 80 and 64, last dims contiguous
    assert not h.is_contiguous() and not w.is_contiguous()
    check_against_reference(h, w, block_v=512)


@needs_interpreter
@pytest.mark.parametrize(("with_entropy", "with_margin"), [(False, False), (True, False), (False, True)])
def test_optional_outputs(with_entropy: bool, with_margin: bool) -> None:
    hidden, weight = make_inputs(6, 1500, 32, torch.float32, seed=8)
    for kw in ({}, {"num_splits": 3, "block_v": 128}):
        out = lm_head_confidence_triton(hidden, weight, with_entropy=with_entropy, with_margin=with_margin, **kw)
        ref = lm_head_confidence_reference(hidden, weight, with_entropy=with_entropy, with_margin=with_margin,
                                           fp32_logits=True)
        assert (out.entropy is None) == (not with_entropy) and (out.margin is None) == (not with_margin)
        assert torch.equal(out.token, ref.token)
        assert_close("prob", out.prob, ref.prob, atol=1e-5, rtol=1e-4)


# ---------------------------------------------------------------------------- special values
@needs_interpreter
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_nan_in_hidden_or_weight(dtype: torch.dtype) -> None:
    hidden, weight = make_inputs(5, 1003, 40, dtype, seed=6)
    hidden[1, 7] = NAN  # row 1: every logit NaN -> token 0, NaN stats
    weight[777, 3] = NAN  # column 777 NaN in every row -> token 777 everywhere ...
    weight[901, 0] = NAN  # ... (its first NaN column), NaN stats
    for kw in ({}, {"block_v": 128, "num_splits": 4}):
        with np.errstate(all="ignore"):
            out = lm_head_confidence_triton(hidden, weight, with_entropy=True, with_margin=True, **kw)
        ref = lm_head_confidence_reference(hidden, weight, with_entropy=True, with_margin=True, fp32_logits=True)
        assert out.token.tolist() == ref.token.tolist() == [777, 0, 777, 777, 777]
        for a, e in zip(out[1:], ref[1:], strict=True):
            assert a.isnan().all() and e.isnan().all()


@needs_interpreter
def test_argmax_ties_pick_lowest_index() -> None:
    hidden = torch.ones(3, 16)
    weight = torch.randn(600, 16, generator=torch.Generator().manual_seed(2)) * 0.1
    weight[[13, 300, 599]] = 1.0  # three identical best rows
    hidden[2] = 0.0  # all logits 0: uniform, token 0
    for kw in ({}, {"block_v": 64}, {"block_v": 64, "num_splits": 5}):
        out = lm_head_confidence_triton(hidden, weight, with_margin=True, **kw)
        assert out.token.tolist() == [13, 13, 0], kw
        assert out.margin.abs().max().item() == 0.0
        assert_close("uniform prob", out.prob[2:], torch.tensor([1 / 600]), atol=1e-9, rtol=1e-5)


# ---------------------------------------------------------------------------- torch path
def test_torch_path_is_lm_head_then_confidence() -> None:
    """backend='torch' rounds the logits like nn.Linear: identical to lm_head + reference."""
    for dtype in (torch.float32, torch.bfloat16):
        hidden, weight = make_inputs(9, 801, 24, dtype, seed=4)
        out = fused_lm_head_confidence(hidden, weight, with_entropy=True, with_margin=True, backend="torch")
        logits = torch.nn.functional.linear(hidden, weight)  # what Transformer.lm_head computes
        ref = confidence_reference(logits, with_entropy=True, with_margin=True)
        for a, e in zip(out, ref, strict=True):
            assert torch.equal(a, e)


@needs_interpreter
def test_triton_backend_through_public_op(monkeypatch: pytest.MonkeyPatch) -> None:
    hidden, weight = make_inputs(4, 700, 32, torch.float32, seed=1)
    ref = fused_lm_head_confidence(hidden, weight, backend="torch")
    monkeypatch.setenv("MERCURY_KERNELS", "triton")
    calls = []
    real = lm_mod.lm_head_confidence_triton
    monkeypatch.setattr(lm_mod, "lm_head_confidence_triton", lambda *a, **k: calls.append(1) or real(*a, **k))
    out = lm_mod.fused_lm_head_confidence(hidden, weight)  # auto + MERCURY_KERNELS=triton
    assert calls == [1]
    assert torch.equal(out.token, ref.token)
    assert_close("prob", out.prob, ref.prob, atol=1e-5, rtol=1e-4)


# ---------------------------------------------------------------------------- bad inputs
H, W = torch.zeros(3, 8), torch.zeros(50, 8)


@pytest.mark.parametrize(("hidden", "weight", "exc", "words"), [
    (H.int(), W, TypeError, "hidden must be float32, bfloat16 or float16"),
    (H, W.double(), TypeError, "weight must be float32, bfloat16 or float16"),
    (H[0], W, ValueError, "hidden must be 2-D"),
    (H[None], W, ValueError, "hidden must be 2-D"),
    (H, W[None], ValueError, "weight must be 2-D"),
    (H, torch.zeros(50, 9), ValueError, "must share D: hidden has D=8, weight has D=9"),
    (H, torch.zeros(8, 50), ValueError, "must share D"),
    (H, W.bfloat16(), TypeError, "hidden and weight must have the same dtype"),
    (H, torch.zeros(50, 8, device="meta"), ValueError, "hidden and weight must be on the same device"),
    (torch.zeros(0, 8), W, ValueError, "hidden must be non-empty"),
    (H, torch.zeros(8, 50).T, ValueError, "weight must be contiguous in its last dimension"),
    (torch.zeros(8, 3).T, W, ValueError, "hidden must be contiguous in its last dimension"),
    (H, "weight", TypeError, "weight must be a torch.Tensor"),
])
@pytest.mark.parametrize("backend", ["torch", "triton", "auto"])
def test_bad_inputs_raise_clear_errors(hidden, weight, exc, words: str, backend: str) -> None:
    with pytest.raises(exc, match=words):
        fused_lm_head_confidence(hidden, weight, backend=backend)
    if HAS_TRITON:
        with pytest.raises(exc, match=words):
            lm_head_confidence_triton(hidden, weight)


def test_bad_tiling() -> None:
    if not HAS_TRITON:
        pytest.skip("triton not installed")
    with pytest.raises(ValueError, match="block_d must be a power of two >= 16"):
        lm_head_confidence_triton(H, W, block_d=8)
    with pytest.raises(ValueError, match="block_n must be a power of two"):
        lm_head_confidence_triton(H, W, block_n=48)
