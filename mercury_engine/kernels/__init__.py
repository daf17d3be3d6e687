"""Fused Triton kernels for the diffusion engine, one file per fused op (Liger-Kernel style).

Each op has its ``@triton.jit`` kernel(s), a launcher that checks its inputs (``*_triton``), a
plain torch reference (``*_reference``) that defines its exact semantics, and the public op,
which dispatches between them:

* ``fused_lm_head_confidence(hidden, weight, *, with_entropy=False, with_margin=False,
  backend="auto")`` -> ``ConfidenceOutput(token, prob, entropy, margin)`` — the greedy token and
  its confidences from hidden states [N, D] and the output embedding [V, D], never writing the
  [N, V] logits (``lm_head_confidence.py``). The fast sampler runs it on CUDA for greedy steps
  (``mercury_engine/fast_sampler.py``, ``FastDecoder._scores``).

``confidence.py`` holds what it is built from: the confidence statistics' semantics
(``confidence_reference``), the online-softmax fold and split-merge kernels, ``resolve_backend``
and the input checks.

Two kernels that the engine never ran were removed (issue #25): a logits-in confidence op and a
fused RMSNorm. The CUDA path materialises logits only on the exact path (``cache="none"``, where
the torch ops must reproduce the reference sampler bit for bit) and for constrained or sampled
rows (a healing constraint, temperature > 0), which a greedy argmax kernel cannot score; and the
model's RMSNorm is already one fused op (``F.rms_norm``), so a Triton copy had no measured
reason to replace it (fusing the residual add as well would restructure every block for a gain
no lent GPU has measured). git history keeps both.

Dispatch (``backend``):

* ``"torch"`` — always the torch reference;
* ``"triton"`` — always the kernel: on CUDA tensors, or on CPU tensors under the Triton
  interpreter (``TRITON_INTERPRET=1`` set before ``triton`` is imported; that is how the tests
  run the kernels without a GPU). Raises ``RuntimeError`` when Triton is not installed;
* ``"auto"`` (default) — the environment variable ``MERCURY_KERNELS`` (``auto`` | ``torch`` |
  ``triton``) if set, otherwise Triton for CUDA tensors when Triton is installed and the torch
  reference everywhere else.

The ops are for inference: outputs carry no autograd history. Triton is optional: without it
every module imports and the torch paths work. Every op validates its inputs on both paths and
raises ``TypeError`` (wrong type/dtype) or ``ValueError`` (rank, shape, emptiness, layout,
device) naming the offending argument. NaN/inf behaviour is documented in each module and
identical on both paths.
"""

from mercury_engine.kernels.confidence import HAS_TRITON, ConfidenceOutput
from mercury_engine.kernels.lm_head_confidence import fused_lm_head_confidence

__all__ = ["HAS_TRITON", "ConfidenceOutput", "fused_lm_head_confidence"]
