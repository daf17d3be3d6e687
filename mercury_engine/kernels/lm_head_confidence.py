"""Fused LM head + confidence: hidden states x output embedding -> token and confidences.

``logits = hidden @ weight.T`` is the largest tensor of a denoising step ([N, V] with V around
150k), and the samplers only need a few numbers per row from it: the greedy token, its
probability and optionally the entropy and the top-1/top-2 margin. This op computes them
without ever writing the logits: each program takes a tile of ``BLOCK_N`` rows, walks the
vocabulary in ``BLOCK_V`` chunks, computes each [BLOCK_N, BLOCK_V] chunk of logits with
``tl.dot`` over the hidden size in ``BLOCK_D`` steps (fp32 accumulation), and folds it into the
same online-softmax statistics as ``mercury_engine.kernels.confidence`` (running max, sum of exp,
argmax, entropy and second-largest terms). For few rows the vocabulary is also split across
programs and the per-split statistics merged by ``confidence.merge_splits_kernel``.

Precision. The kernel keeps the logits in fp32 (fp32 accumulation of the products of the
input values; fp32 inputs use IEEE fp32 dot products, never TF32). ``nn.Linear`` rounds its
output to the input dtype, so ``lm_head_confidence_reference`` offers both:

* ``fp32_logits=False`` (the dispatch's torch path): ``confidence_reference(hidden @ weight.T)``,
  exactly what ``Transformer.lm_head`` followed by ``mercury_engine.sampler.predict`` computes;
* ``fp32_logits=True``: ``confidence_reference(hidden.float() @ weight.float().T)``, which is
  what the kernel computes (up to summation order); the tests compare the kernel with it.

For bf16/fp16 inputs the two differ by the rounding of the logits to 16 bits, which can flip
the argmax between near-tied tokens; for fp32 they agree to rounding.

Special values: the logits are an ordinary matmul, so a NaN in ``hidden`` row i makes row i's
logits NaN (token 0, the first NaN; prob/entropy/margin NaN) and a NaN in ``weight`` row v
makes column v NaN for every row (token v). Infinities follow IEEE arithmetic into the logits;
from there every rule of ``mercury_engine.kernels.confidence`` applies unchanged (argmax with NaN
greatest and ties to the lowest index; -inf has probability 0; rows with NaN, +inf or only
-inf have NaN prob/entropy/margin).

Inputs: ``hidden`` [N, D] and ``weight`` [V, D], the same dtype (float32, bfloat16 or float16),
the same device, last dimension contiguous, non-empty. Outputs: ``token`` [N] int64, ``prob``
[N] fp32, ``entropy`` [N] fp32 or None, ``margin`` [N] fp32 or None (``ConfidenceOutput``).
"""

from __future__ import annotations

import contextlib

import torch
from torch import Tensor

from mercury_engine.kernels.confidence import (
    HAS_TRITON,
    ConfidenceOutput,
    check_block,
    check_float_tensor,
    confidence_reference,
    fold_chunk,
    merge_partials,
    new_outputs,
    new_partials,
    plan_splits,
    require_triton,
    resolve_backend,
    split_prologue,
    store_outputs,
    tl,
    triton,
)

__all__ = ["HAS_TRITON", "fused_lm_head_confidence", "lm_head_confidence_reference",
           "lm_head_confidence_triton"]


def _check_inputs(hidden: Tensor, weight: Tensor) -> None:
    check_float_tensor("hidden", hidden, ndim=2)
    check_float_tensor("weight", weight, ndim=2)
    if hidden.shape[1] != weight.shape[1]:
        raise ValueError(f"hidden [N, D] and weight [V, D] must share D: hidden has D={hidden.shape[1]}, "
                         f"weight has D={weight.shape[1]} (shapes {tuple(hidden.shape)} and "
                         f"{tuple(weight.shape)}; weight is the output embedding, not its transpose)")
    if hidden.dtype != weight.dtype:
        raise TypeError(f"hidden and weight must have the same dtype, got hidden {hidden.dtype} "
                        f"and weight {weight.dtype}")
    if hidden.device != weight.device:
        raise ValueError(f"hidden and weight must be on the same device, got hidden on {hidden.device} "
                         f"and weight on {weight.device}")
    if weight.shape[0] > 2**31 - 1:
        raise ValueError(f"weight vocabulary size {weight.shape[0]} exceeds 2**31 - 1")


# ============================================================================ Triton kernel
@triton.jit
def _lm_head_confidence_kernel(
    h_ptr, stride_h,  # hidden [N, D]
    w_ptr, stride_w,  # weight [V, D]
    tok_ptr, prob_ptr, ent_ptr, margin_ptr,  # outputs [N] (when FINALIZE)
    part_f_ptr, part_i_ptr,  # partials [4, N, S] / [2, N, S] (when not FINALIZE)
    N, V, D, chunks_per_split, num_splits,
    BLOCK_N: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_D: tl.constexpr,
    UPCAST_DOT: tl.constexpr, FINALIZE: tl.constexpr,
    WITH_ENTROPY: tl.constexpr, WITH_MARGIN: tl.constexpr,
):
    # grid: (cdiv(N, BLOCK_N), num_splits); program (i, j) folds rows i*BLOCK_N.. over split j.
    split = tl.program_id(1)
    rows, row_ok, v_start, v_end, m1, m2, s, t, idx, first_nan = split_prologue(
        tl.program_id(0), split, N, V, chunks_per_split, BLOCK_N, BLOCK_V)  # rows [BN]
    ks = tl.arange(0, BLOCK_D)  # [BD]
    for start in range(v_start, v_end, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)  # [BV] int32 vocabulary ids
        col_ok = cols < v_end
        acc = tl.zeros([BLOCK_N, BLOCK_V], tl.float32)  # logits chunk
        for k0 in range(0, D, BLOCK_D):
            k_ok = (k0 + ks) < D
            h = tl.load(h_ptr + rows[:, None] * stride_h + (k0 + ks)[None, :],
                        mask=row_ok[:, None] & k_ok[None, :], other=0.0)  # [BN, BD]
            w = tl.load(w_ptr + cols.to(tl.int64)[None, :] * stride_w + (k0 + ks)[:, None],
                        mask=col_ok[None, :] & k_ok[:, None], other=0.0)  # [BD, BV] = weight.T tile
            if UPCAST_DOT:  # interpreter only: its bf16 tl.dot multiplies raw bits (triton#11584)
                h = h.to(tl.float32)
                w = w.to(tl.float32)
            acc = tl.dot(h, w, acc, input_precision="ieee")  # fp32: no TF32; 16-bit: MMA
        x = tl.where(col_ok[None, :], acc, float("-inf"))  # [BN, BV]
        m1, m2, s, t, idx, first_nan = fold_chunk(x, cols, m1, m2, s, t, idx, first_nan, V,
                                                  WITH_ENTROPY, WITH_MARGIN)
    store_outputs(rows, row_ok, split, num_splits, N * num_splits,
                  tok_ptr, prob_ptr, ent_ptr, margin_ptr, part_f_ptr, part_i_ptr,
                  m1, m2, s, t, idx, first_nan, V, FINALIZE, WITH_ENTROPY, WITH_MARGIN)


# ============================================================================ launcher
def lm_head_confidence_triton(hidden: Tensor, weight: Tensor, *, with_entropy: bool = False,
                              with_margin: bool = False, block_n: int | None = None,
                              block_v: int | None = None, block_d: int | None = None,
                              num_splits: int | None = None) -> ConfidenceOutput:
    """Launch the fused LM-head + confidence kernel.

    ``block_n`` rows per program, ``block_v`` vocabulary chunk, ``block_d`` hidden chunk (powers
    of two >= 16) and ``num_splits`` override the tiling. Defaults: 16..64 rows, 128-wide
    vocabulary chunks and 64-wide hidden steps on CUDA (tensor-core friendly), the vocabulary
    split until about two programs per SM run; bigger chunks under the CPU interpreter.
    """
    _check_inputs(hidden, weight)
    require_triton(_lm_head_confidence_kernel, hidden.device)
    n, d = hidden.shape
    v = weight.shape[0]
    on_gpu = hidden.device.type != "cpu"
    if block_n is None:
        block_n = max(16, min(64, triton.next_power_of_2(n)))
    if block_v is None:
        block_v = 128 if on_gpu else 8192
    if block_d is None:
        block_d = max(16, min(64 if on_gpu else 128, triton.next_power_of_2(d)))
    for name, value in (("block_n", block_n), ("block_v", block_v), ("block_d", block_d)):
        check_block(name, value, 16)
    row_tiles = triton.cdiv(n, block_n)
    splits, per_split = plan_splits(row_tiles, triton.cdiv(v, block_v), hidden.device, num_splits)
    outs = new_outputs(n, hidden.device, with_entropy, with_margin)
    token, prob, entropy, margin = outs
    finalize_here = splits == 1
    part_f, part_i = new_partials(outs, n, splits, hidden.device)
    # The CPU interpreter's tl.dot is wrong for bf16 operands (triton-lang/triton#11584): there
    # the tiles are upcast to fp32 first, which is the same math as the GPU's bf16 MMA (products
    # of bf16 values are exact in fp32, accumulation is fp32).
    upcast = hidden.dtype == torch.bfloat16 and type(_lm_head_confidence_kernel).__name__ == "InterpretedFunction"
    with torch.cuda.device(hidden.device) if hidden.is_cuda else contextlib.nullcontext():
        _lm_head_confidence_kernel[(row_tiles, splits)](
            hidden, hidden.stride(0), weight, weight.stride(0),
            token, prob, prob if entropy is None else entropy, prob if margin is None else margin,
            part_f, part_i, n, v, d, per_split, splits,
            BLOCK_N=block_n, BLOCK_V=block_v, BLOCK_D=block_d,
            UPCAST_DOT=upcast, FINALIZE=finalize_here, WITH_ENTROPY=with_entropy,
            WITH_MARGIN=with_margin,
            num_warps=8 if block_n * block_v >= 8192 else 4, num_stages=3)
        if not finalize_here:
            merge_partials(part_f, part_i, outs, n, v, splits, with_entropy, with_margin)
    return ConfidenceOutput(token, prob, entropy, margin)


# ============================================================================ torch reference
@torch.no_grad()
def lm_head_confidence_reference(hidden: Tensor, weight: Tensor, *, with_entropy: bool = False,
                                 with_margin: bool = False, fp32_logits: bool = False) -> ConfidenceOutput:
    """``confidence_reference(hidden @ weight.T)``; ``fp32_logits=True`` upcasts first (the
    kernel's precision), otherwise the logits are rounded to the input dtype like nn.Linear."""
    if fp32_logits:
        logits = hidden.float() @ weight.float().T  # [N, V] fp32
    else:
        logits = hidden @ weight.T  # [N, V] input dtype
    return confidence_reference(logits, with_entropy=with_entropy, with_margin=with_margin)


# ============================================================================ dispatch
def fused_lm_head_confidence(hidden: Tensor, weight: Tensor, *, with_entropy: bool = False,
                             with_margin: bool = False, backend: str = "auto") -> ConfidenceOutput:
    """Greedy token and confidences of ``hidden`` [N, D] under the output embedding ``weight``
    [V, D] (``Transformer.output_embedding``), without materializing the logits on Triton.

    ``backend``: ``"triton"`` (the fused kernel), ``"torch"``
    (``lm_head_confidence_reference`` with logits in the input dtype, identical to
    ``lm_head`` + ``predict``) or ``"auto"`` (``MERCURY_KERNELS`` if set, else Triton for CUDA
    tensors when installed). See the module docstring for precision and NaN/-inf handling.
    """
    _check_inputs(hidden, weight)
    if resolve_backend(backend, hidden.device) == "triton":
        return lm_head_confidence_triton(hidden, weight, with_entropy=with_entropy, with_margin=with_margin)
    return lm_head_confidence_reference(hidden, weight, with_entropy=with_entropy, with_margin=with_margin)
