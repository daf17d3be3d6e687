"""The training run's settings (no torch here: the command-line parser reads its defaults)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ModelShape:
    hidden_size: int = 256
    num_layers: int = 6
    num_heads: int = 4
    num_kv_heads: int = 2
    intermediate_size: int = 768
    max_position_embeddings: int = 1024
    rope_theta: float = 10000.0


@dataclass
class TrainConfig:
    data: str = str(Path.home() / ".cache/mercury-lsp/corpus")
    run_dir: str = str(Path.home() / ".cache/mercury-lsp/runs/embedded")
    shape: ModelShape = field(default_factory=ModelShape)
    seq_len: int = 320
    batch_size: int = 16
    lr: float = 1e-3
    min_lr_ratio: float = 0.1
    warmup_steps: int = 500
    weight_decay: float = 0.1
    total_tokens: int = 60_000_000  # the LR schedule's horizon
    infill_frac: float = 0.3  # share of infill-shaped rows at the end of the run
    infill_frac_start: float | None = None  # ramp linearly from this share (None: constant)
    pad_weight: float = 1.0  # loss weight of padding targets in infill rows
    weight_t_floor: float = 0.05  # cap the 1/t loss weight at 1/weight_t_floor (0: no cap)
    tail_frac: float = 0.0  # share of infill rows masked from a random cut to the span's end
    seed: int = 1234
    init_from: str | None = None  # a run directory whose last.pt starts this run (same shape)
    device: str = "auto"
    minutes: float = 0.0  # stop after this wall time (0 = until total_tokens)
    log_every: int = 20
    save_every_minutes: float = 5.0
    eval_every: int = 500
    threads: int = 0
    compile: bool = True  # torch.compile the forward (fuses the elementwise ops: ~2x on CPU)
