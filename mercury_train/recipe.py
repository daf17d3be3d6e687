"""Settings of the budgeted trainer (mercury_train/budget.py): the recipe and the run.

Three recipe arms were compared at equal compute (benchmarks/results/recipes.md):

* ``mdlm`` — today's recipe: masked diffusion + infill rows, AdamW, cosine schedule;
* ``ar_mdlm`` — autoregressive fill-in-the-middle pre-training for a share ``ar_frac`` of the
  budget, then masked diffusion with shifted logits (Dream's adaptation);
* ``opt`` — masked diffusion + infill rows, Muon on the matrices, an EMA of the weights, a
  masking-rate floor, warm-up/stable/warm-down schedule.

No torch here: the command line reads these defaults without importing the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ModelShape:
    """The transformer's shape (its vocabulary comes from the tokenizer). The defaults are the
    embedded model's (mercury_engine/models/mercury-coder-tiny: 6.8 M parameters)."""

    hidden_size: int = 256
    num_layers: int = 6
    num_heads: int = 4
    num_kv_heads: int = 2
    intermediate_size: int = 768
    max_position_embeddings: int = 1024
    rope_theta: float = 10000.0


@dataclass
class Recipe:
    objective: str = "mdlm"  # "mdlm" or "ar_mdlm"
    ar_frac: float = 0.5  # ar_mdlm: share of the budget trained autoregressively
    optimizer: str = "muon"  # "adamw" or "muon"
    lr: float = 2e-3
    weight_decay: float = 0.1
    schedule: str = "wsd"  # "cosine" (to min_lr_ratio) or "wsd" (warm-up, stable, linear warm-down)
    warmup_frac: float = 0.03
    warmdown_frac: float = 0.3
    min_lr_ratio: float = 0.1
    ema_decay: float = 0.999  # 0: no EMA (the raw weights are exported)
    t_min: float = 0.1  # masking-rate floor: t ~ U(t_min, 1)
    weight_t_floor: float = 0.05
    infill_frac: float = 0.5
    tail_frac: float = 0.5
    max_pad: int = 64
    # Share of the diffusion rows that carry chunks retrieved from other files of the same
    # package before the prefix (mercury_train/retrieval.py; 0: none, the corpus needs no rows).
    retrieval_share: float = 0.0


ARMS = {
    "mdlm": Recipe(objective="mdlm", optimizer="adamw", lr=1e-3, schedule="cosine", ema_decay=0.0, t_min=0.0),
    "ar_mdlm": Recipe(objective="ar_mdlm", optimizer="adamw", lr=1e-3, schedule="cosine", ema_decay=0.0,
                      t_min=0.0),
    "opt": Recipe(),
}
# The measured winner of the equal-compute comparison (benchmarks/results/recipes.md): lowest
# held-out left-to-right span cross-entropy at the end of the budget. A tiny-compute result.
DEFAULT_ARM = "ar_mdlm"
# The one-call GPU run keeps an EMA of the weights whatever the arm, and ships it: the average
# does not change the training trajectory, only which weights are written.
GPU_EMA_DECAY = 0.999


# The CPU run (`mercury-lsp train fit`): the embedded model's shape, windows and batch.
CPU_SHAPE = ModelShape()
CPU_SEQ_LEN, CPU_BATCH_SIZE = 320, 16

# The shape of the one-call GPU run: ~29 M parameters, 59 MB of bf16 weights (4 shards).
GPU_SHAPE = ModelShape(hidden_size=512, num_layers=8, num_heads=8, num_kv_heads=4, intermediate_size=1536,
                       max_position_embeddings=1024)
# The CPU smoke run: the same code on a shape that trains in seconds.
SMOKE_SHAPE = ModelShape(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64,
                         max_position_embeddings=128)


@dataclass
class RunConfig:
    run_dir: str
    recipe: Recipe = field(default_factory=Recipe)
    shape: ModelShape = field(default_factory=lambda: GPU_SHAPE)
    seq_len: int = 512
    batch_size: int = 256
    minutes: float = 6.0  # the training budget (wall clock); the schedule spans it
    max_tokens: int = 0  # or a token budget (0: none); whichever ends first ends the run
    device: str = "cuda"
    compile: str = "auto"  # "auto": measured against eager in the run, kept only if faster
    precision: str = "auto"  # "auto", "bf16" or "fp32": the forward's autocast (budget.autocast_dtype)
    seed: int = 1234
    log_every: int = 25  # steps
    eval_every_s: float = 30.0
    save_every_s: float = 60.0
    eval_batches: int = 4
    init_from: str | None = None  # a run directory whose weights start this run (same shape)
