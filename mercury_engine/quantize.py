"""Post-load weight quantization for CPU inference (outside the model, as in gpt-fast).

``int8``: the transformer blocks' linear layers and the LM head run int8 GEMMs (fbgemm/onednn):
weights int8 with one scale per output channel, activations quantized on the fly with **one
scale per row** (per token). On small CPUs the block steps of the fast sampler are GEMMs with a
handful of rows, where int8 runs faster than fp32 and bf16 (benchmarks/engine/speed). The
embedding stays in float32.

Per-row scales make a token's output depend on that token alone, never on the rows it shares
a GEMM with: a request decoded in a batch with any neighbours (and any padding) gets exactly
the result it gets alone (benchmarks/batch_forward, ``differ from alone``). torch's stock
dynamic quantization picks one activation scale per *tensor*, so the batch's largest activation
set every request's rounding and batched results drifted from the solo ones. The int8 kernel
still picks its scale per tensor; each row is divided by its own absolute maximum first and
one fixed row ``[-1, 1, 0, ...]`` is appended, which pins the tensor's range to [-1, 1]
whatever the batch holds, and the output rows are multiplied back. Integer accumulation is
exact, so the row's result is the same bit for bit at any batch size.

Each block runs four int8 GEMMs instead of seven: q|k|v and gate|up are **fused** into one
weight each (``Attention.qkv_proj``, ``SwiGLU.gate_up_proj``), which scales the shared input
once and calls the kernel once. With per-channel weight scales and per-row activation scales the
fusion changes no number: each output channel is the one its own layer would give.

The LM head (tied to the embedding: an int8 copy of it, 2 MB for the embedded model) is int8
too. In float32 it was the largest single cost of a block step: at a block's few rows the
[V, D] GEMM is bound by reading 8 MB of weights, evicted from the cache by the forward between
two steps; int8 reads a quarter of that. It changes some greedy choices: ``benchmarks/engine/ab``
reports the share of completions that differ and the quality of both sides (README, "Engine CPU
cost"). The float embedding stays for the fused CUDA kernels (``Transformer.output_embedding``).
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor, nn

from mercury_engine.errors import InvalidRequestError
from mercury_engine.model import Transformer

QUANTIZE_MODES = ("none", "int8")
INT8_MAX = 127  # symmetric int8 weights: [-127, 127]
# x86 int8 GEMMs multiply u8 x s8 pairs into 16-bit sums that can saturate with 8-bit
# activations; 7-bit activations (torch's default on x86) keep them exact.
REDUCE_RANGE = True
TINY = 1e-30  # floor of a scale: an all-zero row or channel divides by this, not by zero


class RowInt8Linear(nn.Module):
    """``x @ W.T + b`` with int8 weights (per output channel) and per-row int8 activations, for
    one ``nn.Linear`` or several stacked by output channels (a fused projection)."""

    def __init__(self, parts: list[nn.Linear]) -> None:
        super().__init__()
        w = torch.cat([lin.weight.detach().float() for lin in parts])  # [N, K]
        self.in_features, self.out_features = parts[0].in_features, int(w.shape[0])
        scale = (w.abs().amax(dim=1).clamp(min=TINY) / INT8_MAX).double()  # [N]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the quantized-tensor deprecation notice: the API still works in 2.x
            qw = torch.quantize_per_channel(w, scale, torch.zeros(w.shape[0], dtype=torch.long), 0, torch.qint8)
        self._packed = torch.ops.quantized.linear_prepack(qw, None)
        biases = [lin.bias for lin in parts]
        bias = None if all(b is None for b in biases) else torch.cat([
            (b if b is not None else torch.zeros(lin.out_features)).detach().float()
            for b, lin in zip(biases, parts, strict=True)])
        self.bias = None if bias is None else nn.Parameter(bias, requires_grad=False)
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
        y = torch.ops.quantized.linear_dynamic(unit, self._packed, REDUCE_RANGE)[:m].mul_(amax)  # [M, N], in place
        if self.bias is not None:
            y.add_(self.bias)
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
    for layer in model.layers:
        att, mlp = layer.self_attn, layer.mlp
        att.qkv_proj = RowInt8Linear([att.q_proj, att.k_proj, att.v_proj])
        att.o_proj = RowInt8Linear([att.o_proj])
        mlp.gate_up_proj = RowInt8Linear([mlp.gate_proj, mlp.up_proj])
        mlp.down_proj = RowInt8Linear([mlp.down_proj])
        del att.q_proj, att.k_proj, att.v_proj, mlp.gate_proj, mlp.up_proj  # the float copies
    model.lm_head = RowInt8Linear([model.lm_head])
    return model
