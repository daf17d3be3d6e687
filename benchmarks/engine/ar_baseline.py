"""An autoregressive baseline of the same architecture and size, for speed comparisons only.

It runs ``mercury_engine.model.Transformer`` (same config, same code path) as a left-to-right decoder:
one prefill over the prompt, then one forward per generated token with a preallocated
key/value cache (each new token attends to every cached position and itself: causal
incremental decoding). The benchmark runs it on the engine's own model object — same weights,
dtype and quantization — so the two rows differ only in how they decode; its text is
meaningless (the weights are not an autoregressive model's): this measures speed only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from mercury_engine.model import Transformer


@dataclass
class ARResult:
    tokens: list[int]
    forwards: int
    latency_ms: float


class ARDecoder:
    def __init__(self, model: Transformer) -> None:
        self.model = model
        self.device = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype

    @torch.inference_mode()
    def generate(self, prompt: list[int], n_tokens: int) -> ARResult:
        """Greedy-decode exactly ``n_tokens`` tokens after ``prompt`` (no early stop)."""
        t0 = time.perf_counter()
        cfg = self.model.config
        total = len(prompt) + n_tokens
        k_cache = [torch.empty(1, cfg.num_kv_heads, total, cfg.head_dim, device=self.device, dtype=self.dtype)
                   for _ in range(cfg.num_layers)]
        v_cache = [torch.empty_like(k) for k in k_cache]
        ids = torch.tensor([prompt], device=self.device)  # [1, P]
        hidden, kv = self.model.forward_hidden(ids, return_kv=True)  # prefill [1, P, D]
        for layer, (k, v) in enumerate(kv):
            k_cache[layer][:, :, : len(prompt)] = k
            v_cache[layer][:, :, : len(prompt)] = v
        cur = len(prompt)
        token = self.model.lm_head(hidden[:, -1]).argmax(-1)  # [1]
        out = [int(token)]
        forwards = 1
        for _ in range(n_tokens - 1):
            ctx = [(k_cache[i][:, :, :cur], v_cache[i][:, :, :cur]) for i in range(cfg.num_layers)]
            pos = torch.tensor([[cur]], device=self.device)
            h, kv = self.model.forward_hidden(token[:, None], pos, ctx_kv=ctx, return_kv=True)  # [1, 1, D]
            for layer, (k, v) in enumerate(kv):
                k_cache[layer][:, :, cur:cur + 1] = k
                v_cache[layer][:, :, cur:cur + 1] = v
            cur += 1
            token = self.model.lm_head(h[:, -1]).argmax(-1)  # [1]
            out.append(int(token))
            forwards += 1
        return ARResult(out, forwards, (time.perf_counter() - t0) * 1000)
