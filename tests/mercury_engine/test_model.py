"""Unit tests of mercury_engine/model.py and the dtype/device plumbing of mercury_engine/api.py."""

from __future__ import annotations

import pytest
import torch

from mercury_engine import Engine
from mercury_engine.api import cpu_has_bf16_matmul, resolve_dtype
from mercury_engine.loader import EMBEDDED_DIR
from mercury_engine.model import Transformer
from mercury_engine.options import InfillOptions
from mercury_train.testing import make_tiny_checkpoint, tiny_config

CPU = torch.device("cpu")


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _model(dtype: torch.dtype = torch.float32, **overrides) -> Transformer:
    torch.manual_seed(0)
    model = Transformer(tiny_config(97, **overrides))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.uniform_(0.5, 1.5)
            elif p.dim() > 1:
                p.normal_(0, 0.05)
            else:
                p.normal_(0, 0.1)
    return model.to(dtype).eval()


def _ids(b: int, t: int, seed: int = 0, vocab: int = 97) -> torch.Tensor:
    return torch.randint(0, vocab, (b, t), generator=torch.Generator().manual_seed(seed))


def test_gqa_shapes():
    model = _model(num_heads=4, num_kv_heads=2, head_dim=16, qkv_bias=True)
    attn = model.layers[0].self_attn
    assert attn.q_proj.weight.shape == (4 * 16, 64)
    assert attn.k_proj.weight.shape == attn.v_proj.weight.shape == (2 * 16, 64)
    assert attn.o_proj.weight.shape == (64, 4 * 16)
    assert attn.k_proj.bias.shape == (2 * 16,)
    ids = _ids(3, 11)
    with torch.no_grad():
        h, kv = model.forward_hidden(ids, return_kv=True)
        logits = model(ids)
    assert h.shape == (3, 11, 64)
    assert logits.shape == (3, 11, 97)
    assert len(kv) == 2
    for k, v in kv:
        assert k.shape == v.shape == (3, 2, 11, 16)  # [B, K, T, E]: kv heads, not query heads


def test_gqa_equals_repeated_kv_heads():
    """GQA with K kv heads == full multi-head attention with each kv head repeated H/K times."""
    gqa = _model(num_heads=4, num_kv_heads=2)
    mha = Transformer(gqa.config.replace(num_kv_heads=4)).eval()
    state = gqa.state_dict()
    for name in list(state):
        if name.endswith(("k_proj.weight", "v_proj.weight")):
            w = state[name].view(2, 16, 64)
            state[name] = w.repeat_interleave(2, dim=0).reshape(64, 64)
    mha.load_state_dict(state)
    ids = _ids(2, 9, seed=1)
    with torch.no_grad():
        assert torch.allclose(gqa(ids), mha(ids), atol=1e-5)


def test_attention_is_bidirectional():
    model = _model()
    ids = _ids(1, 10, seed=2)
    later = ids.clone()
    later[0, -1] = (later[0, -1] + 1) % 97
    with torch.no_grad():
        assert (model(ids)[0, 0] - model(later)[0, 0]).abs().max() > 1e-4


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_forward_runs_in_dtype(dtype):
    model = _model(dtype)
    ids = _ids(2, 13, seed=3)
    with torch.no_grad():
        logits = model(ids, key_mask=torch.ones(2, 13, dtype=torch.bool))
    assert logits.dtype == dtype
    assert torch.isfinite(logits.float()).all()
    if dtype == torch.bfloat16:
        with torch.no_grad():
            ref = _model(torch.float32)(ids)
        assert (logits.float() - ref).abs().max() < 0.1


def test_dtype_auto_resolution():
    assert resolve_dtype("auto", CPU) == (torch.bfloat16 if cpu_has_bf16_matmul() else torch.float32)
    assert resolve_dtype("auto", torch.device("cuda")) == torch.bfloat16
    assert resolve_dtype("bf16", CPU) == torch.bfloat16
    assert resolve_dtype("float32", CPU) == torch.float32
    assert resolve_dtype(torch.float16, CPU) == torch.float16


def test_engine_load_dtype(tmp_path):
    path = make_tiny_checkpoint(tmp_path / "tiny")
    auto = Engine.load(path, device="cpu", dtype="auto", quantize="none")
    assert auto.dtype == resolve_dtype("auto", CPU)
    assert auto.device == CPU
    bf16 = Engine.load(path, device="cpu", dtype="bfloat16")
    assert bf16.dtype == torch.bfloat16
    assert all(p.dtype == torch.bfloat16 for p in bf16.model.parameters())
    assert bf16.model.lm_head.weight is bf16.model.embed_tokens.weight  # still tied after the cast
    result = bf16.infill("def add(a, b):\n    return ", "\n", options=InfillOptions(sampler="reference"), max_tokens=4)
    assert result.steps >= 1


def test_ctx_kv_block_recompute_matches_full_forward():
    """What the KV-cache sampler relies on: run the canvas once with return_kv, then recompute only
    the span with the prefix+suffix keys/values as context: same hidden states as the full forward."""
    model = _model(qkv_bias=True)
    b, t = 2, 20
    start, end = 7, 13  # span [7, 13)
    ids = _ids(b, t, seed=4)
    with torch.no_grad():
        full, kv = model.forward_hidden(ids, return_kv=True)
        ctx_idx = torch.cat([torch.arange(0, start), torch.arange(end, t)])  # prefix + suffix
        ctx_kv = [(k[:, :, ctx_idx], v[:, :, ctx_idx]) for k, v in kv]
        pos = torch.arange(start, end).expand(b, -1)
        block, block_kv = model.forward_hidden(ids[:, start:end], pos=pos, ctx_kv=ctx_kv, return_kv=True)
    assert block.shape == (b, end - start, 64)
    assert torch.allclose(block, full[:, start:end], atol=1e-5), (block - full[:, start:end]).abs().max()
    # the block's own keys/values are those of the full forward at the span positions
    for (k_full, v_full), (k_blk, v_blk) in zip(kv, block_kv, strict=True):
        assert torch.allclose(k_blk, k_full[:, :, start:end], atol=1e-5)
        assert torch.allclose(v_blk, v_full[:, :, start:end], atol=1e-5)


def test_rotary_move_gives_the_keys_of_the_new_positions():
    """Layer-0 keys depend on the token and its position only: moving cached keys by ``delta``
    (either way) gives the keys the same tokens get at the new positions."""
    model = _model(qkv_bias=True)
    ids = _ids(1, 12, seed=5)
    with torch.no_grad():
        _, kv = model.forward_hidden(ids, pos=torch.arange(10, 22)[None], return_kv=True)
        for delta in (-7, 0, 5):
            _, fresh = model.forward_hidden(ids, pos=torch.arange(10 + delta, 22 + delta)[None], return_kv=True)
            moved = model.rotary.move(kv[0][0], delta)
            assert torch.allclose(moved, fresh[0][0], atol=1e-5), (delta, (moved - fresh[0][0]).abs().max())
            assert delta == 0 or not torch.allclose(kv[0][0], fresh[0][0], atol=1e-3)  # positions matter


def test_ctx_key_mask_hides_context_padding():
    model = _model()
    ids = _ids(1, 8, seed=5)
    with torch.no_grad():
        ref, kv = model.forward_hidden(ids, return_kv=True)
        # context = keys/values of positions 0..3, plus 3 junk entries hidden by ctx_key_mask
        ctx = [(torch.cat([k[:, :, :4], k[:, :, :3] * 3.0], 2), torch.cat([v[:, :, :4], v[:, :, :3] + 1.0], 2))
               for k, v in kv]
        ctx_mask = torch.tensor([[True] * 4 + [False] * 3])
        pos = torch.arange(4, 8)[None]
        block, _ = model.forward_hidden(ids[:, 4:], pos=pos, ctx_kv=ctx, ctx_key_mask=ctx_mask)
        unmasked, _ = model.forward_hidden(ids[:, 4:], pos=pos, ctx_kv=ctx)
    assert torch.allclose(block, ref[:, 4:], atol=1e-5)
    assert not torch.allclose(unmasked, ref[:, 4:], atol=1e-3)  # the junk would matter


def test_embedded_default_model_loads():
    if not (EMBEDDED_DIR / "config.json").is_file():
        pytest.skip(f"no embedded model yet: {EMBEDDED_DIR}/config.json does not exist "
                    "(it is trained and shipped by a later issue)")
    engine = Engine.load(device="cpu", dtype="float32")
    assert engine.path == EMBEDDED_DIR
    assert engine.config.model_type == "mercury"
    result = engine.infill("def add(a, b):\n    return ", "\n", options=InfillOptions(sampler="reference"), max_tokens=4)
    assert result.steps >= 1


def test_meta_init_path_loads_the_same_weights(tmp_path, monkeypatch):
    """Big checkpoints are built on the meta device (never allocated twice); small ones plainly."""
    import mercury_engine.loader as loader

    path = make_tiny_checkpoint(tmp_path / "tiny", seed=4)
    plain = loader.load_checkpoint(path, torch.float32, CPU).model
    monkeypatch.setattr(loader, "META_INIT_MIN_PARAMS", 0)
    meta = loader.load_checkpoint(path, torch.float32, CPU).model
    x = torch.randint(0, plain.config.vocab_size, (2, 9))
    with torch.inference_mode():
        assert torch.equal(plain(x), meta(x))
