"""Post-load weight quantization for CPU inference (outside the model, as in gpt-fast).

``int8``: dynamic int8 quantization of the transformer blocks' linear layers (weights int8
per tensor, activations quantized on the fly; fbgemm/onednn int8 GEMMs). On small CPUs the
block steps of the fast sampler are GEMMs with a handful of rows, where int8 runs ~2x faster
than fp32 and bf16. The embedding and LM head stay in floating point (the LM head is tied to
the embedding and read by the fused kernels).
"""

from __future__ import annotations

import warnings

import torch
from torch import nn

from engine.errors import InvalidRequestError
from engine.model import Transformer

QUANTIZE_MODES = ("none", "int8")


def quantize(model: Transformer, mode: str) -> Transformer:
    if mode not in QUANTIZE_MODES:
        raise InvalidRequestError(f"quantize must be one of {', '.join(QUANTIZE_MODES)}, got {mode!r}")
    if mode == "none":
        return model
    p = next(model.parameters())
    if p.device.type != "cpu" or p.dtype != torch.float32:
        raise InvalidRequestError("int8 quantization runs on CPU float32 models (load with dtype='float32')")
    names = {name for name, mod in model.layers.named_modules() if isinstance(mod, nn.Linear)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao's deprecation notice: the API still works in 2.x
        model.layers = torch.ao.quantization.quantize_dynamic(model.layers, names, dtype=torch.qint8)
    return model
