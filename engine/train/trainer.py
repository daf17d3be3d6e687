"""Masked-diffusion training of the embedded model: resumable, seeded, bf16 autocast, CPU or CUDA.

A run lives in a directory: ``last.pt`` (model, optimiser, step, tokens seen, RNG states —
written atomically), ``log.jsonl`` (one line per log interval: the learning curve) and
``train_config.json``. Running again with the same directory resumes.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from engine.config import ModelConfig
from engine.loader import save_checkpoint
from engine.model import Transformer
from engine.train.bpe import MASK_TOKEN, PAD_TOKEN
from engine.train.config import TrainConfig
from engine.train.corpus import iter_text
from engine.train.examples import Batch, ExampleMaker
from engine.train.tokens import load_tokenizer, load_tokens


def _device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def model_config(cfg: TrainConfig, vocab_size: int) -> ModelConfig:
    s = cfg.shape
    return ModelConfig(vocab_size=vocab_size, hidden_size=s.hidden_size, intermediate_size=s.intermediate_size,
                       num_layers=s.num_layers, num_heads=s.num_heads, num_kv_heads=s.num_kv_heads,
                       head_dim=s.hidden_size // s.num_heads, max_position_embeddings=s.max_position_embeddings,
                       rope_theta=s.rope_theta, tie_word_embeddings=True, model_type="mercury",
                       mask_token=MASK_TOKEN, pad_token=PAD_TOKEN)


def lr_at(cfg: TrainConfig, step: int, tokens: int) -> float:
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    progress = min(1.0, tokens / cfg.total_tokens)
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))


def infill_share(cfg: TrainConfig, tokens: int) -> float:
    """The share of infill-shaped rows at ``tokens`` seen: a linear ramp (a curriculum that
    learns the language from plain masked diffusion first, then the infilling task)."""
    if cfg.infill_frac_start is None:
        return cfg.infill_frac
    progress = min(1.0, tokens / cfg.total_tokens)
    return cfg.infill_frac_start + (cfg.infill_frac - cfg.infill_frac_start) * progress


def init_weights(model: Transformer, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    for name, p in model.named_parameters():
        if p.dim() >= 2:
            std = 0.02 / math.sqrt(2 * model.config.num_layers) if name.endswith(("o_proj.weight", "down_proj.weight")) else 0.02
            with torch.no_grad():
                p.copy_(torch.randn(p.shape, generator=gen) * std)


def _masked_logits(model: Transformer, batch: Batch, device: torch.device, autocast: bool,
                   forward_hidden=None, skip_id: int | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Logits [M, V] and targets [M] at the batch's masked positions (``skip_id`` targets left
    out), plus the boolean [B, L] selection; only those positions reach the LM head."""
    inputs = torch.from_numpy(batch.inputs).to(device)
    targets = torch.from_numpy(batch.tokens).to(device)
    key_mask = torch.from_numpy(batch.key_mask).to(device)
    masked = torch.from_numpy(batch.masked).to(device)
    if skip_id is not None:
        masked = masked & (targets != skip_id)
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
        fwd = forward_hidden or model.forward_hidden
        hidden, _ = fwd(inputs, key_mask=None if bool(key_mask.all()) else key_mask)
        logits = model.lm_head(hidden[masked]).float()  # [M, V]
    return logits, targets[masked], masked


def diffusion_loss(model: Transformer, batch: Batch, device: torch.device, autocast: bool,
                   forward_hidden=None) -> torch.Tensor:
    logits, targets, masked = _masked_logits(model, batch, device, autocast, forward_hidden)
    weight = torch.from_numpy(batch.weight).to(device)
    ce = F.cross_entropy(logits, targets, reduction="none")  # [M]
    return (ce * weight[masked]).sum() / batch.inputs.shape[0]


@torch.no_grad()
def context_ce(model: Transformer, batch: Batch, device: torch.device, skip_id: int | None = None) -> float:
    """Plain mean cross-entropy on the masked tokens of a fixed-rate batch (``skip_id``
    targets, e.g. padding, left out): how well the model uses the context around a masked
    token. A model that ignores context (unigram) scores about 6.8 nats on plain windows."""
    logits, targets, _ = _masked_logits(model, batch, device, True, skip_id=skip_id)
    return float(F.cross_entropy(logits, targets))


class Trainer:
    def __init__(self, cfg: TrainConfig) -> None:
        self.cfg = cfg
        self.run = Path(cfg.run_dir)
        self.run.mkdir(parents=True, exist_ok=True)
        self.device = _device(cfg.device)
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        data = Path(cfg.data)
        self.tokenizer = load_tokenizer(data)
        self.mask_id = self.tokenizer.token_to_id(MASK_TOKEN)
        self.pad_id = self.tokenizer.token_to_id(PAD_TOKEN)
        self.model_cfg = model_config(cfg, self.tokenizer.get_vocab_size())
        random.seed(cfg.seed)
        np.random.seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        self.model = Transformer(self.model_cfg).to(self.device)
        init_weights(self.model, cfg.seed)
        decay = [p for n, p in self.model.named_parameters() if p.dim() >= 2]
        no_decay = [p for n, p in self.model.named_parameters() if p.dim() < 2]
        self.opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                      {"params": no_decay, "weight_decay": 0.0}],
                                     lr=cfg.lr, betas=(0.9, 0.95), eps=1e-8,
                                     fused=self.device.type == "cuda")
        self.forward_hidden = torch.compile(self.model.forward_hidden) if cfg.compile else None
        self.step = 0
        self.tokens = 0
        self.elapsed = 0.0
        self._resume()
        self.maker = ExampleMaker(self.tokenizer, load_tokens(data, "train"),
                                  list(iter_text(data / "train.jsonl.gz")), cfg.seq_len, self.mask_id,
                                  self.pad_id, seed=cfg.seed + self.step, pad_weight=cfg.pad_weight,
                                  weight_t_floor=cfg.weight_t_floor, tail_frac=cfg.tail_frac)
        held = ExampleMaker(self.tokenizer, load_tokens(data, "heldout"),
                            list(iter_text(data / "heldout.jsonl.gz")), cfg.seq_len, self.mask_id,
                            self.pad_id, seed=99)
        self.eval_batches = [held.batch(cfg.batch_size, 1.0) for _ in range(4)]
        # Plain windows, 15 % masked: the collapse detector (stuck near unigram = not learning).
        self.context_batches = [held.batch(cfg.batch_size, 0.0, t=0.15) for _ in range(4)]
        # Infill rows with the whole span masked, scored on the middle's tokens only.
        self.middle_batches = [held.batch(cfg.batch_size, 1.0, t=1.0) for _ in range(4)]

    # ------------------------------------------------------------------ state
    def _resume(self) -> None:
        ckpt = self.run / "last.pt"
        if not ckpt.exists():
            (self.run / "train_config.json").write_text(json.dumps(asdict(self.cfg), indent=2) + "\n")
            if self.cfg.init_from is None:
                return
            ckpt = Path(self.cfg.init_from) / "last.pt"  # a new run continuing another one
        state = torch.load(ckpt, map_location=self.device, weights_only=False)
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["optimizer"])
        self.step, self.tokens, self.elapsed = state["step"], state["tokens"], state.get("elapsed", 0.0)
        torch.set_rng_state(state["torch_rng"])
        print(f"resumed {ckpt}: step {self.step}, {self.tokens / 1e6:.1f}M tokens seen")

    def save(self) -> None:
        tmp = self.run / "last.pt.tmp"
        torch.save({"model": self.model.state_dict(), "optimizer": self.opt.state_dict(), "step": self.step,
                    "tokens": self.tokens, "elapsed": self.elapsed, "torch_rng": torch.get_rng_state(),
                    "model_config": self.model_cfg.to_hf_dict()}, tmp)
        os.replace(tmp, self.run / "last.pt")

    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        self.model.eval()
        losses = [float(diffusion_loss(self.model, b, self.device, True)) for b in self.eval_batches]
        ctx = [context_ce(self.model, b, self.device) for b in self.context_batches]
        mid = [context_ce(self.model, b, self.device, skip_id=self.pad_id) for b in self.middle_batches]
        self.model.train()
        return {"heldout_loss": sum(losses) / len(losses), "heldout_context_ce": sum(ctx) / len(ctx),
                "heldout_middle_ce": sum(mid) / len(mid)}

    # ------------------------------------------------------------------ loop
    def fit(self) -> dict:
        cfg = self.cfg
        self.model.train()
        start = time.perf_counter()
        start_elapsed = self.elapsed
        last_save = start
        window_tokens, window_t0, window_loss = 0, time.perf_counter(), 0.0
        bar = tqdm(total=cfg.total_tokens, initial=self.tokens, unit="tok", unit_scale=True, dynamic_ncols=True)
        log = (self.run / "log.jsonl").open("a", encoding="utf-8")
        tok_s = 0.0
        try:
            while self.tokens < cfg.total_tokens:
                if cfg.minutes and time.perf_counter() - start > cfg.minutes * 60:
                    break
                batch = self.maker.batch(cfg.batch_size, infill_share(cfg, self.tokens))
                lr = lr_at(cfg, self.step, self.tokens)
                for g in self.opt.param_groups:
                    g["lr"] = lr
                loss = diffusion_loss(self.model, batch, self.device, True, self.forward_hidden)
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                self.opt.step()
                n = int(batch.key_mask.sum())
                self.step += 1
                self.tokens += n
                window_tokens += n
                window_loss += float(loss.detach())
                bar.update(n)
                if self.step % cfg.log_every == 0:
                    now = time.perf_counter()
                    tok_s = window_tokens / (now - window_t0)
                    rec = {"step": self.step, "tokens": self.tokens, "loss": window_loss / cfg.log_every,
                           "lr": lr, "tokens_per_s": tok_s,
                           "elapsed_s": start_elapsed + now - start}
                    if self.step % cfg.eval_every == 0:
                        rec.update(self.evaluate())
                    log.write(json.dumps(rec) + "\n")
                    log.flush()
                    bar.set_postfix(loss=f"{rec['loss']:.3f}", tok_s=f"{tok_s:,.0f}", lr=f"{lr:.1e}")
                    window_tokens, window_t0, window_loss = 0, now, 0.0
                if time.perf_counter() - last_save > cfg.save_every_minutes * 60:
                    self.elapsed = start_elapsed + time.perf_counter() - start
                    self.save()
                    last_save = time.perf_counter()
        finally:
            bar.close()
            log.close()
            self.elapsed = start_elapsed + time.perf_counter() - start
            self.save()
        return {"step": self.step, "tokens": self.tokens, "elapsed_s": self.elapsed, "tokens_per_s": tok_s}

    def export(self, out: Path, model_card: str | None = None) -> Path:
        self.save()
        return export_run(self.run, Path(self.cfg.data), out, model_card)


def export_run(run: Path, data: Path, out: Path, model_card: str | None = None) -> Path:
    """Write a run's latest checkpoint in the embedded format (weights only, fp32)."""
    state = torch.load(Path(run) / "last.pt", map_location="cpu", weights_only=False)
    cfg = ModelConfig.from_hf_dict(state["model_config"])
    if cfg.context_tokens is None:  # the budget it was trained for: windows of seq_len tokens (+20%)
        run_cfg = json.loads((Path(run) / "train_config.json").read_text())
        cfg = cfg.replace(context_tokens=min(cfg.max_position_embeddings, int(run_cfg["seq_len"] * 1.2)))
    model = Transformer(cfg)
    model.load_state_dict(state["model"])
    tokenizer_json = (Path(data) / "tokenizer.json").read_text(encoding="utf-8")
    extra = {"MODEL_CARD.md": model_card} if model_card else None
    return save_checkpoint(model, tokenizer_json, out, extra)
