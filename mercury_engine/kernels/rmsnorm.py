"""Fused RMSNorm with optional residual add.

    s = x + residual                      (rounded to x.dtype, only when residual is given)
    y = rmsnorm(s) * weight               (rmsnorm in fp32, rounded to x.dtype, then * weight)

returns ``(y, s)``: the normalized output and the new residual stream, in one read of ``x``
and ``residual`` and one write of each output, instead of the four kernels of
``x = x + a; norm(x)`` (add, square-mean, scale, weight). The rounding steps copy the unfused
code of ``mercury_engine.model`` exactly, so the op is a drop-in replacement:

* the residual sum is rounded to ``x.dtype`` before it is normalized (``x = x + a`` in bf16);
* ``RMSNorm.forward``: ``x32 * rsqrt(mean(x32 ** 2) + eps)`` in fp32, cast to ``x.dtype``,
  then multiplied by ``weight`` (the product is computed in fp32 and rounded to ``x.dtype``,
  which is what torch does for bf16*bf16 and for a promoted fp32 product cast back).

Special values follow IEEE arithmetic, identically in the kernel and ``rmsnorm_reference``;
nothing is masked: a NaN in a row (of ``x + residual``) makes that row's ``y`` all NaN; a
``+-inf`` makes ``mean(x^2)`` infinite, so the row's finite entries become 0 and its infinite
entries NaN. Squares that overflow fp32 (|x| > ~1.8e19) behave like inf. ``residual_out``
holds the plain sum (NaN/inf included).

Inputs: ``x`` [..., D] and optional ``residual`` of the same shape and dtype (float32,
bfloat16 or float16), ``weight`` [D] (any of those dtypes), all on one device, last dimension
contiguous, non-empty, D <= 65536 (one row is one tile). Outputs: ``y`` and ``residual_out``
shaped like ``x``, in ``x.dtype``.
"""

from __future__ import annotations

import contextlib
import math
from typing import NamedTuple

import torch
from torch import Tensor

from mercury_engine.kernels.confidence import (
    HAS_TRITON,
    check_float_tensor,
    require_triton,
    resolve_backend,
    tl,
    triton,
)

__all__ = ["HAS_TRITON", "RMSNormOutput", "fused_rmsnorm", "rmsnorm_reference", "rmsnorm_triton"]

MAX_HIDDEN = 65536


class RMSNormOutput(NamedTuple):
    y: Tensor  # like x: rmsnorm(x + residual) * weight
    residual: Tensor | None  # like x: x + residual; None when no residual was given


def _check_tensor(name: str, t: object) -> None:
    check_float_tensor(name, t, ndim=None)


def _check_inputs(x: Tensor, weight: Tensor, residual: Tensor | None, eps: float) -> None:
    _check_tensor("x", x)
    _check_tensor("weight", weight)
    d = x.shape[-1]
    if weight.dim() != 1 or weight.shape[0] != d:
        raise ValueError(f"weight must be 1-D with x's hidden size {d}, got shape {tuple(weight.shape)}")
    if d > MAX_HIDDEN:
        raise ValueError(f"x hidden size {d} exceeds {MAX_HIDDEN} (one row must fit one tile)")
    if weight.device != x.device:
        raise ValueError(f"weight must be on x's device {x.device}, got {weight.device}")
    if residual is not None:
        _check_tensor("residual", residual)
        if residual.shape != x.shape:
            raise ValueError(f"residual must have x's shape {tuple(x.shape)}, got {tuple(residual.shape)}")
        if residual.dtype != x.dtype:
            raise TypeError(f"residual must have x's dtype {x.dtype}, got {residual.dtype}")
        if residual.device != x.device:
            raise ValueError(f"residual must be on x's device {x.device}, got {residual.device}")
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")


# ============================================================================ Triton kernel
@triton.jit
def _round_bf16(x):
    """fp32 -> the nearest bfloat16 value (ties to even), still held in fp32.

    Written out with integer ops because the CPU interpreter truncates fp32 -> bf16 casts
    (and its explicit round-to-nearest mode drops the carry into the exponent); on the GPU this
    is exactly what ``cvt.rn.bf16.f32`` does, so both run the same, tested code.
    """
    bits = x.to(tl.uint32, bitcast=True)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return tl.where(x != x, x, bits.to(tl.float32, bitcast=True))  # keep NaN NaN


@triton.jit
def _round_to(x, OUT_BF16: tl.constexpr, out_ptr):
    """fp32 ``x`` rounded to the element type of ``out_ptr`` (nearest even), as fp32."""
    if OUT_BF16:
        return _round_bf16(x)
    else:
        return x.to(out_ptr.dtype.element_ty).to(tl.float32)


@triton.jit
def _rmsnorm_kernel(
    x_ptr, stride_x,  # x [M, D]
    r_ptr, stride_r,  # residual [M, D] (when HAS_RESIDUAL)
    w_ptr,  # weight [D]
    y_ptr, stride_y,  # y [M, D]
    s_ptr, stride_s,  # residual_out [M, D] (when HAS_RESIDUAL)
    D, eps,
    BLOCK_D: tl.constexpr, HAS_RESIDUAL: tl.constexpr, OUT_BF16: tl.constexpr,
):
    # grid: (M,); one row per program, the whole row as one [BLOCK_D] tile.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_D)
    ok = cols < D
    x = tl.load(x_ptr + row * stride_x + cols, mask=ok, other=0.0).to(tl.float32)  # [BLOCK_D]
    if HAS_RESIDUAL:
        r = tl.load(r_ptr + row * stride_r + cols, mask=ok, other=0.0).to(tl.float32)
        x = _round_to(x + r, OUT_BF16, y_ptr)  # rounded like torch's x + residual
        tl.store(s_ptr + row * stride_s + cols, x.to(s_ptr.dtype.element_ty), mask=ok)  # exact
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / D + eps)
    normed = _round_to(x * rstd, OUT_BF16, y_ptr)  # RMSNorm casts to x.dtype before * weight
    w = tl.load(w_ptr + cols, mask=ok, other=0.0).to(tl.float32)
    y = _round_to(normed * w, OUT_BF16, y_ptr)
    tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=ok)  # exact


# ============================================================================ launcher
def rmsnorm_triton(x: Tensor, weight: Tensor, residual: Tensor | None = None, *,
                   eps: float = 1e-6) -> RMSNormOutput:
    """Launch the fused RMSNorm kernel over the rows of ``x`` [..., D]."""
    _check_inputs(x, weight, residual, eps)
    require_triton(_rmsnorm_kernel, x.device)
    d = x.shape[-1]
    x2 = x.reshape(-1, d)  # [M, D]
    r2 = residual.reshape(-1, d) if residual is not None else x2  # [M, D]
    y = torch.empty_like(x2)
    s = torch.empty_like(x2) if residual is not None else y  # placeholder when unused
    block_d = triton.next_power_of_2(d)
    with torch.cuda.device(x.device) if x.is_cuda else contextlib.nullcontext():
        _rmsnorm_kernel[(x2.shape[0],)](
            x2, x2.stride(0), r2, r2.stride(0), weight, y, y.stride(0), s, s.stride(0), d, float(eps),
            BLOCK_D=block_d, HAS_RESIDUAL=residual is not None, OUT_BF16=x.dtype == torch.bfloat16,
            num_warps=min(16, max(1, block_d // 512)))
    return RMSNormOutput(y.view(x.shape), s.view(x.shape) if residual is not None else None)


# ============================================================================ torch reference
@torch.no_grad()
def rmsnorm_reference(x: Tensor, weight: Tensor, residual: Tensor | None = None, *,
                      eps: float = 1e-6) -> RMSNormOutput:
    """``mercury_engine.model.RMSNorm`` (after ``x = x + residual``), output in ``x.dtype``."""
    s = x + residual if residual is not None else x  # x.dtype
    s32 = s.float()
    normed = (s32 * torch.rsqrt(s32.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)
    y = (weight * normed).to(x.dtype)
    return RMSNormOutput(y, s if residual is not None else None)


# ============================================================================ dispatch
def fused_rmsnorm(x: Tensor, weight: Tensor, residual: Tensor | None = None, *, eps: float = 1e-6,
                  backend: str = "auto") -> RMSNormOutput:
    """``RMSNormOutput(y=rmsnorm(x + residual) * weight, residual=x + residual)``.

    ``backend``: ``"triton"`` (the fused kernel), ``"torch"`` (``rmsnorm_reference``) or
    ``"auto"`` (``MERCURY_KERNELS`` if set, else Triton for CUDA tensors when installed).
    See the module docstring for rounding and NaN/inf behaviour.
    """
    _check_inputs(x, weight, residual, eps)
    if resolve_backend(backend, x.device) == "triton":
        return rmsnorm_triton(x, weight, residual, eps=eps)
    return rmsnorm_reference(x, weight, residual, eps=eps)
