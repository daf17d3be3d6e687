"""One bidirectional transformer for masked diffusion language models (gpt-fast style).

RMSNorm, rotary position embeddings, grouped-query attention with optional QKV bias, SwiGLU,
tied or untied embeddings. Attention is never causal: every position sees every other one,
except keys hidden by an optional padding mask. No sampling, no quantization, no cache policy
here: the samplers decide what to recompute; the model only offers

* ``forward(idx, pos)`` -> logits for every position, and
* ``forward_hidden(idx, pos, ctx_kv=...)`` -> final-normed hidden states of ``idx`` attending to
  its own positions plus a precomputed context (the prefix/suffix "dual cache" of Fast-dLLM),
  optionally returning the keys/values it computed so a caller can cache them, and optionally
  only at some ``rows`` (the last layer then computes queries, attention and MLP for those rows
  alone; every layer's keys/values are still computed for every position).

The rotary tables are gathered once per forward (``Rope``), not once per layer and projection.

Shapes: B batch, T query positions, S key positions, D hidden, H heads, K kv heads,
E head dim, V vocabulary.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from mercury_engine.config import ModelConfig

KV = tuple[Tensor, Tensor]  # keys, values: [B, K, S, E] each
Rope = tuple[Tensor, Tensor]  # cos, sin at the query positions: [B, 1, T, E] each
# Per row: its own real (unpadded) positions, and its real context positions (None: all).
RowLengths = tuple[list[int], list[int] | None]


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        # One fused op (in float32, as the reference x * rsqrt(mean(x^2) + eps)), not five; a
        # float32 model's weight is multiplied inside it (the same product, one pass fewer).
        if x.dtype == torch.float32 and self.weight.dtype == torch.float32:
            return F.rms_norm(x, x.shape[-1:], self.weight, eps=self.eps)
        return self.weight * F.rms_norm(x.float(), x.shape[-1:], eps=self.eps).to(x.dtype)


class Rotary(nn.Module):
    """Rotate-half (GPT-NeoX) rotary embedding, as in Qwen2, LLaMA and LLaDA."""

    def __init__(self, head_dim: int, max_positions: int, theta: float) -> None:
        super().__init__()
        inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
        t = torch.arange(max_positions, dtype=torch.float64)
        freqs = torch.outer(t, inv_freq)  # [P, E/2]
        emb = torch.cat([freqs, freqs], dim=-1)  # [P, E]
        self.register_buffer("cos", emb.cos().float(), persistent=False)
        self.register_buffer("sin", emb.sin().float(), persistent=False)

    def forward(self, pos: Tensor, dtype: torch.dtype) -> Rope:
        # pos: [B, T] -> cos, sin [B, 1, T, E]
        return self.cos[pos].unsqueeze(1).to(dtype), self.sin[pos].unsqueeze(1).to(dtype)

    def move(self, k: Tensor, delta: int) -> Tensor:
        """Keys rotated for their positions p ([..., E]) -> the same keys rotated for p + delta.

        Each pair of dimensions is rotated by an angle proportional to the position, and
        rotations compose (R(p + delta) = R(delta) R(p)): cached keys move without their
        projections being recomputed."""
        d = abs(delta)
        cos, sin = self.cos[d].to(k.dtype), self.sin[d].to(k.dtype)  # [E]
        return apply_rotary(k, (cos, sin if delta >= 0 else -sin))


def apply_rotary(x: Tensor, rope: Rope) -> Tensor:
    # x: [B, H, T, E]
    cos, sin = rope
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)  # [B, H, T, E]
    return x * cos + rotated * sin


def take_rows(x: Tensor, rows: Tensor) -> Tensor:
    """x [B, T, D] at rows [B, W] -> [B, W, D]."""
    return x.gather(1, rows[..., None].expand(-1, -1, x.shape[-1]))


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.n_head, self.n_kv, self.head_dim = cfg.num_heads, cfg.num_kv_heads, cfg.head_dim
        d = cfg.hidden_size
        self.q_proj = nn.Linear(d, self.n_head * self.head_dim, bias=cfg.qkv_bias)
        self.k_proj = nn.Linear(d, self.n_kv * self.head_dim, bias=cfg.qkv_bias)
        self.v_proj = nn.Linear(d, self.n_kv * self.head_dim, bias=cfg.qkv_bias)
        self.o_proj = nn.Linear(self.n_head * self.head_dim, d, bias=False)
        # q|k|v as one GEMM, when an inference transform fused them (mercury_engine/quantize.py)
        self.qkv_proj: nn.Module | None = None

    def project(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """x [B, T, D] -> q [B, T, H*E], k and v [B, T, K*E]."""
        if self.qkv_proj is None:
            return self.q_proj(x), self.k_proj(x), self.v_proj(x)
        q, k, v = self.qkv_proj(x).split([self.n_head * self.head_dim] + [self.n_kv * self.head_dim] * 2, dim=-1)
        return q, k, v

    def forward(self, x: Tensor, rope: Rope, mask: Tensor | None, ctx: KV | None,
                rows: Tensor | None = None, rows_rope: Rope | None = None,
                lengths: RowLengths | None = None) -> tuple[Tensor, KV]:
        """Queries at every position of ``x`` [B, T, D], or only at ``rows`` [B, W] (their rotary
        tables ``rows_rope``); keys and values always at every position. With ``lengths`` each
        row attends to its own unpadded keys (``_ragged``)."""
        b, t, _ = x.shape
        q, k, v = self.project(x)
        q_rope = rope
        if rows is not None:
            q, q_rope = take_rows(q, rows), rows_rope  # [B, W, H*E]
        q = apply_rotary(q.view(b, -1, self.n_head, self.head_dim).transpose(1, 2), q_rope)  # [B, H, T, E]
        k = apply_rotary(k.view(b, t, self.n_kv, self.head_dim).transpose(1, 2), rope)  # [B, K, T, E]
        v = v.view(b, t, self.n_kv, self.head_dim).transpose(1, 2)  # [B, K, T, E]
        own = (k, v)
        if lengths is not None:
            y = self._ragged(q, own, ctx, lengths, all_queries=rows is not None)  # [B, H, T or W, E]
        else:
            if ctx is not None:
                k = torch.cat([ctx[0], k], dim=2)  # [B, K, S, E]
                v = torch.cat([ctx[1], v], dim=2)  # [B, K, S, E]
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                               enable_gqa=self.n_head != self.n_kv)  # [B, H, T, E]
        y = y.transpose(1, 2).reshape(b, -1, self.n_head * self.head_dim)  # [B, T or W, H*E]
        return self.o_proj(y), own

    def _ragged(self, q: Tensor, own: KV, ctx: KV | None, lengths: RowLengths, all_queries: bool) -> Tensor:
        """Attention of each row on its own unpadded keys: a row's result never depends on how
        far its neighbours pad it (padded query positions come out as zeros). ``all_queries``:
        ``q`` holds picked rows (``rows``), every one of them attends."""
        t_len, c_len = lengths
        y = None  # [B, H, T or W, E]
        for i, t in enumerate(t_len):
            k, v = own[0][i:i + 1, :, :t], own[1][i:i + 1, :, :t]  # [1, K, t, E]
            if ctx is not None:
                c = c_len[i] if c_len is not None else ctx[0].shape[2]
                k = torch.cat([ctx[0][i:i + 1, :, :c], k], dim=2)  # [1, K, c + t, E]
                v = torch.cat([ctx[1][i:i + 1, :, :c], v], dim=2)  # [1, K, c + t, E]
            n = q.shape[2] if all_queries else t
            # contiguous whatever the padding: the kernel's path (and rounding) follows the strides
            out = F.scaled_dot_product_attention(
                q[i:i + 1, :, :n].contiguous(), k.contiguous(), v.contiguous(), enable_gqa=self.n_head != self.n_kv)
            if len(t_len) == 1 and n == q.shape[2]:
                return out  # one unpadded row: the result itself, no copy
            if y is None:
                y = torch.zeros_like(q)
            y[i:i + 1, :, :n] = out
        assert y is not None
        return y


class SwiGLU(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)
        # gate|up as one GEMM, when an inference transform fused them (mercury_engine/quantize.py)
        self.gate_up_proj: nn.Module | None = None

    def forward(self, x: Tensor) -> Tensor:
        if self.gate_up_proj is None:
            gate, up = self.gate_proj(x), self.up_proj(x)
        else:
            gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = SwiGLU(cfg)

    def forward(self, x: Tensor, rope: Rope, mask: Tensor | None, ctx: KV | None,
                rows: Tensor | None = None, rows_rope: Rope | None = None,
                lengths: RowLengths | None = None) -> tuple[Tensor, KV]:
        a, kv = self.self_attn(self.input_layernorm(x), rope, mask, ctx, rows, rows_rope, lengths)
        if rows is not None:
            x = take_rows(x, rows)  # [B, W, D]
        x = x + a  # [B, T, D]
        x = x + self.mlp(self.post_attention_layernorm(x))  # [B, T, D]
        return x, kv


class Transformer(nn.Module):
    """Parameter names follow Qwen2 (``model.layers.N.self_attn.q_proj`` ...) minus the
    ``model.`` prefix; mercury_engine/loader.py maps other layouts onto them."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.config = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.num_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        if cfg.tie_word_embeddings:
            self.lm_head.weight = self.embed_tokens.weight
        self.rotary = Rotary(cfg.head_dim, cfg.max_position_embeddings, cfg.rope_theta)

    @property
    def output_embedding(self) -> Tensor:  # [V, D]; the embedding when tied (an int8 LM head has no float weight)
        return self.embed_tokens.weight if self.config.tie_word_embeddings else self.lm_head.weight

    def forward_hidden(self, idx: Tensor, pos: Tensor | None = None, key_mask: Tensor | None = None,
                       ctx_kv: list[KV] | None = None, ctx_key_mask: Tensor | None = None,
                       return_kv: bool = False, rows: Tensor | None = None,
                       lengths: RowLengths | None = None) -> tuple[Tensor, list[KV] | None]:
        """Final-normed hidden states of ``idx`` ([B, T, D], or [B, W, D] at ``rows``).

        idx: [B, T] token ids; pos: [B, T] positions (default 0..T-1);
        key_mask: [B, T] bool, False hides a (padding) position from every query;
        ctx_kv: per layer, keys/values of context positions computed earlier, [B, K, C, E];
        ctx_key_mask: [B, C] bool mask over those context positions;
        rows: [B, W] indices into T: only these rows' hidden states are wanted. The last layer
        then runs its queries, attention output and MLP on them alone (a full step of the fast
        sampler needs every position's keys/values but only its block's outputs).
        lengths: instead of the masks, each row's real positions and real context positions
        (padding trails both): attention then runs row by row on unpadded keys, so each row's
        result is the one it gets alone, whatever its neighbours (batch invariance).
        """
        b, t = idx.shape
        if pos is None:
            pos = torch.arange(t, device=idx.device).expand(b, t)  # [B, T]
        if lengths is not None and (key_mask is not None or ctx_key_mask is not None):
            raise ValueError("pass either lengths or key masks, not both")
        mask = self._attention_mask(b, t, key_mask, ctx_kv, ctx_key_mask, idx.device)
        x = self.embed_tokens(idx)  # [B, T, D]
        rope = self.rotary(pos, x.dtype)  # once for every layer
        rows_rope = None if rows is None else self.rotary(pos.gather(1, rows), x.dtype)
        last = len(self.layers) - 1
        new_kv: list[KV] = []
        for i, layer in enumerate(self.layers):
            x, kv = layer(x, rope, mask, None if ctx_kv is None else ctx_kv[i],
                          *((rows, rows_rope) if i == last else (None, None)), lengths)
            if return_kv:
                new_kv.append(kv)
        return self.norm(x), (new_kv if return_kv else None)  # [B, T or W, D]

    def forward(self, idx: Tensor, pos: Tensor | None = None, key_mask: Tensor | None = None) -> Tensor:
        h, _ = self.forward_hidden(idx, pos, key_mask)  # [B, T, D]
        return self.lm_head(h)  # [B, T, V]

    @staticmethod
    def _attention_mask(b: int, t: int, key_mask: Tensor | None, ctx_kv: list[KV] | None,
                        ctx_key_mask: Tensor | None, device: torch.device) -> Tensor | None:
        if key_mask is None and ctx_key_mask is None:
            return None
        own = key_mask if key_mask is not None else torch.ones(b, t, dtype=torch.bool, device=device)
        if ctx_kv is not None:
            c = ctx_kv[0][0].shape[2]
            ctx = ctx_key_mask if ctx_key_mask is not None else torch.ones(b, c, dtype=torch.bool,
                                                                            device=device)
            own = torch.cat([ctx, own], dim=1)  # [B, S]
        return own[:, None, None, :]  # [B, 1, 1, S]
