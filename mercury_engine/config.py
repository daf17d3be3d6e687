"""Typed model configuration, read from a Hugging Face style ``config.json``.

Three layouts are understood:

* ``"Dream"`` — Dream-7B, Dream-Coder-7B, DiffuCoder-7B: Qwen2 hyper-parameter names and
  parameter names, QKV bias, logits shifted by one position, mask token ``<|mask|>``.
* ``"llada"`` — LLaDA-8B: OLMo-style hyper-parameter names (``d_model``, ``n_layers``, ...),
  its own parameter names, no logit shift, mask id in the config.
* ``"mercury"`` — this project's embedded format: Qwen2 hyper-parameter and parameter names,
  no logit shift, special tokens named in the config (see ``mercury_engine/models/README.md``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


class ConfigError(ValueError):
    """A ``config.json`` that cannot describe a supported model."""


# Parameter layouts: how checkpoint tensor names map to ours (see mercury_engine/loader.py).
LAYOUT_QWEN2 = "qwen2"
LAYOUT_LLADA = "llada"

SUPPORTED_MODEL_TYPES = ("Dream", "llada", "mercury")

# Defaults for config fields a checkpoint may leave out (the values its family was trained with).
DEFAULT_MAX_POSITIONS = 4096  # Qwen2/LLaDA-8B's trained context length
DEFAULT_ROPE_THETA = 10000.0  # the original rotary base (RoFormer), used when no rope_theta is given
QWEN2_RMS_EPS = 1e-6  # Qwen2's RMSNorm epsilon
LLADA_RMS_EPS = 1e-5  # LLaDA (OLMo) RMSNorm epsilon
LLADA_MASK_TOKEN = "<|mdm_mask|>"  # LLaDA's mask token: its id is read from the tokenizer by this name
MIN_CONTEXT_TOKENS = 16  # a trained context budget below this cannot hold prefix, span and suffix


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    max_position_embeddings: int = DEFAULT_MAX_POSITIONS
    rope_theta: float = DEFAULT_ROPE_THETA
    rms_norm_eps: float = QWEN2_RMS_EPS
    qkv_bias: bool = False
    tie_word_embeddings: bool = False
    # Dream-family checkpoints predict token i+1 at position i (they start from an AR model).
    logits_shift: bool = False
    model_type: str = "mercury"
    layout: str = LAYOUT_QWEN2
    # Special tokens: names resolved through the tokenizer, ids as a fallback/override.
    mask_token: str | None = None
    mask_token_id: int | None = None
    pad_token: str | None = None
    pad_token_id: int | None = None
    eos_token_id: int | None = None
    # The context budget (prefix + span + suffix tokens) the model was trained for; the engine
    # uses it as its default budget (None: min(max_position_embeddings, engine default)).
    context_tokens: int | None = None

    def __post_init__(self) -> None:
        positive = ("vocab_size", "hidden_size", "intermediate_size", "num_layers", "num_heads",
                    "num_kv_heads", "head_dim", "max_position_embeddings")
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, int) or value <= 0:
                raise ConfigError(f"config field {name!r} must be a positive integer, got {value!r}")
        if self.num_heads % self.num_kv_heads:
            raise ConfigError(
                f"num_heads ({self.num_heads}) must be a multiple of num_kv_heads ({self.num_kv_heads})")
        if self.context_tokens is not None and not (isinstance(self.context_tokens, int)
                                                    and MIN_CONTEXT_TOKENS <= self.context_tokens <= self.max_position_embeddings):
            raise ConfigError(f"context_tokens must be an integer in [{MIN_CONTEXT_TOKENS}, max_position_embeddings], "
                              f"got {self.context_tokens!r}")
        if self.head_dim % 2:
            raise ConfigError(f"head_dim must be even for rotary embeddings, got {self.head_dim}")

    @property
    def num_parameters(self) -> int:
        d, f, h, kv, hd = (self.hidden_size, self.intermediate_size, self.num_heads,
                           self.num_kv_heads, self.head_dim)
        attn = d * h * hd * 2 + d * kv * hd * 2 + (h * hd + 2 * kv * hd if self.qkv_bias else 0)
        layer = attn + 3 * d * f + 2 * d
        emb = self.vocab_size * d * (1 if self.tie_word_embeddings else 2)
        return self.num_layers * layer + emb + d

    # ------------------------------------------------------------------ (de)serialisation
    @classmethod
    def from_hf_dict(cls, raw: dict[str, Any]) -> ModelConfig:
        """Build a config from the dict of a checkpoint's ``config.json``."""
        if not isinstance(raw, dict):
            raise ConfigError("config.json must hold a JSON object")
        model_type = raw.get("model_type")
        try:
            if model_type == "Dream":
                return cls._from_qwen2_names(raw, model_type="Dream", logits_shift=True,
                                             default_mask="<|mask|>", qkv_bias_default=True)
            if model_type == "mercury":
                return cls._from_qwen2_names(raw, model_type="mercury",
                                             logits_shift=bool(raw.get("logits_shift", False)),
                                             default_mask="<|mask|>", qkv_bias_default=False)
            if model_type == "llada":
                return cls._from_llada_names(raw)
        except KeyError as exc:
            raise ConfigError(f"config.json of a {model_type!r} model lacks field {exc.args[0]!r}") from None
        except ConfigError:
            raise
        except (TypeError, ValueError) as exc:  # e.g. "hidden_size": null or "abc"
            raise ConfigError(f"config.json of a {model_type!r} model has a field of the wrong type "
                              f"({exc})") from None
        raise ConfigError(
            f"unsupported model_type {model_type!r}; supported: {', '.join(SUPPORTED_MODEL_TYPES)}")

    @classmethod
    def _from_qwen2_names(cls, raw: dict[str, Any], *, model_type: str, logits_shift: bool,
                          default_mask: str, qkv_bias_default: bool) -> ModelConfig:
        heads = int(raw["num_attention_heads"])
        hidden = int(raw["hidden_size"])
        return cls(
            vocab_size=int(raw["vocab_size"]),
            hidden_size=hidden,
            intermediate_size=int(raw["intermediate_size"]),
            num_layers=int(raw["num_hidden_layers"]),
            num_heads=heads,
            num_kv_heads=int(raw.get("num_key_value_heads") or heads),
            head_dim=int(raw.get("head_dim") or hidden // heads),
            qkv_bias=bool(raw.get("attention_bias", raw.get("qkv_bias", qkv_bias_default))),
            tie_word_embeddings=bool(raw.get("tie_word_embeddings", False)),
            logits_shift=logits_shift,
            model_type=model_type,
            layout=LAYOUT_QWEN2,
            context_tokens=raw.get("context_tokens"),
            **_shared_fields(raw, "max_position_embeddings", QWEN2_RMS_EPS, default_mask),
        )

    @classmethod
    def _from_llada_names(cls, raw: dict[str, Any]) -> ModelConfig:
        heads = int(raw["n_heads"])
        hidden = int(raw["d_model"])
        vocab = int(raw.get("embedding_size") or raw["vocab_size"])
        return cls(
            vocab_size=vocab,
            hidden_size=hidden,
            intermediate_size=int(raw.get("mlp_hidden_size") or raw["mlp_ratio"] * hidden),
            num_layers=int(raw["n_layers"]),
            num_heads=heads,
            num_kv_heads=int(raw.get("n_kv_heads") or heads),
            head_dim=hidden // heads,
            qkv_bias=bool(raw.get("include_qkv_bias", raw.get("include_bias", False))),
            tie_word_embeddings=bool(raw.get("weight_tying", False)),
            logits_shift=False,
            model_type="llada",
            layout=LAYOUT_LLADA,
            **_shared_fields(raw, "max_sequence_length", LLADA_RMS_EPS, LLADA_MASK_TOKEN),
        )

    def to_hf_dict(self) -> dict[str, Any]:
        """The embedded (``"mercury"``) layout's ``config.json``."""
        out = {
            "model_type": "mercury",
            "architectures": ["MercuryDiffusionModel"],
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "intermediate_size": self.intermediate_size,
            "num_hidden_layers": self.num_layers,
            "num_attention_heads": self.num_heads,
            "num_key_value_heads": self.num_kv_heads,
            "head_dim": self.head_dim,
            "max_position_embeddings": self.max_position_embeddings,
            "rope_theta": self.rope_theta,
            "rms_norm_eps": self.rms_norm_eps,
            "attention_bias": self.qkv_bias,
            "tie_word_embeddings": self.tie_word_embeddings,
            "logits_shift": self.logits_shift,
            "mask_token": self.mask_token,
            "pad_token": self.pad_token,
        }
        if self.context_tokens is not None:
            out["context_tokens"] = self.context_tokens
        return out

    def replace(self, **changes: Any) -> ModelConfig:
        return dataclasses.replace(self, **changes)


def _shared_fields(raw: dict[str, Any], max_positions_key: str, rms_eps: float, default_mask: str) -> dict[str, Any]:
    """Fields both layouts read alike: context length, rotary base, norm epsilon, and the special
    tokens (names resolved through the tokenizer, optional ids)."""
    return {"max_position_embeddings": int(raw.get(max_positions_key, DEFAULT_MAX_POSITIONS)),
            "rope_theta": _rope_theta(raw), "rms_norm_eps": float(raw.get("rms_norm_eps", rms_eps)),
            "mask_token": raw.get("mask_token", default_mask), "mask_token_id": raw.get("mask_token_id"),
            "pad_token": raw.get("pad_token"), "pad_token_id": raw.get("pad_token_id"),
            "eos_token_id": _first_id(raw.get("eos_token_id"))}


def _rope_theta(raw: dict[str, Any]) -> float:
    """``rope_theta`` at the top level (transformers 4.x) or in ``rope_parameters`` (5.x).

    Scaled RoPE variants (linear, dynamic, yarn, llama3, ...) are refused rather than run as
    plain RoPE, which would give silently wrong logits on long contexts.
    """
    params = raw.get("rope_parameters") or raw.get("rope_scaling") or {}
    if not isinstance(params, dict):
        raise ConfigError(f"rope_parameters/rope_scaling must be an object, got {params!r}")
    rope_type = params.get("rope_type", params.get("type", "default"))
    if rope_type not in (None, "default"):
        raise ConfigError(f"RoPE scaling {rope_type!r} is not supported (only plain RoPE)")
    return float(raw.get("rope_theta", params.get("rope_theta", DEFAULT_ROPE_THETA)))


def _first_id(value: Any) -> int | None:
    if isinstance(value, list):
        return int(value[0]) if value else None
    return None if value is None else int(value)
