"""The engine's public API: ``Engine.load(...)`` and ``engine.infill(...)``.

No editor concepts here: text in, text and numbers out.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from engine.canvas import build_canvas
from engine.config import ModelConfig
from engine.errors import InvalidRequestError
from engine.loader import load_checkpoint
from engine.model import Transformer
from engine.sampler import DecodeOptions, reference_infill
from engine.tokenizer import Tokenizer
from engine.types import CancelToken, InfillResult, StepEvent

DEFAULT_CONTEXT_TOKENS = 1024


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError as exc:
        raise InvalidRequestError(f"unknown device {device!r} ({exc})") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise InvalidRequestError("device 'cuda' requested but no CUDA device is available")
    return dev


def cpu_has_bf16_matmul() -> bool:
    """True when the CPU has bf16 matrix units (AMX-BF16, AVX512-BF16): bf16 then beats fp32."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return any(f in flags for f in ("amx_bf16", "avx512_bf16"))


def resolve_dtype(dtype: str | torch.dtype, device: torch.device) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    table = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16,
             "bf16": torch.bfloat16, "float16": torch.float16, "fp16": torch.float16}
    if dtype == "auto":
        if device.type == "cuda":
            return torch.bfloat16
        return torch.bfloat16 if cpu_has_bf16_matmul() else torch.float32
    if dtype not in table:
        raise InvalidRequestError(f"unknown dtype {dtype!r}; use auto, float32 or bfloat16")
    return table[dtype]


@dataclass(frozen=True)
class InfillRequest:
    prefix: str
    suffix: str = ""
    max_tokens: int = 32


class Engine:
    """One loaded model plus its tokenizer. Thread-safe: calls are serialised by a lock."""

    def __init__(self, model: Transformer, tokenizer: Tokenizer, *, path: Path | None = None,
                 context_tokens: int | None = None) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.config: ModelConfig = model.config
        self.path = path
        limit = context_tokens or min(self.config.max_position_embeddings, DEFAULT_CONTEXT_TOKENS)
        self.context_tokens = min(limit, self.config.max_position_embeddings)
        self._lock = threading.Lock()

    @classmethod
    def load(cls, model: str | os.PathLike | None = None, device: str = "auto",
             dtype: str | torch.dtype = "auto", context_tokens: int | None = None,
             threads: int | None = None) -> Engine:
        """``model``: None (the embedded default), a local directory, or a hub id."""
        dev = resolve_device(device)
        if threads:
            torch.set_num_threads(threads)
        loaded = load_checkpoint(model, resolve_dtype(dtype, dev), dev)
        return cls(loaded.model, loaded.tokenizer, path=loaded.path, context_tokens=context_tokens)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def dtype(self) -> torch.dtype:
        return next(self.model.parameters()).dtype

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text))

    def infill(self, prefix: str, suffix: str = "", max_tokens: int = 32, *, steps: int | None = None,
               temperature: float = 0.0, confidence: str = "max_prob", seed: int | None = None,
               heal: bool = True, cancel: CancelToken | None = None,
               callback: Callable[[StepEvent], None] | None = None) -> InfillResult:
        """Fill the span between ``prefix`` and ``suffix`` with at most ``max_tokens`` tokens."""
        if not isinstance(prefix, str) or not isinstance(suffix, str):
            raise InvalidRequestError("prefix and suffix must be strings")
        opts = DecodeOptions(steps=steps, temperature=temperature, confidence=confidence, seed=seed)
        opts.validate()
        t0 = time.perf_counter()
        canvas = build_canvas(self.tokenizer, prefix, suffix, max_tokens, self.context_tokens, heal)
        t1 = time.perf_counter()
        with self._lock:
            result = reference_infill(self.model, self.tokenizer, canvas, opts, cancel, callback)
        result.timings["tokenize_ms"] = (t1 - t0) * 1000
        result.timings["total_ms"] = (time.perf_counter() - t0) * 1000
        return result

    def infill_batch(self, requests: Sequence[InfillRequest], **kwargs) -> list[InfillResult]:
        return [self.infill(r.prefix, r.suffix, r.max_tokens, **kwargs) for r in requests]
