"""The infill canvas ``[prefix][MASK x n][suffix]`` shared by every sampler.

Builds token ids, trims the context to a budget, heals the cursor's token boundary, and
turns a finished span back into text.

Boundary healing: byte-level BPE merges across the cursor (newline + indentation, the rest of
an identifier), so a prefix cut at the cursor ends in a token the model rarely saw there. The
prefix's last token is removed and its bytes become a constraint on the span's first token
(it must start with them); the healed bytes are stripped from the returned text.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import InvalidRequestError
from engine.tokenizer import Tokenizer


@dataclass
class Canvas:
    prefix_ids: list[int]
    suffix_ids: list[int]
    span_len: int
    heal_bytes: bytes  # bytes the span's first token must start with (b"" = none)
    trimmed: bool

    @property
    def span_start(self) -> int:
        return len(self.prefix_ids)

    @property
    def length(self) -> int:
        return len(self.prefix_ids) + self.span_len + len(self.suffix_ids)

    def ids(self, mask_id: int) -> list[int]:
        return [*self.prefix_ids, *([mask_id] * self.span_len), *self.suffix_ids]


def build_canvas(tok: Tokenizer, prefix: str, suffix: str, max_tokens: int, context_limit: int,
                 heal: bool = True) -> Canvas:
    if not isinstance(max_tokens, int) or max_tokens <= 0:
        raise InvalidRequestError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    if context_limit < 8:
        raise InvalidRequestError(f"context limit {context_limit} is too small")
    pre = tok.encode(prefix) if prefix else []
    suf = tok.encode(suffix) if suffix else []
    heal_bytes = b""
    if heal and pre:
        last = tok.token_bytes[pre[-1]] if pre[-1] < len(tok.token_bytes) else b""
        if last:
            heal_bytes = last
            pre = pre[:-1]
    span = max_tokens + (1 if heal_bytes else 0)
    span = min(span, context_limit // 2)  # never let the span crowd out all context
    trimmed = span < max_tokens + (1 if heal_bytes else 0)
    room = context_limit - span
    if len(pre) + len(suf) > room:
        trimmed = True
        suf_keep = min(len(suf), max(room // 4, room - len(pre)))
        pre_keep = room - suf_keep
        pre = pre[len(pre) - pre_keep:] if pre_keep > 0 else []
        suf = suf[:suf_keep]
    return Canvas(pre, suf, span, heal_bytes, trimmed)


def span_text(tok: Tokenizer, span_ids: list[int], heal_bytes: bytes) -> tuple[str, list[int], int]:
    """Text of a finished span: cut at the first stop token, healed bytes stripped.

    Returns (text, kept token ids, number of kept tokens).
    """
    kept: list[int] = []
    stops = set(tok.stop_ids)
    for t in span_ids:
        if t in stops or t == tok.mask_id:
            break
        kept.append(t)
    raw = tok.decode_bytes(kept)
    if heal_bytes and raw.startswith(heal_bytes):
        raw = raw[len(heal_bytes):]
    return raw.decode("utf-8", errors="replace"), kept, len(kept)


def first_line(tok: Tokenizer, text: str, token_ids: list[int], heal_bytes: bytes) -> tuple[str, int]:
    """A single-line completion: ``text`` cut after its first line break that follows non-blank
    text (the line break is kept, so a whole-line middle stays a whole line; leading blank
    lines are kept too). Returns (text, number of ``token_ids`` that produced it)."""
    seen = 0
    for i, ch in enumerate(text):
        if ch == "\n" and text[seen:i].strip():
            text = text[:i + 1]
            break
        if ch == "\n":
            seen = i + 1
    else:
        return text, len(token_ids)
    need = len(heal_bytes) + len(text.encode("utf-8"))
    have = 0
    for n, t in enumerate(token_ids, start=1):
        have += len(tok.token_bytes[t])
        if have >= need:
            return text, n
    return text, len(token_ids)
