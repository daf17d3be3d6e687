"""The engine's public API: ``Engine.load(...)`` and ``mercury_engine.infill(...)``.

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

from mercury_engine import edit as _edit
from mercury_engine import length as _length
from mercury_engine.canvas import Canvas, build_canvas
from mercury_engine.config import ModelConfig
from mercury_engine.errors import InvalidRequestError
from mercury_engine.fast_sampler import FastDecoder
from mercury_engine.loader import load_checkpoint
from mercury_engine.model import Transformer
from mercury_engine.options import InfillOptions
from mercury_engine.quantize import QUANTIZE_MODES
from mercury_engine.quantize import quantize as apply_quantization
from mercury_engine.sampler import reference_infill
from mercury_engine.scheduler import Scheduler
from mercury_engine.tokenizer import Tokenizer
from mercury_engine.types import CancelToken, InfillResult, StepEvent

DEFAULT_CONTEXT_TOKENS = 1024  # context when the checkpoint names none: ample for a file's neighbourhood
DEFAULT_MAX_TOKENS = 32  # a few lines of code: what an inline completion shows


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


def resolve_quantize(quantize: str, dtype: str | torch.dtype, device: torch.device) -> str:
    if quantize == "auto":
        return "int8" if device.type == "cpu" and dtype == "auto" else "none"
    if quantize not in QUANTIZE_MODES:
        raise InvalidRequestError(f"quantize must be auto or one of {', '.join(QUANTIZE_MODES)}, "
                                  f"got {quantize!r}")
    return quantize


@dataclass(frozen=True)
class InfillRequest:
    prefix: str
    suffix: str = ""
    max_tokens: int = DEFAULT_MAX_TOKENS


class Engine:
    """One loaded model plus its tokenizer. Thread-safe: calls are serialised by a lock."""

    def __init__(self, model: Transformer, tokenizer: Tokenizer, *, path: Path | None = None,
                 context_tokens: int | None = None) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.config: ModelConfig = model.config
        self.path = path
        limit = context_tokens or self.config.context_tokens or min(self.config.max_position_embeddings,
                                                                    DEFAULT_CONTEXT_TOKENS)
        self.context_tokens = min(limit, self.config.max_position_embeddings)
        self._lock = threading.Lock()
        self._scheduler: Scheduler | None = None
        self._scheduler_lock = threading.Lock()

    @property
    def scheduler(self) -> Scheduler:
        """The engine's one request queue for the fast sampler (started on first use)."""
        with self._scheduler_lock:
            if self._scheduler is None:
                self._scheduler = Scheduler(FastDecoder(self.model, self.tokenizer))
            return self._scheduler

    def close(self) -> None:
        if self._scheduler is not None:
            self._scheduler.close()

    @classmethod
    def load(cls, model: str | os.PathLike | None = None, device: str = "auto",
             dtype: str | torch.dtype = "auto", context_tokens: int | None = None,
             threads: int | None = None, quantize: str = "auto") -> Engine:
        """``model``: None (the embedded default), a local directory, or a hub id.

        ``quantize``: ``"int8"`` makes the blocks' linear layers and the LM head dynamic-int8
        (CPU, implies float32; mercury_engine/quantize.py); ``"none"`` keeps ``dtype``; ``"auto"`` is int8 on the CPU when ``dtype`` is
        ``"auto"`` too — measured fastest there for the small models the CPU runs
        (benchmarks/engine/speed) — and none elsewhere.
        """
        dev = resolve_device(device)
        if threads:
            torch.set_num_threads(threads)
        quantize = resolve_quantize(quantize, dtype, dev)
        dt = torch.float32 if quantize == "int8" else resolve_dtype(dtype, dev)
        loaded = load_checkpoint(model, dt, dev)
        net = apply_quantization(loaded.model, quantize)
        return cls(net, loaded.tokenizer, path=loaded.path, context_tokens=context_tokens)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def dtype(self) -> torch.dtype:
        return next(self.model.parameters()).dtype

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text))

    def infill(self, prefix: str, suffix: str = "", max_tokens: int = DEFAULT_MAX_TOKENS,
               options: InfillOptions | None = None, *, cancel: CancelToken | None = None,
               callback: Callable[[StepEvent], None] | None = None) -> InfillResult:
        """Fill the span between ``prefix`` and ``suffix`` with at most ``max_tokens`` tokens.

        ``options`` (``mercury_engine.options.InfillOptions``) defaults to the product path: the fast
        sampler (scheduled, KV-cached, threshold-parallel) with the balanced preset. The
        reference sampler (uncached ground truth, one token per step unless ``steps``) runs only
        when ``options.sampler == "reference"``. ``allow_stop=False`` fills exactly
        ``max_tokens`` tokens; ``single_line=True`` ends the completion after its first line
        break that follows non-blank text (the line break is kept).
        """
        return self.infill_batch([InfillRequest(prefix, suffix, max_tokens)], options,
                                 cancel=cancel, callback=callback)[0]

    def infill_batch(self, requests: Sequence[InfillRequest], options: InfillOptions | None = None, *,
                     cancel: CancelToken | None = None,
                     callback: Callable[[StepEvent], None] | None = None) -> list[InfillResult]:
        """Several infills; with the fast sampler they share every denoising step's forwards."""
        opts = InfillOptions() if options is None else options
        if not isinstance(opts, InfillOptions):
            raise InvalidRequestError(f"options must be a mercury_engine.InfillOptions, got {type(opts).__name__}")
        opts = opts.resolve()  # the one validation of a request's options (mercury_engine/options.py)
        for r in requests:
            if not isinstance(r.prefix, str) or not isinstance(r.suffix, str):
                raise InvalidRequestError("prefix and suffix must be strings")
        t0 = time.perf_counter()
        canvases = [build_canvas(self.tokenizer, r.prefix, r.suffix, r.max_tokens, self.context_tokens, opts.heal,
                                 opts.heal_tail) for r in requests]
        t1 = time.perf_counter()
        results = self._decode(canvases, opts, cancel, callback)
        for r in results:
            r.timings["tokenize_ms"] = (t1 - t0) * 1000 / max(1, len(requests))
            r.timings["total_ms"] = (time.perf_counter() - t0) * 1000
        return results

    def _decode(self, canvases: list[Canvas], opts: InfillOptions, cancel: CancelToken | None,
                callback: Callable[[StepEvent], None] | None) -> list[InfillResult]:
        """The one dispatch from canvases to a sampler.

        With the length policy (``opts.length == "search"``, mercury_engine/length.py) each canvas fans
        out into candidate span lengths, decoded as fixed-length fills; every candidate of
        every request is submitted together (the scheduler batches them into the same forwards)
        and one result per request is picked by the model's own scores. Per-step callbacks are
        not sent for candidates (their steps interleave).
        """
        if opts.sampler == "reference":
            results = []
            for canvas in canvases:
                with self._lock:
                    results.append(reference_infill(self.model, self.tokenizer, canvas, opts, cancel, callback))
            return results
        if not _length.applies(opts):
            futures = [self.scheduler.submit(c, opts, cancel, callback) for c in canvases]
            if _length.prior_applies(opts):  # the prior sizes each span inside the decoder
                return [_length.prior_finish(self.tokenizer, f.result(), c)
                        for f, c in zip(futures, canvases, strict=True)]
            return [f.result() for f in futures]
        plans = [_length.plan(c, opts) for c in canvases]
        sub = _length.candidate_options(opts)
        futures = [[self.scheduler.submit(c, sub, cancel) for c in cands] for cands in plans]
        results = []
        for cands, futs in zip(plans, futures, strict=True):
            found = [f.result() for f in futs]
            results.append(_length.merge(found, _length.choose(self.model, self.tokenizer, cands, found)))
        return results

    # ------------------------------------------------------------------ edits (mercury_engine/edit.py)
    def token_scores(self, text: str, stride: int = 8, *,
                     cancel: CancelToken | None = None) -> list[_edit.TokenScore]:
        """Per token of ``text``: (char start, char end, probability when masked); batched passes."""
        with self._lock:
            return _edit.token_scores(self.model, self.tokenizer, text, stride, self.context_tokens, cancel)

    def refill(self, text: str, spans: Sequence[tuple[int, int]], max_tokens_each: int | Sequence[int] = 8,
               *, steps: int | None = None, temperature: float = 0.0, seed: int | None = None,
               cancel: CancelToken | None = None) -> _edit.RefillResult:
        """New text for several character spans of ``text``, masked at once and filled jointly."""
        with self._lock:
            return _edit.refill(self.model, self.tokenizer, text, spans, max_tokens_each, self.context_tokens,
                                steps=steps, temperature=temperature, seed=seed, cancel=cancel)

    def score_spans(self, text: str, candidates: Sequence[tuple[int, int, str]], *,
                    cancel: CancelToken | None = None) -> list[float]:
        """The model's confidence in each ``(start, end, new_text)`` replacement (its tokens masked)."""
        with self._lock:
            return _edit.score_spans(self.model, self.tokenizer, text, candidates, self.context_tokens, cancel)
