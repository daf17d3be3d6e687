"""A training run's model and its directory on disk: the transformer a run's settings build and
its initial weights, the settings a run directory was started with, the shape of what
``init_from`` names (a run or a model directory), and a run's weights exported as an engine
model directory. Used by the budgeted trainer (``budget``) and the ``train`` commands."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import torch

from mercury_engine.config import ModelConfig
from mercury_engine.errors import CheckpointError
from mercury_engine.loader import save_checkpoint
from mercury_engine.model import Transformer
from mercury_train.bpe import MASK_TOKEN, PAD_TOKEN
from mercury_train.recipe import RunConfig


def init_weights(model: Transformer, seed: int) -> None:
    """N(0, 0.02), the residual branches' output projections scaled by 1/sqrt(2 * layers)."""
    gen = torch.Generator().manual_seed(seed)
    for name, p in model.named_parameters():
        if p.dim() >= 2:
            std = 0.02 / math.sqrt(2 * model.config.num_layers) if name.endswith(("o_proj.weight", "down_proj.weight")) else 0.02
            with torch.no_grad():
                p.copy_(torch.randn(p.shape, generator=gen) * std)


def model_config(run: RunConfig, vocab_size: int, shift: bool) -> ModelConfig:
    s = run.shape
    return ModelConfig(vocab_size=vocab_size, hidden_size=s.hidden_size, intermediate_size=s.intermediate_size,
                       num_layers=s.num_layers, num_heads=s.num_heads, num_kv_heads=s.num_kv_heads,
                       head_dim=s.hidden_size // s.num_heads, max_position_embeddings=s.max_position_embeddings,
                       rope_theta=s.rope_theta, tie_word_embeddings=True, logits_shift=shift,
                       model_type="mercury", mask_token=MASK_TOKEN, pad_token=PAD_TOKEN,
                       context_tokens=min(s.max_position_embeddings, int(run.seq_len * 1.2)))



# ---------------------------------------------------------------------------- a run on disk
def source_shape(src: Path):
    """The shape of what ``init_from`` names: a run directory, or a model directory."""
    from mercury_train.recipe import ModelShape

    src = Path(src)
    if (src / "state.pt").is_file() or not (src / "config.json").is_file():
        return load_run_config(src).shape
    from mercury_engine.loader import read_config

    cfg = read_config(src)
    return ModelShape(hidden_size=cfg.hidden_size, num_layers=cfg.num_layers, num_heads=cfg.num_heads,
                      num_kv_heads=cfg.num_kv_heads, intermediate_size=cfg.intermediate_size,
                      max_position_embeddings=cfg.max_position_embeddings, rope_theta=cfg.rope_theta)


def load_run_config(run_dir: Path) -> RunConfig:
    """The settings a run directory was started with (its ``run_config.json``)."""
    from mercury_train.recipe import ModelShape, Recipe

    run_dir = Path(run_dir)
    path = run_dir / "run_config.json"
    if not (run_dir / "state.pt").is_file() or not path.is_file():
        raise CheckpointError(f"{run_dir}: no run there (the budgeted trainer's state.pt and run_config.json)")
    raw = json.loads(path.read_text(encoding="utf-8"))
    return RunConfig(**{**raw, "recipe": Recipe(**raw["recipe"]), "shape": ModelShape(**raw["shape"])})


def export_run(run_dir: Path, tokenizer: Path, out: Path, model_card: str | None = None) -> Path:
    """A run's latest state -> an engine model directory (fp32): the EMA's weights when the
    recipe keeps one (what the run would ship), else the raw weights."""
    run = load_run_config(run_dir)
    state = torch.load(Path(run_dir) / "state.pt", map_location="cpu", weights_only=False)
    tok_text = Path(tokenizer).read_text(encoding="utf-8")
    if state.get("tokenizer_sha256", hashlib.sha256(tok_text.encode()).hexdigest()) != \
            hashlib.sha256(tok_text.encode()).hexdigest():
        raise CheckpointError(f"{tokenizer}: not the tokenizer run {run_dir} was trained with")
    vocab = state["model"]["embed_tokens.weight"].shape[0]
    model = Transformer(model_config(run, vocab, run.recipe.objective == "ar_mdlm"))
    model.load_state_dict(state["model"])
    if state.get("ema") is not None:
        with torch.no_grad():
            for p, shadow in zip(model.parameters(), state["ema"], strict=True):
                p.copy_(shadow)
    extra = {"MODEL_CARD.md": model_card} if model_card else None
    return save_checkpoint(model, tok_text, out, extra)
