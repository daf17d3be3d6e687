"""Tiny models for tests and examples: random weights, a byte-level tokenizer, real format.

``make_tiny_checkpoint(dir)`` writes a complete embedded-format checkpoint that
``Engine.load(dir)`` loads in milliseconds; engine and server tests run on it without weights.
"""

from __future__ import annotations

from pathlib import Path

import torch

from mercury_engine.config import ModelConfig
from mercury_engine.loader import save_checkpoint
from mercury_engine.model import Transformer
from mercury_train.bpe import MASK_TOKEN, PAD_TOKEN, train_bpe

_SAMPLE = [
    "def add(a, b):\n    return a + b\n",
    "for i in range(10):\n    print(i)\n",
    "class Point:\n    def __init__(self, x, y):\n        self.x = x\n        self.y = y\n",
    "import os\nimport sys\n\nif __name__ == '__main__':\n    main()\n",
]


def tiny_tokenizer(vocab_size: int = 320):
    return train_bpe(_SAMPLE * 4, vocab_size)


def tiny_config(vocab_size: int, **overrides) -> ModelConfig:
    base = dict(vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_layers=2,
                num_heads=4, num_kv_heads=2, head_dim=16, max_position_embeddings=256,
                rope_theta=10000.0, tie_word_embeddings=True, model_type="mercury",
                mask_token=MASK_TOKEN, pad_token=PAD_TOKEN)
    base.update(overrides)
    return ModelConfig(**base)


def make_tiny_checkpoint(path: str | Path, seed: int = 0, **overrides) -> Path:
    tok = tiny_tokenizer()
    cfg = tiny_config(tok.get_vocab_size(), **overrides)
    torch.manual_seed(seed)
    model = Transformer(cfg)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0, 0.02)
    return save_checkpoint(model, tok.to_str(), path)
