"""Confidence statistics: logits -> (argmax token, max probability, entropy, margin), their
exact semantics (``confidence_reference``) and the Triton pieces that compute them in one pass,
which the fused LM-head kernel (``lm_head_confidence.py``) folds its logit tiles with.

The samplers need, for every undecided position, the greedy token and how sure the model is
of it. Done naively that is ``softmax`` (a full [N, V] fp32 copy of the logits), ``argmax``,
``gather`` and for margin a ``topk``: four passes over the largest tensor of a step. The
kernels read the logits once, tiled over the vocabulary in ``BLOCK_V`` chunks, and keep per row an
*online softmax*: the running max ``m1``, the running sum ``s = sum(exp(x - m1))``, the running
argmax, and, when asked, ``t = sum(exp(x - m1) * (x - m1))`` (entropy) and the running
second-largest logit ``m2`` (margin). From those:

    prob    = 1 / s                           (the max probability, p[token])
    entropy = log(s) - t / s                  (= -sum p log p, in nats, clamped at >= 0)
    margin  = (1 - exp(m2 - m1)) / s          (= p_top1 - p_top2)

The softmax is never materialized. For few rows the vocabulary is also split across programs
(``num_splits``): each writes partial statistics and a tiny second kernel merges them, so a
handful of rows still fill the GPU.

Special values (identical in the Triton pieces and in ``confidence_reference``):

* ``token`` is exactly ``torch.argmax(logits, -1)`` with ties broken towards the **lowest
  index**, treating NaN as greater than everything (so a row with a NaN gets the position of
  its first NaN) and ``+inf`` as greater than every finite value.
* ``-inf`` logits are allowed and have probability 0 (the sampler uses them to forbid tokens).
* A row is *invalid* when it contains a NaN or a ``+inf``, or is entirely ``-inf``. Its
  ``prob``, ``entropy`` and ``margin`` are NaN; its ``token`` follows the rule above (an
  all ``-inf`` row gives token 0). This is what ``softmax`` + ``argmax`` give for such rows
  (``mercury_engine.sampler.predict``), and NaN is not finite, so the samplers never commit it.
* A vocabulary of one token has ``prob = 1``, ``entropy = 0`` and ``margin = 1``.

Statistics are computed in fp32 whatever the input dtype. Outputs:
``token`` [N] int64, ``prob`` [N] fp32, ``entropy`` [N] fp32 or None, ``margin`` [N] fp32 or
None.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import torch
from torch import Tensor

try:  # Triton is optional: without it the module imports and the torch path works.
    import triton
    import triton.language as tl

    HAS_TRITON = True
except ImportError:  # pragma: no cover - exercised in a subprocess by the tests
    from types import SimpleNamespace

    HAS_TRITON = False
    # Just enough for the @triton.jit definitions below to evaluate; they are never launched.
    triton = SimpleNamespace(jit=lambda fn: fn)
    tl = SimpleNamespace(constexpr=None)

BACKENDS = ("auto", "torch", "triton")
ENV_BACKEND = "MERCURY_KERNELS"
FLOAT_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


class ConfidenceOutput(NamedTuple):
    token: Tensor  # [N] int64, argmax (lowest index on ties)
    prob: Tensor  # [N] fp32, softmax probability of ``token``
    entropy: Tensor | None  # [N] fp32, -sum p log p (nats); None unless asked for
    margin: Tensor | None  # [N] fp32, p_top1 - p_top2; None unless asked for


# ============================================================================ shared helpers
def resolve_backend(backend: str, device: torch.device) -> str:
    """``"torch"`` or ``"triton"`` for a tensor on ``device``.

    An explicit ``backend="torch"|"triton"`` wins. ``"auto"`` reads ``MERCURY_KERNELS``
    (``auto``/``torch``/``triton``, unset = ``auto``) and then picks Triton for CUDA tensors
    when Triton is installed, torch otherwise.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, got {backend!r}")
    if backend == "auto":
        env = os.environ.get(ENV_BACKEND, "").strip().lower() or "auto"
        if env not in BACKENDS:
            raise ValueError(f"environment variable {ENV_BACKEND} must be one of "
                             f"{', '.join(BACKENDS)} (or unset), got {env!r}")
        backend = env
    if backend == "auto":
        return "triton" if device.type == "cuda" and HAS_TRITON else "torch"
    return backend


def require_triton(kernel, device: torch.device) -> None:
    """Raise a clear error when ``kernel`` cannot run on ``device``."""
    if not HAS_TRITON:
        raise RuntimeError("backend='triton' needs the 'triton' package "
                           "(pip install 'mercury-lsp[kernels]'); use backend='torch' or 'auto'")
    interpreted = type(kernel).__name__ == "InterpretedFunction"
    if device.type == "cpu" and not interpreted:
        raise RuntimeError("backend='triton' on CPU tensors needs the Triton interpreter: set "
                           "TRITON_INTERPRET=1 before triton is imported (or use backend='torch')")


def check_float_tensor(name: str, t: object, *, ndim: int | None) -> None:
    """Type, dtype, rank (``ndim``; None: at least 1-D), emptiness and last-dimension contiguity
    checks, naming ``name``."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name} must be float32, bfloat16 or float16, got {t.dtype}")
    if ndim is None and t.dim() == 0:
        raise ValueError(f"{name} must have at least one dimension (the hidden size), got a scalar")
    if ndim is not None and t.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got {t.dim()}-D with shape {tuple(t.shape)}")
    if t.numel() == 0:
        raise ValueError(f"{name} must be non-empty, got shape {tuple(t.shape)}")
    if t.stride(-1) != 1 and t.shape[-1] > 1:
        raise ValueError(f"{name} must be contiguous in its last dimension, got strides "
                         f"{tuple(t.stride())} (call .contiguous())")


def plan_splits(n_rows: int, n_chunks: int, device: torch.device, requested: int | None) -> tuple[int, int]:
    """(num_splits, chunks_per_split) so that no split is empty.

    By default the vocabulary is split so that about two programs per SM run on CUDA; under
    the interpreter one split is fastest.
    """
    if requested is None:
        if device.type == "cuda":
            sms = torch.cuda.get_device_properties(device).multi_processor_count
            requested = max(1, (2 * sms) // max(1, n_rows))
        else:
            requested = 1
    if not isinstance(requested, int) or requested < 1:
        raise ValueError(f"num_splits must be a positive integer, got {requested!r}")
    splits = min(requested, n_chunks)
    per_split = -(-n_chunks // splits)
    return -(-n_chunks // per_split), per_split


def check_block(name: str, value: object, minimum: int) -> None:
    if not isinstance(value, int) or value < minimum or value & (value - 1):
        raise ValueError(f"{name} must be a power of two >= {minimum}, got {value!r}")


# ============================================================================ Triton kernels
@triton.jit
def fold_chunk(x, cols, m1, m2, s, t, idx, first_nan, V,
               WITH_ENTROPY: tl.constexpr, WITH_MARGIN: tl.constexpr):
    """Fold one chunk of logits into the running statistics of its rows.

    x: [R, C] fp32 logits (-inf outside the vocabulary range); cols: [C] int32 vocabulary ids;
    m1, m2, s, t: [R] fp32; idx, first_nan: [R] int32 (``V`` = no NaN seen yet).
    """
    is_nan = x != x
    first_nan = tl.minimum(first_nan, tl.min(tl.where(is_nan, cols[None, :], V), axis=1))
    x = tl.where(is_nan, float("-inf"), x)
    c1 = tl.max(x, axis=1)  # [R] chunk max
    c_idx = tl.min(tl.where(x == c1[:, None], cols[None, :], V), axis=1)  # [R] lowest index of it
    if WITH_MARGIN:
        c2 = tl.max(tl.where(cols[None, :] == c_idx[:, None], float("-inf"), x), axis=1)  # [R]
        m2 = tl.maximum(tl.minimum(m1, c1), tl.maximum(m2, c2))
    idx = tl.where(c1 > m1, c_idx, idx)  # strict: an earlier chunk wins ties
    m_new = tl.maximum(m1, c1)
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # all -inf so far: keep exp() finite
    alpha = tl.exp(m1 - m_safe)  # rescales the old sums to the new max
    d = x - m_safe[:, None]  # [R, C]
    e = tl.exp(d)  # [R, C], 0 for -inf logits
    if WITH_ENTROPY:
        # t' = sum e' * (x - m_new) = alpha * (t + (m_old - m_new) * s) + this chunk's terms
        m_old = tl.where(s > 0, m1, m_safe)  # s == 0: nothing to rescale (avoids -inf * 0)
        t = alpha * (t + (m_old - m_safe) * s) + tl.sum(e * tl.where(e > 0, d, 0.0), axis=1)
    s = s * alpha + tl.sum(e, axis=1)
    return m_new, m2, s, t, idx, first_nan


@triton.jit
def split_prologue(pid, split, N, V, chunks_per_split,
                   BLOCK_R: tl.constexpr, BLOCK_V: tl.constexpr):
    """Rows and vocabulary range of program (pid, split), and empty running statistics.

    Returns rows [R] int64, row_ok [R], v_start, v_end, then m1, m2, s, t [R] fp32 and
    idx, first_nan [R] int32 as ``fold_chunk`` expects them before the first chunk.
    """
    rows = (pid * BLOCK_R + tl.arange(0, BLOCK_R)).to(tl.int64)  # [R]
    row_ok = rows < N
    v_start = split * chunks_per_split * BLOCK_V
    v_end = tl.minimum(V, v_start + chunks_per_split * BLOCK_V)
    m1 = tl.full([BLOCK_R], float("-inf"), tl.float32)
    m2 = tl.full([BLOCK_R], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK_R], tl.float32)
    t = tl.zeros([BLOCK_R], tl.float32)
    idx = tl.zeros([BLOCK_R], tl.int32)
    first_nan = tl.zeros([BLOCK_R], tl.int32) + V
    return rows, row_ok, v_start, v_end, m1, m2, s, t, idx, first_nan


@triton.jit
def finalize(m1, m2, s, t, idx, first_nan, V):
    """Running statistics [R] -> (token int64, prob, entropy, margin) [R], invalid rows NaN."""
    has_nan = first_nan < V
    token = tl.where(has_nan, first_nan, idx).to(tl.int64)
    valid = (first_nan >= V) & (m1 > float("-inf")) & (m1 < float("inf"))
    s = tl.where(valid, s, 1.0)  # invalid rows: keep the arithmetic finite, outputs are NaN
    gap = tl.where(valid, m2, 0.0) - tl.where(valid, m1, 0.0)  # <= 0
    inv = 1.0 / s
    prob = tl.where(valid, inv, float("nan"))
    entropy = tl.where(valid, tl.maximum(tl.log(s) - t * inv, 0.0), float("nan"))
    margin = tl.where(valid, (1.0 - tl.exp(gap)) * inv, float("nan"))
    return token, prob, entropy, margin


@triton.jit
def store_outputs(rows, row_ok, split, num_splits, plane,
                  tok_ptr, prob_ptr, ent_ptr, margin_ptr, part_f_ptr, part_i_ptr,
                  m1, m2, s, t, idx, first_nan, V,
                  FINALIZE: tl.constexpr, WITH_ENTROPY: tl.constexpr, WITH_MARGIN: tl.constexpr):
    """Write final outputs (one split) or this split's partial statistics.

    Partials: part_f [4, N, S] fp32 (m1, m2, s, t), part_i [2, N, S] int32 (idx, first_nan),
    ``plane`` = N * S.
    """
    if FINALIZE:
        token, prob, entropy, margin = finalize(m1, m2, s, t, idx, first_nan, V)
        tl.store(tok_ptr + rows, token, mask=row_ok)
        tl.store(prob_ptr + rows, prob, mask=row_ok)
        if WITH_ENTROPY:
            tl.store(ent_ptr + rows, entropy, mask=row_ok)
        if WITH_MARGIN:
            tl.store(margin_ptr + rows, margin, mask=row_ok)
    else:
        p = rows * num_splits + split  # [R]
        tl.store(part_f_ptr + p, m1, mask=row_ok)
        tl.store(part_f_ptr + plane + p, m2, mask=row_ok)
        tl.store(part_f_ptr + 2 * plane + p, s, mask=row_ok)
        tl.store(part_f_ptr + 3 * plane + p, t, mask=row_ok)
        tl.store(part_i_ptr + p, idx, mask=row_ok)
        tl.store(part_i_ptr + plane + p, first_nan, mask=row_ok)


@triton.jit
def merge_splits_kernel(
    part_f_ptr, part_i_ptr,  # partials [4, N, S] fp32 / [2, N, S] int32
    tok_ptr, prob_ptr, ent_ptr, margin_ptr,  # outputs [N]
    N, V, num_splits,
    BLOCK_S: tl.constexpr, WITH_ENTROPY: tl.constexpr, WITH_MARGIN: tl.constexpr,
):
    # grid: (N,); one row per program, its S partials as a [1, BLOCK_S] tile.
    rows = tl.program_id(0).to(tl.int64) + tl.arange(0, 1)  # [1]
    j = tl.arange(0, BLOCK_S)  # [S]
    ok = (j < num_splits)[None, :]  # [1, S]
    plane = N * num_splits
    p = rows[:, None] * num_splits + j[None, :]  # [1, S]
    m1j = tl.load(part_f_ptr + p, mask=ok, other=float("-inf"))
    m2j = tl.load(part_f_ptr + plane + p, mask=ok, other=float("-inf"))
    sj = tl.load(part_f_ptr + 2 * plane + p, mask=ok, other=0.0)
    tj = tl.load(part_f_ptr + 3 * plane + p, mask=ok, other=0.0)
    idxj = tl.load(part_i_ptr + p, mask=ok, other=V)
    nanj = tl.load(part_i_ptr + plane + p, mask=ok, other=V)

    m1 = tl.max(m1j, axis=1)  # [1]
    idx = tl.min(tl.where(m1j == m1[:, None], idxj, V), axis=1)  # splits are ordered: lowest wins
    m_safe = tl.where(m1 == float("-inf"), 0.0, m1)
    a = tl.exp(m1j - m_safe[:, None])  # [1, S]
    s = tl.sum(a * sj, axis=1)
    m_old = tl.where(sj > 0, m1j, m_safe[:, None])
    t = tl.sum(a * (tj + (m_old - m_safe[:, None]) * sj), axis=1)
    # second largest: the other splits' maxima and every split's own second largest
    m2 = tl.maximum(tl.max(tl.where(idxj == idx[:, None], float("-inf"), m1j), axis=1),
                    tl.max(m2j, axis=1))
    first_nan = tl.min(nanj, axis=1)
    row_ok = rows < N
    store_outputs(rows, row_ok, 0, 1, 0, tok_ptr, prob_ptr, ent_ptr, margin_ptr,
                  part_f_ptr, part_i_ptr, m1, m2, s, t, idx, first_nan, V,
                  True, WITH_ENTROPY, WITH_MARGIN)


# ============================================================================ launcher
def new_outputs(n: int, device: torch.device, with_entropy: bool, with_margin: bool):
    token = torch.empty(n, dtype=torch.int64, device=device)
    prob = torch.empty(n, dtype=torch.float32, device=device)
    entropy = torch.empty(n, dtype=torch.float32, device=device) if with_entropy else None
    margin = torch.empty(n, dtype=torch.float32, device=device) if with_margin else None
    return token, prob, entropy, margin


def new_partials(outs, n: int, splits: int, device: torch.device) -> tuple[Tensor, Tensor]:
    """Per-split statistics [4, N, S] fp32 / [2, N, S] int32; with one split the kernel
    finalises in place and the outputs stand in as (unused) placeholders."""
    token, prob, _, _ = outs
    if splits == 1:
        return prob, token
    return (torch.empty(4, n, splits, dtype=torch.float32, device=device),
            torch.empty(2, n, splits, dtype=torch.int32, device=device))


def merge_partials(part_f: Tensor, part_i: Tensor, outs, n: int, v: int, num_splits: int,
                   with_entropy: bool, with_margin: bool) -> None:
    """Launch the merge of per-split statistics into ``outs`` (token, prob, entropy, margin)."""
    token, prob, entropy, margin = outs
    merge_splits_kernel[(n,)](
        part_f, part_i, token, prob, prob if entropy is None else entropy,
        prob if margin is None else margin, n, v, num_splits,
        BLOCK_S=triton.next_power_of_2(num_splits), WITH_ENTROPY=with_entropy,
        WITH_MARGIN=with_margin, num_warps=1)


# ============================================================================ torch reference
@torch.no_grad()
def confidence_reference(logits: Tensor, *, with_entropy: bool = False,
                         with_margin: bool = False) -> ConfidenceOutput:
    """The same outputs with plain torch ops (materializes the softmax; fp32)."""
    x = logits.float()  # [N, V]
    v = x.shape[-1]
    pos = torch.arange(v, device=x.device)  # [V]
    is_nan = x.isnan()
    first_nan = torch.where(is_nan, pos, v).amin(-1)  # [N], V = no NaN
    x = x.masked_fill(is_nan, float("-inf"))
    m1 = x.amax(-1)  # [N]
    top = torch.where(x == m1[:, None], pos, v).amin(-1)  # [N] lowest index of the max
    has_nan = first_nan < v
    token = torch.where(has_nan, first_nan, top)  # [N]
    valid = ~has_nan & torch.isfinite(m1)  # [N]
    z = torch.where(valid[:, None], x - torch.where(valid, m1, 0.0)[:, None], 0.0)  # [N, V], <= 0
    logp = z - torch.logsumexp(z, dim=-1, keepdim=True)  # [N, V]
    p = logp.exp()  # [N, V]
    nan = torch.full_like(m1, float("nan"))
    prob = torch.where(valid, p.gather(-1, top[:, None]).squeeze(-1), nan)
    entropy = margin = None
    if with_entropy:
        ent = -torch.where(p > 0, p * logp, 0.0).sum(-1)
        entropy = torch.where(valid, ent.clamp_min(0.0), nan)
    if with_margin:
        if v >= 2:
            top2 = p.topk(2, dim=-1).values  # [N, 2]
            gap = top2[:, 0] - top2[:, 1]
        else:
            gap = p[:, 0]
        margin = torch.where(valid, gap, nan)
    return ConfidenceOutput(token, prob, entropy, margin)
