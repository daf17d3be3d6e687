"""A tiny masked-diffusion model trained inside a test, for tests that need a model that prefers
something (tests/test_sampler.py, tests/test_engine_edit.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import torch
import torch.nn.functional as F
from tokenizers import Tokenizer as HFTokenizer
from torch import Tensor

from mercury_engine import Engine
from mercury_engine.config import ModelConfig
from mercury_engine.loader import save_checkpoint
from mercury_engine.model import Transformer
from mercury_engine.tokenizer import Tokenizer
from mercury_train.bpe import MASK_TOKEN, PAD_TOKEN, train_bpe

# One training batch: token ids [B, T]; the positions to mask and predict [B, T] bool; the key
# mask [B, T] bool (False hides a padding position from attention) or None.
Batch = tuple[Tensor, Tensor, Tensor | None]


class ToyVocab(NamedTuple):
    hf: HFTokenizer
    config: ModelConfig
    tok: Tokenizer


def toy_vocab() -> ToyVocab:
    """A byte-level tokenizer (3 specials + 256 bytes, no merges: one token per character) and
    the toy model's config."""
    hf = train_bpe(["abc"], 259)
    cfg = ModelConfig(vocab_size=hf.get_vocab_size(), hidden_size=64, intermediate_size=128, num_layers=2,
                      num_heads=4, num_kv_heads=2, head_dim=16, max_position_embeddings=64,
                      tie_word_embeddings=False, mask_token=MASK_TOKEN, pad_token=PAD_TOKEN)
    return ToyVocab(hf, cfg, Tokenizer.from_tokenizer(hf, cfg))


def train_toy(vocab: ToyVocab, batch: Callable[[], Batch], steps: int, out_dir: Path, lr: float = 5e-3) -> Engine:
    """A fresh model (torch seeded with 0) trained for ``steps`` AdamW steps on ``batch()``
    (warm-up over 20 steps, then linear decay), saved to ``out_dir`` and loaded as a float32
    CPU Engine."""
    torch.manual_seed(0)
    model = Transformer(vocab.config)
    with torch.no_grad():
        model.lm_head.weight.normal_(0, 0.02)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    for step in range(steps):
        ids, masked, key_mask = batch()
        x = torch.where(masked, torch.full_like(ids, vocab.tok.mask_id), ids)
        loss = F.cross_entropy(model(x, key_mask=key_mask)[masked], ids[masked])
        opt.zero_grad()
        loss.backward()
        opt.step()
        for g in opt.param_groups:
            g["lr"] = lr * min(1.0, (step + 1) / 20) * (1 - step / steps)
    path = save_checkpoint(model.eval(), vocab.hf.to_str(), out_dir)
    return Engine.load(path, device="cpu", dtype="float32")
