"""Fused Triton kernels for the diffusion engine, one file per fused op (Liger-Kernel style).

Each file holds the ``@triton.jit`` kernel(s), a launcher that checks its inputs
(``*_triton``), a plain torch reference (``*_reference``) that defines the op's exact
semantics, and the public op below, which dispatches between them:

* ``fused_confidence(logits, *, with_entropy=False, with_margin=False, backend="auto")``
  -> ``ConfidenceOutput(token, prob, entropy, margin)`` — argmax and softmax statistics of
  logits [N, V] in one online-softmax pass (``confidence.py``).
* ``fused_lm_head_confidence(hidden, weight, *, with_entropy=False, with_margin=False,
  backend="auto")`` -> ``ConfidenceOutput`` — the same from hidden states [N, D] and the
  output embedding [V, D], never writing the [N, V] logits (``lm_head_confidence.py``).
* ``fused_rmsnorm(x, weight, residual=None, *, eps=1e-6, backend="auto")``
  -> ``RMSNormOutput(y, residual)`` — RMSNorm of ``x + residual`` and the new residual stream
  (``rmsnorm.py``).

Dispatch (``backend``):

* ``"torch"`` — always the torch reference;
* ``"triton"`` — always the kernel: on CUDA tensors, or on CPU tensors under the Triton
  interpreter (``TRITON_INTERPRET=1`` set before ``triton`` is imported; that is how the tests
  run the kernels without a GPU). Raises ``RuntimeError`` when Triton is not installed;
* ``"auto"`` (default) — the environment variable ``MERCURY_KERNELS`` (``auto`` | ``torch`` |
  ``triton``) if set, otherwise Triton for CUDA tensors when Triton is installed and the torch
  reference everywhere else.

The pieces the ops share (``resolve_backend``, input checks, the online-softmax fold/merge
kernels and ``ConfidenceOutput``) live in ``confidence.py``; the other files import them.

The ops are for inference: outputs carry no autograd history.

Triton is optional: without it every module imports and the torch paths work. Every op
validates its inputs on both paths and raises ``TypeError`` (wrong type/dtype) or
``ValueError`` (rank, shape, emptiness, layout, device) naming the offending argument.
NaN/inf behaviour is documented in each module and identical on both paths.
"""

from mercury_engine.kernels.confidence import HAS_TRITON, ConfidenceOutput, fused_confidence
from mercury_engine.kernels.lm_head_confidence import fused_lm_head_confidence
from mercury_engine.kernels.rmsnorm import RMSNormOutput, fused_rmsnorm

__all__ = [
    "HAS_TRITON", "ConfidenceOutput", "RMSNormOutput", "fused_confidence", "fused_lm_head_confidence",
    "fused_rmsnorm",
]
