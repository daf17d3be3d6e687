"""Post-load weight quantization for CPU inference (outside the model, as in gpt-fast).

``int8``: the transformer blocks' linear layers run int8 GEMMs (fbgemm/onednn): weights int8
with one scale per output channel, activations quantized on the fly with **one scale per row**
(per token). On small CPUs the block steps of the fast sampler are GEMMs with a handful of
rows, where int8 runs faster than fp32 and bf16 (benchmarks/engine_speed).

Per-row scales make a token's output depend on that token alone, never on the rows it shares
a GEMM with: a request decoded in a batch with any neighbours (and any padding) gets exactly
the result it gets alone (benchmarks/batch_forward, ``differ from alone``). torch's stock
dynamic quantization picks one activation scale per *tensor*, so the batch's largest activation
set every request's rounding and batched results drifted from the solo ones. The int8 kernel
still picks its scale per tensor; each row is divided by its own absolute maximum first and
one fixed row ``[-1, 1, 0, ...]`` is appended, which pins the tensor's range to [-1, 1]
whatever the batch holds, and the output rows are multiplied back. Integer accumulation is
exact, so the row's result is the same bit for bit at any batch size.

The embedding and LM head stay in floating point (the LM head is tied to the embedding and
read by the fused kernels).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from engine.errors import InvalidRequestError
from engine.model import Transformer

QUANTIZE_MODES = ("none", "int8")
INT8_MAX = 127  # symmetric int8 weights: [-127, 127]
# x86 int8 GEMMs multiply u8 x s8 pairs into 16-bit sums that can saturate with 8-bit
# activations; 7-bit activations (torch's default on x86) keep them exact.
REDUCE_RANGE = True
TINY = 1e-30  # floor of a scale: an all-zero row or channel divides by this, not by zero


class RowInt8Linear(nn.Module):
    """``x @ W.T + b`` with int8 weights (per output channel) and per-row int8 activations."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        w = linear.weight.detach().float()  # [N, K]
        self.in_features, self.out_features = linear.in_features, linear.out_features
        scale = (w.abs().amax(dim=1).clamp(min=TINY) / INT8_MAX).double()  # [N]
        qw = torch.quantize_per_channel(w, scale, torch.zeros(w.shape[0], dtype=torch.long), 0, torch.qint8)
        self._packed = torch.ops.quantized.linear_prepack(qw, None)
        self.bias = None if linear.bias is None else nn.Parameter(linear.bias.detach().float(), requires_grad=False)
        pin = torch.zeros(self.in_features)
        pin[0], pin[-1] = -1.0, 1.0  # the appended row: tensor range exactly [-1, 1]
        self.register_buffer("_pin", pin, persistent=False)

    def forward(self, x: Tensor) -> Tensor:
        rows = x.reshape(-1, self.in_features)  # [M, K]
        m = rows.shape[0]
        amax = rows.abs().amax(dim=-1, keepdim=True).clamp(min=TINY)  # [M, 1]
        unit = rows.new_empty(m + 1, self.in_features)  # [M + 1, K]: rows scaled into [-1, 1], then the pin
        torch.div(rows, amax, out=unit[:m])
        unit[m] = self._pin
        y = torch.ops.quantized.linear_dynamic(unit, self._packed, REDUCE_RANGE)[:m] * amax  # [M, N]
        if self.bias is not None:
            y = y + self.bias
        return y.view(*x.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


def quantize(model: Transformer, mode: str) -> Transformer:
    if mode not in QUANTIZE_MODES:
        raise InvalidRequestError(f"quantize must be one of {', '.join(QUANTIZE_MODES)}, got {mode!r}")
    if mode == "none":
        return model
    p = next(model.parameters())
    if p.device.type != "cpu" or p.dtype != torch.float32:
        raise InvalidRequestError("int8 quantization runs on CPU float32 models (load with dtype='float32')")
    targets = [(name, mod) for name, mod in model.layers.named_modules() if isinstance(mod, nn.Linear)]
    for name, mod in targets:
        parent_name, _, attr = name.rpartition(".")
        setattr(model.layers.get_submodule(parent_name) if parent_name else model.layers, attr, RowInt8Linear(mod))
    return model
