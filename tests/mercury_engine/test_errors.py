"""Bad input gives a typed error with a clear message, never a crash or a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from mercury_engine import (
    CancelledError,
    CancelToken,
    CheckpointError,
    Engine,
    InvalidRequestError,
    TokenizerError,
    UnsupportedModelError,
)
from mercury_engine.loader import _hub_offline, load_checkpoint
from mercury_engine.options import InfillOptions
from mercury_train.testing import make_tiny_checkpoint

CPU = torch.device("cpu")


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "ckpt")


@pytest.fixture(scope="module")
def engine(tiny_dir) -> Engine:
    return Engine.load(tiny_dir, device="cpu", dtype="float32", context_tokens=64)


@pytest.fixture
def copy(tiny_dir, tmp_path) -> Path:
    """A private copy of the tiny checkpoint to break."""
    return Path(shutil.copytree(tiny_dir, tmp_path / "broken"))


def _load(path):
    return load_checkpoint(path, torch.float32, CPU)


def _edit_config(path: Path, **changes) -> None:
    cfg = json.loads((path / "config.json").read_text())
    cfg.update(changes)
    (path / "config.json").write_text(json.dumps(cfg))


# ---------------------------------------------------------------------------- checkpoints
def test_missing_directory(tmp_path):
    with pytest.raises(CheckpointError, match="no such model directory"):
        Engine.load(tmp_path / "nope", device="cpu")


def test_file_instead_of_directory(tmp_path):
    f = tmp_path / "model.safetensors"
    f.write_bytes(b"")
    with pytest.raises(CheckpointError, match="is a directory with config.json, not a file"):
        _load(f)


def test_directory_without_config(tmp_path):
    with pytest.raises(CheckpointError, match="no config.json"):
        _load(tmp_path)


def test_bad_json_config(copy):
    (copy / "config.json").write_text('{"model_type": "mercury", ')
    with pytest.raises(CheckpointError, match=r"config\.json: not valid JSON"):
        _load(copy)


def test_config_missing_field(copy):
    cfg = json.loads((copy / "config.json").read_text())
    del cfg["hidden_size"]
    (copy / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match="lacks field 'hidden_size'"):
        _load(copy)


@pytest.mark.parametrize("value", [None, "wide", [64]])
def test_config_field_of_wrong_type(copy, value):
    _edit_config(copy, hidden_size=value)
    with pytest.raises(CheckpointError, match="wrong type"):
        _load(copy)


def test_config_invalid_value(copy):
    _edit_config(copy, num_key_value_heads=3)
    with pytest.raises(CheckpointError, match="multiple of num_kv_heads"):
        _load(copy)


def test_unsupported_model_type(copy):
    _edit_config(copy, model_type="gpt2")
    with pytest.raises(UnsupportedModelError, match="unsupported model_type 'gpt2'; supported: Dream, llada"):
        _load(copy)


def test_scaled_rope_is_refused(copy):
    _edit_config(copy, rope_scaling={"rope_type": "yarn", "factor": 4.0})
    with pytest.raises(CheckpointError, match="RoPE scaling 'yarn' is not supported"):
        _load(copy)


def test_rope_theta_from_rope_parameters(copy):
    """transformers 5 writes rope_theta inside rope_parameters."""
    cfg = json.loads((copy / "config.json").read_text())
    del cfg["rope_theta"]
    cfg["rope_parameters"] = {"rope_type": "default", "rope_theta": 123456.0}
    (copy / "config.json").write_text(json.dumps(cfg))
    assert _load(copy).config.rope_theta == 123456.0


def test_truncated_safetensors(copy):
    weights = copy / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="corrupt safetensors"):
        _load(copy)


def test_garbage_safetensors(copy):
    (copy / "model.safetensors").write_bytes(b"\x00" * 7)
    with pytest.raises(CheckpointError, match="corrupt safetensors"):
        _load(copy)


def test_only_pytorch_bin_weights(copy):
    (copy / "model.safetensors").rename(copy / "pytorch_model.bin")
    with pytest.raises(CheckpointError, match="only safetensors are loaded"):
        _load(copy)


def test_index_names_missing_shard(copy):
    (copy / "model.safetensors").rename(copy / "model-00001-of-00002.safetensors")
    index = {"metadata": {}, "weight_map": {"model.norm.weight": "model-00001-of-00002.safetensors",
                                            "model.embed_tokens.weight": "model-00002-of-00002.safetensors"}}
    (copy / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(CheckpointError, match="shard model-00002-of-00002.safetensors named by the index is missing"):
        _load(copy)


def test_shape_mismatch(copy):
    _edit_config(copy, intermediate_size=96)
    with pytest.raises(CheckpointError, match=r"shape \(128, 64\) in the checkpoint, \(96, 64\) expected"):
        _load(copy)


def test_missing_tensors(copy):
    _edit_config(copy, num_hidden_layers=3)
    with pytest.raises(CheckpointError, match=r"weights do not match the config: missing \['layers\.2\."):
        _load(copy)


def test_missing_tokenizer(copy):
    (copy / "tokenizer.json").unlink()
    with pytest.raises(CheckpointError, match="no tokenizer.json"):
        _load(copy)


def test_corrupt_tokenizer(copy):
    (copy / "tokenizer.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="cannot be read as a tokenizer"):
        _load(copy)


def test_tokenizer_of_another_model(copy):
    """More token ids than embeddings: refused at load, not an IndexError at the first request."""
    from mercury_train.bpe import train_bpe
    from mercury_train.testing import _SAMPLE

    bigger = train_bpe(_SAMPLE * 4 + ["lorem ipsum dolor sit amet, consectetur adipiscing elit\n" * 4], 400)
    assert bigger.get_vocab_size() > 320
    (copy / "tokenizer.json").write_text(bigger.to_str())
    with pytest.raises(CheckpointError, match="only 320 embeddings"):
        _load(copy)


def test_tokenizer_without_mask_token(copy):
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = HFTokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(["x = 1\n"], trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    (copy / "tokenizer.json").write_text(tok.to_str())
    _edit_config(copy, mask_token=None)
    with pytest.raises(TokenizerError, match="no mask token.*a diffusion model needs one"):
        _load(copy)


def test_hub_id_offline_and_not_cached(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    # huggingface_hub read both at import: point it at the empty cache and keep it offline.
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.chdir(tmp_path)  # so "no-such-org/no-such-model" is not a local directory
    with pytest.raises(CheckpointError) as info:
        Engine.load("no-such-org/no-such-model", device="cpu")
    message = str(info.value)
    assert "no-such-org/no-such-model" in message
    assert "not in the local Hugging Face cache" in message and "HF_HUB_OFFLINE" in message


@pytest.mark.parametrize("value,offline", [("1", True), ("true", True), ("YES", True), ("0", False), ("", False)])
def test_hub_offline_flag_spellings(monkeypatch, value, offline):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", value)
    assert _hub_offline() is offline


# ---------------------------------------------------------------------------- requests
@pytest.mark.parametrize("max_tokens", [0, -3, 2.5, "8"])
def test_max_tokens_must_be_positive(engine, max_tokens):
    with pytest.raises(InvalidRequestError, match="max_tokens must be a positive integer"):
        engine.infill("x = ", "", options=InfillOptions(sampler="reference"), max_tokens=max_tokens)


@pytest.mark.parametrize("kwargs,match", [
    ({"steps": 0}, "steps must be a positive integer"),
    ({"temperature": -1.0}, "temperature must be a finite number"),
    ({"temperature": float("nan")}, "temperature must be a finite number"),
    ({"confidence": "vibes"}, "confidence must be one of"),
])
def test_bad_decode_options(engine, kwargs, match):
    with pytest.raises(InvalidRequestError, match=match):
        engine.infill("x = ", "", max_tokens=4, options=InfillOptions(sampler="reference", **kwargs))


def test_prefix_must_be_text(engine):
    with pytest.raises(InvalidRequestError, match="must be strings"):
        engine.infill(b"x = ", "", options=InfillOptions(sampler="reference"), max_tokens=4)


def test_context_overflow_is_trimmed(engine):
    prefix = "".join(f"value_{i} = compute({i})\n" for i in range(200))
    suffix = "".join(f"print(value_{i})\n" for i in range(200))
    result = engine.infill(prefix, suffix, options=InfillOptions(sampler="reference"), max_tokens=8)
    assert result.trimmed
    assert result.prompt_tokens + 8 + 1 <= engine.context_tokens
    assert result.steps >= 1
    big = engine.infill("x = ", "", options=InfillOptions(sampler="reference"), max_tokens=10_000)  # the span alone exceeds the context
    assert big.trimmed and len(big.token_ids) <= engine.context_tokens // 2
    small = engine.infill("x = ", "\n", options=InfillOptions(sampler="reference"), max_tokens=4)
    assert not small.trimmed


def test_cancelled_request(engine):
    token = CancelToken()
    token.cancel()
    with pytest.raises(CancelledError, match="cancelled"):
        engine.infill("x = ", "", options=InfillOptions(sampler="reference"), max_tokens=4, cancel=token)


def test_bad_device_and_dtype(tiny_dir):
    with pytest.raises(InvalidRequestError, match="unknown dtype"):
        Engine.load(tiny_dir, device="cpu", dtype="float8")
    with pytest.raises(InvalidRequestError, match="unknown device"):
        Engine.load(tiny_dir, device="tpu:9")
    if not torch.cuda.is_available():
        with pytest.raises(InvalidRequestError, match="no CUDA device"):
            Engine.load(tiny_dir, device="cuda")
