"""Post-load weight quantization for CPU inference (outside the model, as in gpt-fast).

``int8``: dynamic int8 quantization of the transformer blocks' linear layers and of the LM
head (weights int8, activations quantized on the fly; fbgemm/onednn int8 GEMMs). On small CPUs
the block steps of the fast sampler are GEMMs with a handful of rows, where int8 runs ~2x
faster than fp32 and bf16 (benchmarks/engine_speed). The embedding stays in float32.

Each block runs four int8 GEMMs instead of seven: q|k|v and gate|up are **fused** into one
weight each (``Attention.qkv_proj``, ``SwiGLU.gate_up_proj``), which quantizes the shared input
once and calls the kernel once. The fusion changes no number: every part keeps the per-tensor
weight scale ``torch.ao.quantization.quantize_dynamic`` gives it alone, stored as the
per-channel scales of its rows, and the activation is quantized from the same input either way.

The LM head (tied to the embedding: an int8 copy of it, 2 MB for the embedded model) is
quantized **per vocabulary row**. In float32 it was the largest single cost of a block step: at
a block's few rows the [V, D] GEMM is bound by reading 8 MB of weights, evicted from the cache
by the forward between two steps; int8 reads a quarter of that. It changes some greedy choices:
``benchmarks/engine_ab`` reports the share of completions that differ and the quality of both
sides (README, "Engine CPU cost").
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor, nn

from engine.errors import InvalidRequestError
from engine.model import Transformer

QUANTIZE_MODES = ("none", "int8")


class Int8Linear(nn.Module):
    """Dynamic-int8 ``x @ W.T + b`` for one or several float ``nn.Linear`` stacked by output rows."""

    def __init__(self, parts: list[nn.Linear], per_row: bool = False) -> None:
        super().__init__()
        from torch.ao.quantization.qconfig import default_dynamic_qconfig, per_channel_dynamic_qconfig

        ints, scales = [], []
        for lin in parts:
            # what quantize_dynamic uses: per tensor (or per output row), symmetric
            observer = (per_channel_dynamic_qconfig if per_row else default_dynamic_qconfig).weight()
            w = lin.weight.detach().float()
            observer(w)
            scale, zero = observer.calculate_qparams()
            q = (torch.quantize_per_channel(w, scale, zero, 0, torch.qint8) if per_row
                 else torch.quantize_per_tensor(w, float(scale), int(zero), torch.qint8))
            ints.append(q.int_repr())
            scales.append(scale.double() if per_row else torch.full((w.shape[0],), float(scale), dtype=torch.double))
        rows = torch.cat(ints)  # [N, D] int8
        scale = torch.cat(scales)  # [N]: each part's own scale on its rows
        qweight = torch._make_per_channel_quantized_tensor(rows, scale, torch.zeros_like(scale, dtype=torch.long), 0)
        biases = [lin.bias for lin in parts]
        bias = None if all(b is None for b in biases) else torch.cat([
            (b if b is not None else torch.zeros(lin.out_features)).detach().float()
            for b, lin in zip(biases, parts, strict=True)])
        self.packed = torch.ops.quantized.linear_prepack(qweight, bias)
        self.out_features = int(rows.shape[0])

    def forward(self, x: Tensor) -> Tensor:
        # reduce_range: as torch.ao's dynamic Linear (version 4) calls the fbgemm kernel
        return torch.ops.quantized.linear_dynamic(x, self.packed, True).to(x.dtype)


def quantize(model: Transformer, mode: str) -> Transformer:
    if mode not in QUANTIZE_MODES:
        raise InvalidRequestError(f"quantize must be one of {', '.join(QUANTIZE_MODES)}, got {mode!r}")
    if mode == "none":
        return model
    p = next(model.parameters())
    if p.device.type != "cpu" or p.dtype != torch.float32:
        raise InvalidRequestError("int8 quantization runs on CPU float32 models (load with dtype='float32')")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao's deprecation notices: the API still works in 2.x
        for layer in model.layers:
            att, mlp = layer.self_attn, layer.mlp
            att.qkv_proj = Int8Linear([att.q_proj, att.k_proj, att.v_proj])
            att.o_proj = Int8Linear([att.o_proj])
            mlp.gate_up_proj = Int8Linear([mlp.gate_proj, mlp.up_proj])
            mlp.down_proj = Int8Linear([mlp.down_proj])
            del att.q_proj, att.k_proj, att.v_proj, mlp.gate_proj, mlp.up_proj  # the float copies
    model.lm_head = Int8Linear([model.lm_head], per_row=True)
    return model
