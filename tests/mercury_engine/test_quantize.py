"""mercury_engine/quantize.py: the fused int8 projections compute exactly what one per-row int8 linear
per layer computes, and model rows (mercury_engine/model.py) equal the full forward's."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from mercury_engine.model import Transformer
from mercury_engine.quantize import RowInt8Linear, quantize
from mercury_train.testing import tiny_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _model(**overrides) -> Transformer:
    torch.manual_seed(0)
    model = Transformer(tiny_config(97, **overrides))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1:
                p.normal_(0, 0.05)
            elif not name.endswith("norm.weight"):
                p.normal_(0, 0.1)
    return model.eval()


def _per_layer_int8(model: Transformer) -> Transformer:
    """Unfused: one per-row int8 linear for every linear of the blocks and for the LM head."""
    out = copy.deepcopy(model)
    for name, mod in [(n, m) for n, m in out.layers.named_modules() if isinstance(m, nn.Linear)]:
        parent, _, attr = name.rpartition(".")
        setattr(out.layers.get_submodule(parent), attr, RowInt8Linear([mod]))
    out.lm_head = RowInt8Linear([out.lm_head])
    return out


@pytest.mark.parametrize("qkv_bias", [False, True])
def test_fused_int8_equals_per_layer_int8(qkv_bias):
    model = _model(num_heads=4, num_kv_heads=2, head_dim=16, qkv_bias=qkv_bias)
    ref = _per_layer_int8(model)
    fused = quantize(copy.deepcopy(model), "int8")
    att = fused.layers[0].self_attn
    assert isinstance(att.qkv_proj, RowInt8Linear) and att.qkv_proj.out_features == (4 + 2 + 2) * 16
    assert not hasattr(att, "q_proj")  # the float copies are gone
    ids = torch.randint(0, 97, (2, 23), generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        h_ref, kv_ref = ref.forward_hidden(ids, return_kv=True)
        h, kv = fused.forward_hidden(ids, return_kv=True)
    assert torch.equal(h, h_ref)
    for (k, v), (k_ref, v_ref) in zip(kv, kv_ref, strict=True):
        assert torch.equal(k, k_ref) and torch.equal(v, v_ref)
        assert torch.equal(fused.lm_head(h), ref.lm_head(h_ref))  # the int8 LM head
        # and it is int8: not the float model's numbers
        assert not torch.equal(h, model.forward_hidden(ids)[0])
    assert isinstance(fused.lm_head, RowInt8Linear)
    assert fused.output_embedding is fused.embed_tokens.weight  # tied: the float embedding


def test_rows_are_the_full_forwards_rows_with_every_key_and_value():
    model = _model(qkv_bias=True)
    ids = torch.randint(0, 97, (2, 20), generator=torch.Generator().manual_seed(2))
    rows = torch.tensor([[3, 4, 5, 19], [0, 7, 8, 8]])
    with torch.inference_mode():
        full, kv_full = model.forward_hidden(ids, return_kv=True)
        part, kv_part = model.forward_hidden(ids, return_kv=True, rows=rows)
    assert part.shape == (2, 4, full.shape[-1])
    assert torch.allclose(part, full.gather(1, rows[..., None].expand(-1, -1, full.shape[-1])), atol=1e-5)
    for (k, v), (kf, vf) in zip(kv_part, kv_full, strict=True):
        assert torch.allclose(k, kf, atol=1e-6) and torch.allclose(v, vf, atol=1e-6)
