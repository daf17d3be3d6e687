"""The budgeted trainer: one recipe (mercury_train/recipe.py) for a wall-clock or token budget.

The one training loop of the repository: used by ``mercury-lsp train fit`` (the CPU run),
the one-call GPU run (mercury_train/gpu_run.py) and its CPU smoke test, and the recipe
comparison (benchmarks/train/recipes.py). Batches are made on the device (mercury_train/batches.py); the loss is
taken over every position with per-position weights (static shapes: no host sync per step,
``torch.compile`` sees one graph). bf16 autocast, fused attention (``scaled_dot_product_attention``).

Resumable: ``state.pt`` in the run directory (model, optimisers, EMA, step, tokens, elapsed
time, the batch generator's state) is written atomically every ``save_every_s`` seconds and at
the end; a run started again with the same directory continues from it. ``log.jsonl`` holds
one line per log interval (loss, lr, tokens/s) and per evaluation. A new run can start from
another run's weights (``init_from``) under its own recipe, schedule and budget.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from mercury_engine.errors import CheckpointError
from mercury_engine.model import Transformer
from mercury_train.batches import BatchSpec, DeviceBatcher, TensorBatch, newline_table
from mercury_train.bpe import EOT_TOKEN, MASK_TOKEN, PAD_TOKEN
from mercury_train.optim import EMA, make_optimizers
from mercury_train.recipe import RunConfig
from mercury_train.retrieval import ROWS_FILE, RetrievalRows
from mercury_train.runs import init_weights, load_run_config, model_config, source_shape

COMPILE_PROBE_STEPS = 8  # timed steps per variant when compile="auto"
# Compiled steps not timed: the first compiles for the batch's shapes; on the CPU the second
# recompiles with the count of loss positions dynamic (it differs per batch). Timing them made
# the compiled CPU loss look 3x slower than eager (6.56 against 2.18 s/step) where its steady
# state is faster.
COMPILE_WARMUP_STEPS = 2
EVAL_SEED = 99


@dataclass
class TokenCorpus:
    """What the trainer reads: a prepared corpus directory's ``train.bin`` / ``heldout.bin``
    (uint16 token streams, each document ended by ``<|endoftext|>``: written by ``train
    prepare`` and by the one-call run's builder) and the tokenizer they were made with."""

    train: Tensor  # int32
    heldout: Tensor
    newline: Tensor  # [V] bool: ids whose text holds a line break
    vocab_size: int
    special: dict[str, int]  # mask, pad, eot
    tokenizer_json: str
    retrieval: RetrievalRows | None = None  # rows with retrieved chunks (``retrieval.npz``), when built

    @classmethod
    def load(cls, data: Path, tokenizer: Path | None = None) -> TokenCorpus:
        """``tokenizer``: the tokenizer file (default: the corpus's own ``tokenizer.json``)."""
        from tokenizers import Tokenizer

        data = Path(data)
        text = Path(tokenizer or data / "tokenizer.json").read_text(encoding="utf-8")
        tok = Tokenizer.from_str(text)
        vocab = tok.get_vocab_size()
        special = {"mask": tok.token_to_id(MASK_TOKEN), "pad": tok.token_to_id(PAD_TOKEN),
                   "eot": tok.token_to_id(EOT_TOKEN)}
        split = {s: torch.from_numpy(np.fromfile(data / f"{s}.bin", dtype=np.uint16).astype(np.int32))
                 for s in ("train", "heldout")}
        rows = RetrievalRows.load(data / ROWS_FILE) if (data / ROWS_FILE).is_file() else None
        return cls(split["train"], split["heldout"], newline_table(tok, vocab), vocab, special, text, rows)

    @property
    def tokenizer_sha256(self) -> str:
        return hashlib.sha256(self.tokenizer_json.encode()).hexdigest()


def forward_hidden(model: Transformer, idx: Tensor, causal: bool) -> Tensor:
    """[B, L, D] final hidden states; ``causal`` hides later positions (the autoregressive phase)."""
    if not causal:
        return model.forward_hidden(idx)[0]
    L = idx.shape[1]
    mask = torch.ones(L, L, dtype=torch.bool, device=idx.device).tril()
    pos = torch.arange(L, device=idx.device).expand_as(idx)
    x = model.embed_tokens(idx)
    rope = model.rotary(pos, x.dtype)
    for layer in model.layers:
        x, _ = layer(x, rope, mask, None)
    return model.norm(x)


def autocast_dtype(device: torch.device, precision: str) -> torch.dtype | None:
    """The autocast dtype of a run's forward pass; None: fp32. ``precision`` "auto": bf16 on CUDA,
    and on a CPU with native bf16 matrix units (AVX512-BF16 / AMX; without them bf16 is emulated
    and slower than fp32). On the embedded shape and 2 such cores bf16 steps are about 1.6x
    faster than fp32 eager, 2x compiled (``benchmarks/train/speed``)."""
    if precision == "fp32":
        return None
    if precision == "bf16" or device.type == "cuda":
        return torch.bfloat16
    return torch.bfloat16 if device.type == "cpu" and torch.ops.mkldnn._is_mkldnn_bf16_supported() else None


def weighted_ce(model: Transformer, batch: TensorBatch, causal: bool, shift: bool,
                amp: torch.dtype | None = None) -> Tensor:
    """Sum over positions of weight * cross-entropy, averaged over the batch's rows. With
    ``shift`` the output at position i scores the token at i + 1. ``amp``: the autocast dtype
    (``autocast_dtype``), None for fp32.

    On CUDA the head runs over every position (static shapes, no host sync). On the CPU only
    over the positions with a loss (a host sync costs nothing there); compiled, that count is a
    dynamic dimension after the second step."""
    cuda = batch.inputs.device.type == "cuda"
    with torch.autocast(batch.inputs.device.type, dtype=amp or torch.bfloat16, enabled=amp is not None):
        hidden = forward_hidden(model, batch.inputs, causal)
        targets, weight = batch.tokens, batch.weight
        if shift:
            hidden, targets, weight = hidden[:, :-1], targets[:, 1:], weight[:, 1:]
        if cuda:
            hidden, targets, weight = hidden.flatten(0, 1), targets.flatten(), weight.flatten()
        else:
            sel = weight > 0
            hidden, targets, weight = hidden[sel], targets[sel], weight[sel]
        logits = model.lm_head(hidden)
    ce = F.cross_entropy(logits.float(), targets, reduction="none")
    return (ce * weight).sum() / batch.inputs.shape[0]


class BudgetTrainer:
    def __init__(self, run: RunConfig, corpus: TokenCorpus) -> None:
        self.run = run
        self.dir = Path(run.run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.device = torch.device(run.device)
        self.amp = autocast_dtype(self.device, run.precision)
        self.tokenizer_sha256 = corpus.tokenizer_sha256
        r = run.recipe
        self.shift = r.objective == "ar_mdlm"
        torch.manual_seed(run.seed)
        self.model_cfg = model_config(run, corpus.vocab_size, self.shift)
        self.model = Transformer(self.model_cfg)
        init_weights(self.model, run.seed)
        self.model.to(self.device)
        self.opts = make_optimizers(self.model, r.optimizer, r.lr, r.weight_decay, self.device.type == "cuda")
        self.ema = EMA(self.model, r.ema_decay) if r.ema_decay else None
        special = corpus.special
        spec = BatchSpec(run.seq_len, special["mask"], special["pad"], special["eot"], max_pad=r.max_pad,
                         t_min=r.t_min, weight_t_floor=r.weight_t_floor, tail_frac=r.tail_frac, shift=self.shift)
        if r.retrieval_share > 0 and corpus.retrieval is None:
            raise CheckpointError(f"retrieval share {r.retrieval_share}: the corpus has no retrieval rows ({ROWS_FILE})")
        self.batcher = DeviceBatcher(corpus.train.to(self.device), corpus.newline, spec, run.seed,
                                     corpus.retrieval if r.retrieval_share > 0 else None)
        held = DeviceBatcher(corpus.heldout.to(self.device), corpus.newline, spec, EVAL_SEED)
        # Fixed held-out probes: plain windows 15 % masked, and infill spans fully masked.
        self.probes = {"heldout_ce": [held.diffusion(run.batch_size, 0.0, t=0.15) for _ in range(run.eval_batches)],
                       "heldout_span_ce": [held.diffusion(run.batch_size, 1.0, t=1.0)
                                           for _ in range(run.eval_batches)]}
        self.step = self.tokens = 0
        self.elapsed = 0.0
        self.compile_report: dict = {}
        self.loss_fn = weighted_ce
        self._resume()

    # ------------------------------------------------------------------ schedule
    def progress(self) -> float:
        p = [self.elapsed / (self.run.minutes * 60)] if self.run.minutes else []
        p += [self.tokens / self.run.max_tokens] if self.run.max_tokens else []
        return min(1.0, max(p)) if p else 0.0

    def phase_causal(self) -> bool:
        r = self.run.recipe
        return r.objective == "ar_mdlm" and self.progress() < r.ar_frac

    def lr(self) -> float:
        r, p = self.run.recipe, self.progress()
        if r.objective == "ar_mdlm":  # each phase gets its own warm-up and decay
            p = p / r.ar_frac if p < r.ar_frac else (p - r.ar_frac) / (1 - r.ar_frac)
        if p < r.warmup_frac:
            return r.lr * max(p / r.warmup_frac, 0.01)
        if r.schedule == "wsd":
            left = 1 - p
            return r.lr * (1.0 if left > r.warmdown_frac else max(left / r.warmdown_frac, r.min_lr_ratio * 0.1))
        q = (p - r.warmup_frac) / (1 - r.warmup_frac)
        return r.lr * (r.min_lr_ratio + (1 - r.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * q)))

    # ------------------------------------------------------------------ state
    def _resume(self) -> None:
        path = self.dir / "state.pt"
        if not path.exists():
            (self.dir / "run_config.json").write_text(json.dumps(asdict(self.run), indent=2) + "\n")
            if self.run.init_from:
                self._init_from(Path(self.run.init_from))
            return
        state = torch.load(path, map_location=self.device, weights_only=False)
        self.model.load_state_dict(state["model"])
        for opt, s in zip(self.opts, state["optimizers"], strict=True):
            opt.load_state_dict(s)
        if self.ema is not None:
            self.ema.load(state["ema"], state["step"])
        self.batcher.set_state(state["batcher"].cpu())
        self.step, self.tokens, self.elapsed = state["step"], state["tokens"], state["elapsed"]
        self.log({"event": "resumed", "step": self.step, "tokens": self.tokens})

    def _init_from(self, src: Path) -> None:
        """Start from another run's raw weights, or a model directory's (the embedded model: same
        shape, vocabulary, tokenizer and logit layout); the optimiser, schedule and budget are
        this run's own."""
        if not (src / "state.pt").is_file() and (src / "config.json").is_file():
            return self._init_from_model(src)
        source = load_run_config(src)
        if source.shape != self.run.shape:
            raise CheckpointError(f"{src}: its shape {asdict(source.shape)} differs from this run's")
        if (source.recipe.objective == "ar_mdlm") != self.shift:
            raise CheckpointError(f"{src}: its objective {source.recipe.objective!r} and this run's "
                                  f"{self.run.recipe.objective!r} lay out the logits differently (shifted or not)")
        state = torch.load(src / "state.pt", map_location=self.device, weights_only=False)
        if state.get("tokenizer_sha256", self.tokenizer_sha256) != self.tokenizer_sha256:
            raise CheckpointError(f"{src}: trained with another tokenizer than this run's corpus")
        self.model.load_state_dict(state["model"])
        if self.ema is not None:
            self.ema.load([p.detach().float() for p in self.model.parameters()], 0)
        self.log({"event": "init_from", "run": str(src), "source_step": state["step"],
                  "source_tokens": state["tokens"]})

    def _init_from_model(self, src: Path) -> None:
        from mercury_engine.loader import read_config, read_state_dict, remap_state_dict

        cfg = read_config(src)
        if (shape := source_shape(src)) != self.run.shape:
            raise CheckpointError(f"{src}: its shape {asdict(shape)} differs from this run's")
        if cfg.logits_shift != self.shift:
            raise CheckpointError(f"{src}: its logits are {'' if cfg.logits_shift else 'not '}shifted and this run's "
                                  f"objective {self.run.recipe.objective!r} lays them out the other way")
        tok = src / "tokenizer.json"
        if not tok.is_file() or hashlib.sha256(tok.read_text(encoding="utf-8").encode()).hexdigest() != self.tokenizer_sha256:
            raise CheckpointError(f"{src}: trained with another tokenizer than this run's corpus")
        state = remap_state_dict(read_state_dict(src), cfg)
        missing, unexpected = self.model.load_state_dict(state, strict=False)
        if unexpected or [k for k in missing if not (k == "lm_head.weight" and cfg.tie_word_embeddings)]:
            raise CheckpointError(f"{src}: its tensors do not fit this run's model ({(missing + unexpected)[:3]})")
        if self.ema is not None:
            self.ema.load([p.detach().float() for p in self.model.parameters()], 0)
        self.log({"event": "init_from", "model": str(src)})

    def save(self) -> None:
        tmp = self.dir / "state.pt.tmp"
        torch.save({"model": self.model.state_dict(), "optimizers": [o.state_dict() for o in self.opts],
                    "ema": self.ema.shadow if self.ema else None, "batcher": self.batcher.state(),
                    "step": self.step, "tokens": self.tokens, "elapsed": self.elapsed,
                    "tokenizer_sha256": self.tokenizer_sha256}, tmp)
        os.replace(tmp, self.dir / "state.pt")
        self.log({"event": "saved", "step": self.step, "tokens": self.tokens})

    def log(self, rec: dict) -> None:
        with (self.dir / "log.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")
        print(json.dumps(rec), flush=True)

    def final_state(self) -> dict[str, Tensor]:
        """The weights to ship: the EMA's when the recipe keeps one."""
        state = self.ema.state_dict(self.model) if self.ema else dict(self.model.state_dict())
        return {k: v.detach().cpu() for k, v in state.items()
                if not (self.model_cfg.tie_word_embeddings and k == "lm_head.weight")}

    # ------------------------------------------------------------------ evaluation
    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """Plain mean cross-entropy (nats/token) on the fixed held-out probes, with the weights
        that would be shipped (the EMA's when kept)."""
        backup = None
        if self.ema is not None:
            backup = [p.detach().clone() for p in self.ema.params]
            torch._foreach_copy_([p.data for p in self.ema.params], self.ema.shadow)
        self.model.eval()
        out = {}
        for name, batches in self.probes.items():
            total = count = 0.0
            for b in batches:
                plain = TensorBatch(b.tokens, b.inputs, (b.weight > 0).float())
                total += float(self.loss_fn(self.model, plain, False, self.shift, self.amp)) * b.inputs.shape[0]
                count += float((plain.weight[:, 1:] if self.shift else plain.weight).sum())
            out[name] = total / max(count, 1.0)
        self.model.train()
        if backup is not None:
            torch._foreach_copy_([p.data for p in self.ema.params], backup)
        return out

    # ------------------------------------------------------------------ loop
    def train_step(self) -> Tensor:
        r = self.run.recipe
        causal = self.phase_causal()
        if causal:
            batch = self.batcher.autoregressive(self.run.batch_size)
        else:
            batch = self.batcher.diffusion(self.run.batch_size, r.infill_frac, retrieval_frac=r.retrieval_share)
        lr = self.lr()
        for opt in self.opts:
            for g in opt.param_groups:
                g["lr"] = lr
        loss = self.loss_fn(self.model, batch, causal, self.shift, self.amp)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        for opt in self.opts:
            opt.step()
            opt.zero_grad(set_to_none=True)
        if self.ema is not None:
            self.ema.update()
        self.step += 1
        self.tokens += batch.inputs.numel()
        return loss.detach()

    def _sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def _timed_steps(self, n: int) -> float:
        self._sync()
        t0 = time.perf_counter()
        for _ in range(n):
            self.train_step()
        self._sync()
        return (time.perf_counter() - t0) / n

    def _choose_compile(self) -> None:
        """compile="on": compile; "auto": time eager against compiled steps (the compile's own
        time excluded, it is sunk) and keep the faster; a failing compile falls back to eager."""
        mode = self.run.compile
        if mode == "off":
            return
        eager = self._timed_steps(COMPILE_PROBE_STEPS) if mode == "auto" else None
        t0 = time.perf_counter()
        try:
            self.loss_fn = torch.compile(weighted_ce)
            for _ in range(COMPILE_WARMUP_STEPS):
                self.train_step()
            self._sync()
            compile_s = time.perf_counter() - t0
            compiled = self._timed_steps(COMPILE_PROBE_STEPS)
        except Exception as exc:  # noqa: BLE001 - any compiler failure: eager still trains
            self.loss_fn = weighted_ce
            self.compile_report = {"compile": "failed", "error": str(exc).splitlines()[0][:300]}
            self.log({"event": "compile", **self.compile_report})
            return
        keep = eager is None or compiled < eager
        if not keep:
            self.loss_fn = weighted_ce
        self.compile_report = {"compile": "kept" if keep else "dropped", "compile_s": round(compile_s, 2),
                               "eager_step_s": eager, "compiled_step_s": compiled}
        self.log({"event": "compile", **self.compile_report})

    def fit(self, until_tokens: int | None = None) -> dict:
        """Train to the end of the budget, or pause at ``until_tokens`` (a learning-curve
        point: the schedule still spans the whole budget)."""
        run = self.run
        start, start_elapsed = time.perf_counter(), self.elapsed
        last_save = last_eval = start
        window_t0, window_tokens, window_loss = start, 0, torch.zeros((), device=self.device)
        window_steps = 0  # steps in the loss window (the compile probe's steps are not)

        def tick() -> None:
            self.elapsed = start_elapsed + time.perf_counter() - start

        if self.step == 0:
            self.log({"event": "eval", "step": 0, "tokens": 0, **self.evaluate()})
        if not self.compile_report:
            self._choose_compile()
            tick()
            window_t0, window_tokens = time.perf_counter(), 0
        while self.progress() < 1.0 and (until_tokens is None or self.tokens < until_tokens):
            tokens_before = self.tokens
            window_loss += self.train_step()
            window_tokens += self.tokens - tokens_before
            window_steps += 1
            tick()
            now = time.perf_counter()
            if self.step % run.log_every == 0:
                self.log({"step": self.step, "tokens": self.tokens, "loss": float(window_loss) / window_steps,
                          "lr": self.lr(), "tokens_per_s": window_tokens / (now - window_t0),
                          "elapsed_s": round(self.elapsed, 2), "causal": self.phase_causal()})
                window_t0, window_tokens, window_loss = time.perf_counter(), 0, torch.zeros((), device=self.device)
                window_steps = 0
            if now - last_eval > run.eval_every_s:
                self.log({"event": "eval", "step": self.step, "tokens": self.tokens, **self.evaluate()})
                last_eval = time.perf_counter()
            if now - last_save > run.save_every_s:
                self.save()
                last_save = time.perf_counter()
        final = {"event": "eval", "step": self.step, "tokens": self.tokens, **self.evaluate()}
        self.log(final)
        self.save()
        return {"step": self.step, "tokens": self.tokens, "elapsed_s": self.elapsed,
                "tokens_per_s": self.tokens / max(self.elapsed, 1e-9), **self.compile_report, **final}
