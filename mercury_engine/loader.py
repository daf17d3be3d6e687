"""Checkpoint loading: a local directory, the embedded default, or a Hugging Face hub id.

Hugging Face style directories: ``config.json``, ``model.safetensors`` or sharded
``model-0000N-of-0000M.safetensors`` with ``model.safetensors.index.json``, ``tokenizer.json``
(+ ``tokenizer_config.json`` / ``generation_config.json``). safetensors only.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file

from mercury_engine.config import LAYOUT_LLADA, LAYOUT_QWEN2, ConfigError, ModelConfig
from mercury_engine.errors import CheckpointError, UnsupportedModelError
from mercury_engine.model import Transformer
from mercury_engine.tokenizer import Tokenizer

EMBEDDED_DIR = Path(__file__).parent / "models" / "mercury-coder-tiny"
META_INIT_MIN_PARAMS = 100_000_000  # above this, init on the meta device (random init would cost seconds)


@dataclass
class LoadedModel:
    model: Transformer
    tokenizer: Tokenizer
    config: ModelConfig
    path: Path


def resolve_model_path(model: str | os.PathLike | None) -> Path:
    """``None`` -> the embedded default; an existing directory -> itself; else a hub id."""
    if model is None:
        if not (EMBEDDED_DIR / "config.json").is_file():
            raise CheckpointError(f"the embedded default model is missing from {EMBEDDED_DIR}; "
                                  "reinstall the package or pass --model")
        return EMBEDDED_DIR
    path = Path(model).expanduser()
    if path.exists():
        if not path.is_dir():
            raise CheckpointError(f"{path}: a model is a directory with config.json, not a file")
        return path
    text = str(model)
    if re.fullmatch(r"[\w.-]+/[\w.-]+", text):
        return _from_hub(text)
    raise CheckpointError(f"{text}: no such model directory (and not a hub id like 'org/name')")


def _from_hub(repo_id: str) -> Path:
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency
        raise CheckpointError(f"{repo_id}: huggingface_hub is not installed") from None
    patterns = ["*.json", "*.safetensors", "*.md"]
    try:
        return Path(snapshot_download(repo_id, allow_patterns=patterns, local_files_only=True))
    except LocalEntryNotFoundError:
        pass
    except Exception as exc:  # pragma: no cover - depends on the cache layout
        raise CheckpointError(f"{repo_id}: cannot read from the local hub cache ({exc})") from None
    if _hub_offline():
        raise CheckpointError(f"{repo_id}: no such local directory, and not in the local Hugging Face "
                              "cache while offline (HF_HUB_OFFLINE is set); download it on a connected "
                              "machine or pass a local model directory")
    try:
        return Path(snapshot_download(repo_id, allow_patterns=patterns))
    except Exception as exc:
        raise CheckpointError(f"{repo_id}: no such local directory, and not in the local Hugging Face "
                              f"cache and could not be downloaded (offline?): {type(exc).__name__}: {exc}") from None


def _hub_offline() -> bool:
    """HF_HUB_OFFLINE as huggingface_hub reads it (1/ON/YES/TRUE), now or at its import."""
    from huggingface_hub import constants

    flags = (os.environ.get("HF_HUB_OFFLINE"), os.environ.get("TRANSFORMERS_OFFLINE"))
    return any((v or "").upper() in {"1", "ON", "YES", "TRUE"} for v in flags) or bool(constants.HF_HUB_OFFLINE)


def read_config(path: Path) -> ModelConfig:
    cfg_file = path / "config.json"
    if not cfg_file.is_file():
        raise CheckpointError(f"{path}: no config.json (not a model directory)")
    try:
        raw = json.loads(cfg_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{cfg_file}: not valid JSON ({exc})") from None
    try:
        return ModelConfig.from_hf_dict(raw)
    except ConfigError as exc:
        if "unsupported model_type" in str(exc):
            raise UnsupportedModelError(f"{path}: {exc}") from None
        raise CheckpointError(f"{cfg_file}: {exc}") from None


def read_state_dict(path: Path) -> dict[str, torch.Tensor]:
    index = path / "model.safetensors.index.json"
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        except (OSError, KeyError, TypeError, json.JSONDecodeError) as exc:
            raise CheckpointError(f"{index}: not a safetensors index ({exc})") from None
        files = sorted(set(weight_map.values()))
    else:
        files = sorted(p.name for p in path.glob("*.safetensors"))
    if not files:
        bins = [p.name for p in path.glob("*.bin")] + [p.name for p in path.glob("*.pt")]
        hint = f" (found {', '.join(bins)}: only safetensors are loaded)" if bins else ""
        raise CheckpointError(f"{path}: no *.safetensors weights{hint}")
    state: dict[str, torch.Tensor] = {}
    for name in files:
        f = path / name
        if not f.is_file():
            raise CheckpointError(f"{path}: shard {name} named by the index is missing")
        try:
            state.update(load_file(str(f)))
        except (SafetensorError, OSError, ValueError) as exc:
            raise CheckpointError(f"{f}: corrupt safetensors file ({exc})") from None
    return state


_LLADA_RULES = [
    (r"^model\.transformer\.wte\.weight$", "embed_tokens.weight"),
    (r"^model\.transformer\.ln_f\.weight$", "norm.weight"),
    (r"^model\.transformer\.ff_out\.weight$", "lm_head.weight"),
    (r"^model\.transformer\.blocks\.(\d+)\.attn_norm\.weight$", r"layers.\1.input_layernorm.weight"),
    (r"^model\.transformer\.blocks\.(\d+)\.ff_norm\.weight$", r"layers.\1.post_attention_layernorm.weight"),
    (r"^model\.transformer\.blocks\.(\d+)\.(q|k|v)_proj\.(weight|bias)$", r"layers.\1.self_attn.\2_proj.\3"),
    (r"^model\.transformer\.blocks\.(\d+)\.attn_out\.weight$", r"layers.\1.self_attn.o_proj.weight"),
    (r"^model\.transformer\.blocks\.(\d+)\.ff_proj\.weight$", r"layers.\1.mlp.gate_proj.weight"),
    (r"^model\.transformer\.blocks\.(\d+)\.up_proj\.weight$", r"layers.\1.mlp.up_proj.weight"),
    (r"^model\.transformer\.blocks\.(\d+)\.ff_out\.weight$", r"layers.\1.mlp.down_proj.weight"),
]


def remap_state_dict(state: dict[str, torch.Tensor], cfg: ModelConfig) -> dict[str, torch.Tensor]:
    """Checkpoint tensor names -> ``Transformer`` parameter names."""
    out: dict[str, torch.Tensor] = {}
    for name, tensor in state.items():
        if cfg.layout == LAYOUT_QWEN2:
            new = name[len("model."):] if name.startswith("model.") else name
        elif cfg.layout == LAYOUT_LLADA:
            new = None
            for pattern, repl in _LLADA_RULES:
                if re.match(pattern, name):
                    new = re.sub(pattern, repl, name)
                    break
            if new is None:
                raise CheckpointError(f"unexpected tensor {name!r} in a LLaDA checkpoint")
        else:  # pragma: no cover - guarded by ModelConfig
            raise UnsupportedModelError(f"unknown parameter layout {cfg.layout!r}")
        if new.endswith("rotary_emb.inv_freq"):
            continue
        out[new] = tensor
    return out


def build_model(cfg: ModelConfig, state: dict[str, torch.Tensor], dtype: torch.dtype,
                device: torch.device) -> Transformer:
    if cfg.num_parameters > META_INIT_MIN_PARAMS:  # big: never allocate twice
        with torch.device("meta"):
            model = Transformer(cfg)
    else:  # small: plain init is cheap, and meta init imports sympy (~150 MB of RSS)
        model = Transformer(cfg)
    expected = dict(model.state_dict())
    if cfg.tie_word_embeddings:
        state.pop("lm_head.weight", None)
        expected.pop("lm_head.weight", None)
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing or unexpected:
        raise CheckpointError("weights do not match the config: "
                              f"missing {missing[:5]}{'...' if len(missing) > 5 else ''}, "
                              f"unexpected {unexpected[:5]}{'...' if len(unexpected) > 5 else ''}")
    for name, param in expected.items():
        if tuple(state[name].shape) != tuple(param.shape):
            raise CheckpointError(f"tensor {name}: shape {tuple(state[name].shape)} in the checkpoint, "
                                  f"{tuple(param.shape)} expected from config.json")
    model = model.to_empty(device=device)
    model.load_state_dict({k: v.to(dtype) for k, v in state.items()}, strict=False, assign=False)
    if cfg.tie_word_embeddings:
        model.lm_head.weight = model.embed_tokens.weight
    # Non-persistent buffers (rotary tables) were on meta: rebuild them.
    model.rotary = type(model.rotary)(cfg.head_dim, cfg.max_position_embeddings, cfg.rope_theta).to(device)
    return model.to(dtype=dtype).eval()


def load_checkpoint(model: str | os.PathLike | None, dtype: torch.dtype,
                    device: torch.device) -> LoadedModel:
    path = resolve_model_path(model)
    cfg = read_config(path)
    tokenizer = Tokenizer.from_dir(path, cfg)
    n_ids = len(tokenizer.token_bytes)  # highest token id + 1, added tokens included
    if n_ids > cfg.vocab_size:
        raise CheckpointError(f"{path}: tokenizer.json has token ids up to {n_ids - 1} but the model has "
                              f"only {cfg.vocab_size} embeddings (a tokenizer of another model?)")
    state = remap_state_dict(read_state_dict(path), cfg)
    net = build_model(cfg, state, dtype, device)
    return LoadedModel(net, tokenizer, cfg, path)


def save_checkpoint(model: Transformer, tokenizer_json: str, path: str | os.PathLike,
                    extra_files: dict[str, str] | None = None) -> Path:
    """Write the embedded (``"mercury"``) format: config.json, model.safetensors, tokenizer.json.

    Files are written to temporary names and renamed, so a reader never sees a half-written
    checkpoint.
    """
    from safetensors.torch import save_file

    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    cfg = model.config
    state = {f"model.{k}": v.detach().to("cpu").contiguous()
             for k, v in model.state_dict().items()
             if not (cfg.tie_word_embeddings and k == "lm_head.weight")}
    if not cfg.tie_word_embeddings:
        state["lm_head.weight"] = state.pop("model.lm_head.weight")
    files = {"config.json": json.dumps(cfg.to_hf_dict(), indent=2) + "\n",
             "tokenizer.json": tokenizer_json, **(extra_files or {})}
    tmp_weights = out / "model.safetensors.tmp"
    save_file(state, str(tmp_weights), metadata={"format": "pt"})
    os.replace(tmp_weights, out / "model.safetensors")
    for name, text in files.items():
        tmp = out / (name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out / name)
    return out
