"""Tokenizer: the ``tokenizers`` library on a checkpoint's ``tokenizer.json``.

Special tokens are resolved by *name* from the checkpoint (``tokenizer_config.json``,
``generation_config.json``, ``config.json``), never from magic ids.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from tokenizers import Tokenizer as HFTokenizer

from mercury_engine.config import ModelConfig
from mercury_engine.errors import CheckpointError, TokenizerError

# Names that checkpoints use for the diffusion mask token and for padding/end of text.
MASK_NAMES = ("<|mask|>", "<|mdm_mask|>", "<mask>", "[MASK]")
PREFIX_MASK_CACHE = 256  # healing masks kept per tokenizer ([V] bools each): the prefixes one session meets
PAD_NAMES = ("<|pad|>", "<|endoftext|>", "<pad>", "[PAD]", "<|eot_id|>", "</s>")


class Tokenizer:
    def __init__(self, tok: HFTokenizer, mask_id: int, pad_id: int, eos_ids: tuple[int, ...]) -> None:
        self._tok = tok
        self.mask_id = mask_id
        self.pad_id = pad_id
        # Tokens that end a span: padding and every end-of-text/turn token.
        self.stop_ids = tuple(sorted({pad_id, *eos_ids}))
        self.vocab_size = tok.get_vocab_size(with_added_tokens=True)
        self._token_bytes: list[bytes] | None = None
        self._prefix_masks: dict[bytes, torch.Tensor] = {}
        self._end_masks: dict[bytes, torch.Tensor] = {}

    # ------------------------------------------------------------------ loading
    @classmethod
    def from_dir(cls, path: Path, config: ModelConfig) -> Tokenizer:
        tok_file = path / "tokenizer.json"
        if not tok_file.is_file():
            raise CheckpointError(f"{path}: no tokenizer.json")
        try:
            tok = HFTokenizer.from_file(str(tok_file))
        except Exception as exc:  # the tokenizers library raises plain Exceptions
            raise CheckpointError(f"{tok_file}: cannot be read as a tokenizer ({exc})") from None
        meta: dict = {}
        for name in ("generation_config.json", "tokenizer_config.json"):
            meta.update(_read_json(path / name))
        return cls.from_tokenizer(tok, config, meta)

    @classmethod
    def from_tokenizer(cls, tok: HFTokenizer, config: ModelConfig, meta: dict | None = None) -> Tokenizer:
        meta = meta or {}
        mask_id = _resolve(tok, "mask", [_token_name(meta.get("mask_token")), config.mask_token],
                           config.mask_token_id if config.mask_token_id is not None
                           else meta.get("mask_token_id"), MASK_NAMES)
        pad_id = _resolve(tok, "padding/end-of-text",
                          [_token_name(meta.get("pad_token")), config.pad_token,
                           _token_name(meta.get("eos_token"))],
                          config.pad_token_id if config.pad_token_id is not None
                          else meta.get("pad_token_id"), PAD_NAMES)
        eos: list[int] = []
        for name in (_token_name(meta.get("eos_token")), "<|endoftext|>", "<|eot_id|>", "<|im_end|>"):
            tid = tok.token_to_id(name) if name else None
            if tid is not None:
                eos.append(tid)
        if config.eos_token_id is not None:
            eos.append(config.eos_token_id)
        return cls(tok, mask_id, pad_id, tuple(eos))

    # ------------------------------------------------------------------ text <-> ids
    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def decode_bytes(self, ids: list[int]) -> bytes:
        table = self.token_bytes
        return b"".join(table[i] for i in ids if 0 <= i < len(table))

    def token_to_id(self, token: str) -> int | None:
        return self._tok.token_to_id(token)

    @property
    def token_bytes(self) -> list[bytes]:
        """The raw bytes of every token (special tokens decode to b'')."""
        if self._token_bytes is None:
            self._token_bytes = _token_byte_table(self._tok)
        return self._token_bytes

    def tokens_starting_with(self, prefix: bytes, device: torch.device) -> torch.Tensor:
        """Bool mask [V] of tokens whose bytes start with ``prefix`` (for boundary healing)."""
        hit = self._prefix_masks.get(prefix)
        if hit is None:
            hit = torch.tensor([len(b) > 0 and b.startswith(prefix) for b in self.token_bytes],
                               dtype=torch.bool)
            if len(self._prefix_masks) >= PREFIX_MASK_CACHE:
                self._prefix_masks.pop(next(iter(self._prefix_masks)))
            self._prefix_masks[prefix] = hit
        return hit.to(device)

    def tokens_ending_with(self, end: bytes, device: torch.device) -> torch.Tensor:
        """Bool mask [V] of tokens whose bytes end with ``end`` (for end healing)."""
        hit = self._end_masks.get(end)
        if hit is None:
            hit = torch.tensor([len(b) > 0 and b.endswith(end) for b in self.token_bytes], dtype=torch.bool)
            if len(self._end_masks) >= PREFIX_MASK_CACHE:
                self._end_masks.pop(next(iter(self._end_masks)))
            self._end_masks[end] = hit
        return hit.to(device)


def _byte_decoder() -> dict[str, int]:
    """Inverse of GPT-2's bytes_to_unicode (the alphabet of byte-level BPE vocabularies)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs, strict=True)}


def _token_byte_table(tok: HFTokenizer) -> list[bytes]:
    vocab = tok.get_vocab(with_added_tokens=True)
    size = max(vocab.values()) + 1 if vocab else 0
    table = [b""] * size
    special = {t.content for t in tok.get_added_tokens_decoder().values() if t.special}
    dec = _byte_decoder()
    for piece, idx in vocab.items():
        if piece in special:
            continue
        if all(ch in dec for ch in piece):
            table[idx] = bytes(dec[ch] for ch in piece)
        else:  # not a byte-level vocabulary entry (e.g. sentencepiece): fall back to decode
            table[idx] = tok.decode([idx], skip_special_tokens=True).encode("utf-8")
    return table


def _token_name(value: object) -> str | None:
    if isinstance(value, dict):  # {"content": "<|mask|>", ...}
        value = value.get("content")
    return value if isinstance(value, str) else None


def _resolve(tok: HFTokenizer, what: str, names: list[str | None], fallback_id: object,
             defaults: tuple[str, ...]) -> int:
    for name in [*names, *defaults]:
        if name:
            tid = tok.token_to_id(name)
            if tid is not None:
                return tid
    if isinstance(fallback_id, int) and 0 <= fallback_id < tok.get_vocab_size(with_added_tokens=True):
        return fallback_id
    tried = ", ".join(n for n in [*names, *defaults] if n)
    raise TokenizerError(f"the tokenizer has no {what} token (looked for {tried}); "
                         f"a diffusion model needs one")


def _read_json(path: Path) -> dict:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path}: not valid JSON ({exc})") from None
    return data if isinstance(data, dict) else {}
