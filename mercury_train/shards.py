"""Sharded bf16 weights (what a GPU run sends back) and their export into a model directory.

A shard set is ``model-0000k-of-0000n.safetensors`` files of at most ``max_bytes`` each plus
``model.safetensors.index.json``: the Hugging Face index (``weight_map``) whose ``metadata``
also holds each shard's SHA-256, the model's ``config.json`` and the SHA-256 of the tokenizer
it was trained with. ``export_shards`` checks all of that before it writes anything.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from mercury_engine.config import ConfigError, ModelConfig
from mercury_engine.errors import CheckpointError
from mercury_engine.loader import save_checkpoint
from mercury_engine.model import Transformer

INDEX = "model.safetensors.index.json"
MAX_SHARD_BYTES = 16 * 2**20 - 2**16  # what one file may bring back (16 MiB), less header room


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_shards(state: dict[str, torch.Tensor], out: Path, config: dict, tokenizer_sha256: str,
                 max_bytes: int = MAX_SHARD_BYTES, dtype: torch.dtype = torch.bfloat16,
                 extra: dict | None = None) -> list[Path]:
    """Greedy, in name order: a shard is closed when the next tensor would overflow it."""
    out.mkdir(parents=True, exist_ok=True)
    groups: list[dict[str, torch.Tensor]] = [{}]
    size = 0
    for name in sorted(state):
        t = state[name].detach().to("cpu", dtype).contiguous()
        nbytes = t.numel() * t.element_size()
        if nbytes > max_bytes:
            raise ValueError(f"tensor {name} ({nbytes} bytes) is larger than one shard ({max_bytes})")
        if groups[-1] and size + nbytes > max_bytes:
            groups.append({})
            size = 0
        groups[-1][name] = t
        size += nbytes
    files, weight_map, digests = [], {}, {}
    for i, group in enumerate(groups):
        name = f"model-{i + 1:05d}-of-{len(groups):05d}.safetensors"
        tmp = out / (name + ".tmp")
        save_file(group, str(tmp), metadata={"format": "pt"})
        os.replace(tmp, out / name)
        digests[name] = sha256_file(out / name)
        weight_map.update({k: name for k in group})
        files.append(out / name)
    meta = {"total_size": sum(t.numel() * t.element_size() for g in groups for t in g.values()),
            "sha256": digests, "config": config, "tokenizer_sha256": tokenizer_sha256, **(extra or {})}
    tmp = out / (INDEX + ".tmp")
    tmp.write_text(json.dumps({"metadata": meta, "weight_map": weight_map}, indent=2) + "\n")
    os.replace(tmp, out / INDEX)
    return files


def read_shards(src: Path) -> tuple[dict[str, torch.Tensor], dict]:
    """(state dict, index metadata), every shard present and matching its recorded SHA-256."""
    index = Path(src) / INDEX
    if not index.is_file():
        raise CheckpointError(f"{src}: no {INDEX} (not a shard set written by a training run)")
    try:
        raw = json.loads(index.read_text(encoding="utf-8"))
        weight_map, meta = raw["weight_map"], raw["metadata"]
        digests = meta["sha256"]
    except (OSError, KeyError, TypeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{index}: not a shard index ({exc})") from None
    names = sorted(set(weight_map.values()))
    missing = [n for n in names if not (Path(src) / n).is_file()]
    if missing:
        raise CheckpointError(f"{src}: missing shard(s) {', '.join(missing)} of {len(names)}")
    state: dict[str, torch.Tensor] = {}
    for n in names:
        if sha256_file(Path(src) / n) != digests.get(n):
            raise CheckpointError(f"{src}/{n}: corrupt shard (SHA-256 differs from the index's)")
        try:
            state.update(load_file(str(Path(src) / n)))
        except (SafetensorError, OSError, ValueError) as exc:
            raise CheckpointError(f"{src}/{n}: corrupt shard ({exc})") from None
    absent = sorted(set(weight_map) - set(state))
    if absent:
        raise CheckpointError(f"{src}: tensors named by the index are absent: {absent[:5]}")
    return state, meta


def export_shards(src: Path, tokenizer_json: Path, out: Path, model_card: str | None = None,
                  context_tokens: int | None = None) -> Path:
    """A verified shard set -> an engine model directory (config.json, model.safetensors,
    tokenizer.json[, MODEL_CARD.md]), written atomically file by file."""
    state, meta = read_shards(src)
    tok_text = Path(tokenizer_json).read_text(encoding="utf-8")
    if hashlib.sha256(tok_text.encode()).hexdigest() != meta.get("tokenizer_sha256"):
        raise CheckpointError(f"{tokenizer_json}: not the tokenizer these weights were trained with "
                              "(SHA-256 differs from the shard index's)")
    try:
        cfg = ModelConfig.from_hf_dict(meta["config"])
    except (KeyError, ConfigError) as exc:
        raise CheckpointError(f"{src}/{INDEX}: no usable model config ({exc})") from None
    if context_tokens is not None:
        cfg = cfg.replace(context_tokens=context_tokens)
    model = Transformer(cfg)
    if cfg.tie_word_embeddings:
        state.setdefault("lm_head.weight", state["embed_tokens.weight"])
    try:
        model.load_state_dict({k: v.float() for k, v in state.items()}, strict=True)
    except RuntimeError as exc:
        raise CheckpointError(f"{src}: weights do not match the config ({str(exc).splitlines()[0]})") from None
    model = model.to(torch.bfloat16)
    extra = {"MODEL_CARD.md": model_card} if model_card else None
    return save_checkpoint(model, tok_text, out, extra)
