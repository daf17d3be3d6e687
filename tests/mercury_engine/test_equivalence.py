"""Issue #2: real checkpoint layouts load and compute what the reference implementation does.

Tiny random Qwen2- and LLaMA-shaped models are built with ``transformers``, saved with
``save_pretrained`` and rewritten into the published layouts of the Dream family (Dream-7B,
Dream-Coder-7B, DiffuCoder-7B: Qwen2 names, ``model_type: "Dream"``) and of LLaDA-8B (OLMo-style
config and parameter names). ``mercury_engine.loader`` must load them and give the logits of the
transformers forward under a bidirectional (all-visible) attention mask.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from mercury_engine.canvas import Canvas
from mercury_engine.decode import shift_logits
from mercury_engine.loader import load_checkpoint
from mercury_engine.options import InfillOptions
from mercury_engine.sampler import reference_infill
from mercury_train.bpe import EOT_TOKEN, MASK_TOKEN, train_bpe
from mercury_train.testing import _SAMPLE

transformers = pytest.importorskip("transformers")

HF_VOCAB = 300  # > the tokenizer's vocabulary, as in Qwen2 (padded embedding rows)
TOK_VOCAB = 290
LLADA_MASK = "<|mdm_mask|>"
CPU = torch.device("cpu")


pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ---------------------------------------------------------------------------- builders
def _tokenizer(llada: bool):
    tok = train_bpe(_SAMPLE * 4, TOK_VOCAB)  # specials <|pad|>, <|mask|>, <|endoftext|>
    if llada:
        tok.add_special_tokens([LLADA_MASK])  # LLaDA's mask token name
    return tok


def _hf_model(kind: str, tied: bool):
    common = dict(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                  vocab_size=HF_VOCAB, max_position_embeddings=128, tie_word_embeddings=tied)
    torch.manual_seed(1 if kind == "dream" else 2)
    if kind == "dream":
        cfg = transformers.Qwen2Config(num_hidden_layers=2, rope_theta=1_000_000.0, rms_norm_eps=1e-6,
                                       **common)
        model = transformers.Qwen2ForCausalLM(cfg)
    else:
        cfg = transformers.LlamaConfig(num_hidden_layers=3, rope_theta=500_000.0, rms_norm_eps=1e-5,
                                       attention_bias=False, mlp_bias=False, **common)
        model = transformers.LlamaForCausalLM(cfg)
    with torch.no_grad():  # make every weight matter (norm gains, biases) so a misload shows
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.uniform_(0.5, 1.5)
            elif name.endswith("bias"):
                p.normal_(0, 0.1)
    return model.eval()


def _llada_name(name: str) -> str:
    """A transformers Llama tensor name -> its LLaDA-8B name (modeling_llada.py)."""
    if name == "lm_head.weight":
        return "model.transformer.ff_out.weight"
    if name == "model.embed_tokens.weight":
        return "model.transformer.wte.weight"
    if name == "model.norm.weight":
        return "model.transformer.ln_f.weight"
    parts = name.split(".")
    assert parts[:2] == ["model", "layers"], name
    n, rest = parts[2], ".".join(parts[3:])
    table = {
        "self_attn.q_proj.weight": "q_proj.weight", "self_attn.k_proj.weight": "k_proj.weight",
        "self_attn.v_proj.weight": "v_proj.weight", "self_attn.o_proj.weight": "attn_out.weight",
        "mlp.gate_proj.weight": "ff_proj.weight", "mlp.up_proj.weight": "up_proj.weight",
        "mlp.down_proj.weight": "ff_out.weight", "input_layernorm.weight": "attn_norm.weight",
        "post_attention_layernorm.weight": "ff_norm.weight",
    }
    return f"model.transformer.blocks.{n}.{table[rest]}"


def _write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _to_dream(hf_dir: Path, hf, tok) -> None:
    c = hf.config
    mask_id, eot_id = tok.token_to_id(MASK_TOKEN), tok.token_to_id(EOT_TOKEN)
    (hf_dir / "config.json").unlink()
    _write_json(hf_dir / "config.json", {  # as Dream-v0-Instruct-7B ships it (4.x names)
        "architectures": ["DreamModel"], "model_type": "Dream", "attention_dropout": 0.0,
        "bos_token_id": eot_id, "eos_token_id": eot_id, "pad_token_id": eot_id, "mask_token_id": mask_id,
        "hidden_act": "silu", "hidden_size": c.hidden_size, "intermediate_size": c.intermediate_size,
        "num_hidden_layers": c.num_hidden_layers, "num_attention_heads": c.num_attention_heads,
        "num_key_value_heads": c.num_key_value_heads, "max_position_embeddings": c.max_position_embeddings,
        "rms_norm_eps": c.rms_norm_eps, "rope_scaling": None, "rope_theta": 1_000_000.0,
        "sliding_window": None, "use_sliding_window": False, "max_window_layers": 28,
        "tie_word_embeddings": c.tie_word_embeddings, "torch_dtype": "float32", "use_cache": True,
        "vocab_size": c.vocab_size, "transformers_version": "4.46.2",
    })
    _write_json(hf_dir / "generation_config.json", {
        "bos_token_id": eot_id, "eos_token_id": eot_id, "pad_token_id": eot_id, "mask_token_id": mask_id})
    _write_json(hf_dir / "tokenizer_config.json", {
        "bos_token": None, "eos_token": EOT_TOKEN, "pad_token": EOT_TOKEN, "mask_token": MASK_TOKEN,
        "model_max_length": 131072, "tokenizer_class": "DreamTokenizer"})
    (hf_dir / "tokenizer.json").write_text(tok.to_str(), encoding="utf-8")


def _to_llada(hf_dir: Path, hf, tok) -> None:
    c = hf.config
    index = hf_dir / "model.safetensors.index.json"
    shards = sorted(p.name for p in hf_dir.glob("*.safetensors"))
    for shard in shards:  # rename every tensor, shard by shard
        state = load_file(str(hf_dir / shard))
        save_file({_llada_name(k): v for k, v in state.items()}, str(hf_dir / shard), metadata={"format": "pt"})
    if index.is_file():
        data = json.loads(index.read_text())
        data["weight_map"] = {_llada_name(k): v for k, v in data["weight_map"].items()}
        _write_json(index, data)
    eot_id = tok.token_to_id(EOT_TOKEN)
    (hf_dir / "config.json").unlink()
    _write_json(hf_dir / "config.json", {  # as LLaDA-8B-Base ships it
        "architectures": ["LLaDAModelLM"], "model_type": "llada", "activation_type": "silu",
        "alibi": False, "attention_layer_norm": False, "block_type": "llama",
        "d_model": c.hidden_size, "n_heads": c.num_attention_heads, "n_kv_heads": c.num_key_value_heads,
        "n_layers": c.num_hidden_layers, "mlp_hidden_size": c.intermediate_size, "mlp_ratio": 2,
        "vocab_size": c.vocab_size, "embedding_size": c.vocab_size, "include_bias": False,
        "include_qkv_bias": False, "layer_norm_type": "rms", "rms_norm_eps": c.rms_norm_eps,
        "rope": True, "rope_theta": 500_000.0, "max_sequence_length": c.max_position_embeddings,
        "weight_tying": c.tie_word_embeddings, "scale_logits": False,
        "mask_token_id": tok.token_to_id(LLADA_MASK), "eos_token_id": eot_id, "pad_token_id": eot_id,
    })
    (hf_dir / "tokenizer.json").write_text(tok.to_str(), encoding="utf-8")


CASES = [  # (layout, tied embeddings, sharded)
    ("dream", True, False),
    ("dream", False, True),
    ("llada", False, False),
    ("llada", True, True),
]


@pytest.fixture(scope="module", params=CASES, ids=lambda c: f"{c[0]}-{'tied' if c[1] else 'untied'}"
                f"-{'sharded' if c[2] else 'single'}")
def checkpoint(request, tmp_path_factory):
    kind, tied, sharded = request.param
    hf = _hf_model(kind, tied)
    tok = _tokenizer(kind == "llada")
    out = tmp_path_factory.mktemp(f"{kind}-{tied}-{sharded}")
    hf.save_pretrained(out, safe_serialization=True, **({"max_shard_size": "40KB"} if sharded else {}))
    if sharded:
        assert (out / "model.safetensors.index.json").is_file()
        assert len(list(out.glob("*.safetensors"))) > 2
    else:
        assert [p.name for p in out.glob("*.safetensors")] == ["model.safetensors"]
    (_to_dream if kind == "dream" else _to_llada)(out, hf, tok)
    return kind, hf, out


def _hf_bidirectional_logits(hf, ids: torch.Tensor, key_mask: torch.Tensor | None = None) -> torch.Tensor:
    b, t = ids.shape
    mask = torch.zeros(b, 1, t, t)  # additive float mask: 0 = attend
    if key_mask is not None:
        mask = mask.masked_fill(~key_mask[:, None, None, :], torch.finfo(torch.float32).min)
    with torch.no_grad():
        return hf(input_ids=ids, attention_mask=mask).logits


def _ids(b: int, t: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(3, TOK_VOCAB, (b, t), generator=g)


# ---------------------------------------------------------------------------- tests
def test_hf_reference_is_bidirectional(checkpoint):
    """The 4-D mask really switches transformers to full attention (else the test proves nothing)."""
    _, hf, _ = checkpoint
    ids = _ids(1, 12, 0)
    later = ids.clone()
    later[0, -1] = (later[0, -1] + 1 - 3) % (TOK_VOCAB - 3) + 3
    a, b = _hf_bidirectional_logits(hf, ids), _hf_bidirectional_logits(hf, later)
    assert (a[0, 0] - b[0, 0]).abs().max() > 1e-3, "changing a later token must change position 0"
    with torch.no_grad():
        causal = hf(input_ids=ids).logits
    assert (causal[0, 0] - a[0, 0]).abs().max() > 1e-3


def test_config_of_published_layout(checkpoint):
    kind, hf, path = checkpoint
    loaded = load_checkpoint(path, torch.float32, CPU)
    cfg, tok = loaded.config, loaded.tokenizer
    assert cfg.model_type == ("Dream" if kind == "dream" else "llada")
    assert cfg.logits_shift is (kind == "dream")
    assert cfg.rope_theta == (1_000_000.0 if kind == "dream" else 500_000.0)
    assert (cfg.num_heads, cfg.num_kv_heads, cfg.head_dim) == (4, 2, 16)
    assert cfg.vocab_size == HF_VOCAB
    assert cfg.tie_word_embeddings is hf.config.tie_word_embeddings
    assert cfg.qkv_bias is (kind == "dream")
    if cfg.tie_word_embeddings:
        assert loaded.model.lm_head.weight is loaded.model.embed_tokens.weight
    else:
        assert loaded.model.lm_head.weight.data_ptr() != loaded.model.embed_tokens.weight.data_ptr()
    # Special tokens resolved by name: Dream pads with <|endoftext|> (tokenizer_config.json),
    # LLaDA's mask is <|mdm_mask|>.
    mask_name = MASK_TOKEN if kind == "dream" else LLADA_MASK
    assert tok.mask_id == tok.token_to_id(mask_name)
    assert tok.token_to_id(EOT_TOKEN) in tok.stop_ids
    if kind == "dream":
        assert tok.pad_id == tok.token_to_id(EOT_TOKEN)


def test_logits_match_transformers(checkpoint):
    _, hf, path = checkpoint
    loaded = load_checkpoint(path, torch.float32, CPU)
    ids = _ids(2, 17, 1)
    with torch.no_grad():
        ours = loaded.model(ids)
    ref = _hf_bidirectional_logits(hf, ids)
    assert ours.shape == ref.shape == (2, 17, HF_VOCAB)
    diff = (ours - ref).abs().max().item()
    assert diff <= 1e-4, f"max |ours - transformers| = {diff}"


def test_padded_batch_matches_single_sequences(checkpoint):
    _, hf, path = checkpoint
    loaded = load_checkpoint(path, torch.float32, CPU)
    pad = loaded.tokenizer.pad_id
    lengths = [15, 9, 4]
    seqs = [_ids(1, n, 10 + i)[0] for i, n in enumerate(lengths)]
    t = max(lengths)
    batch = torch.full((len(seqs), t), pad)
    key_mask = torch.zeros(len(seqs), t, dtype=torch.bool)
    for i, s in enumerate(seqs):
        batch[i, : len(s)] = s
        key_mask[i, : len(s)] = True
    with torch.no_grad():
        padded = loaded.model(batch, key_mask=key_mask)
        for i, s in enumerate(seqs):
            alone = loaded.model(s[None])[0]
            diff = (padded[i, : len(s)] - alone).abs().max().item()
            assert diff <= 1e-5, f"sequence {i}: padded batch differs by {diff}"
    # and the same holds against transformers with a padding mask
    ref = _hf_bidirectional_logits(hf, batch, key_mask)
    for i, s in enumerate(seqs):
        assert (padded[i, : len(s)] - ref[i, : len(s)]).abs().max().item() <= 1e-4


class _PositionOracle(torch.nn.Module):
    """Logits that name their position: position i predicts ``vocab[i]`` with certainty."""

    def __init__(self, config, table: list[int]) -> None:
        super().__init__()
        self.config = config
        self.table = table
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t = x.shape
        logits = torch.full((b, t, self.config.vocab_size), -20.0)
        logits[:, torch.arange(t), torch.tensor(self.table[:t])] = 20.0
        return logits


def test_sampler_applies_logit_shift_for_dream_only(checkpoint):
    kind, _, path = checkpoint
    loaded = load_checkpoint(path, torch.float32, CPU)
    tok = loaded.tokenizer
    table = list(range(100, 100 + 16))  # ordinary (non-special) tokens
    oracle = _PositionOracle(loaded.config, table)
    canvas = Canvas(prefix_ids=_ids(1, 5, 3)[0].tolist(), suffix_ids=_ids(1, 3, 4)[0].tolist(),
                    span_len=4, heal_bytes=b"", trimmed=False)
    result = reference_infill(oracle, tok, canvas, InfillOptions(sampler="reference"))
    start = canvas.span_start
    if kind == "dream":  # position i predicts token i+1: span offset j reads position start+j-1
        assert result.token_ids == table[start - 1: start + 3]
    else:
        assert result.token_ids == table[start: start + 4]
    # the primitive itself
    logits = torch.arange(6.0).view(1, 3, 2)
    assert torch.equal(shift_logits(logits, False), logits)
    assert torch.equal(shift_logits(logits, True)[0, 1:], logits[0, :2])
