"""The canvas every decoder works on: ``[seg0][MASK x n0][seg1]...[MASK x nk][segk+1]``.

One module fits text into the context, heals span boundaries and reads a span back as text;
infill (one span, ``Canvas``) and next-edit refill (several spans, ``layout_spans``) both build
a ``SpanLayout`` here and hand it to the one decoding core (mercury_engine/decode.py).

Boundary healing: byte-level BPE merges across the cursor (newline + indentation, the rest of
an identifier), so text cut at a span's left edge ends in a token the model rarely saw there.
That last token is removed and its bytes become a constraint on the span's first token (it
must start with them); the healed bytes are stripped from the returned text.

End healing, the same at the span's right edge: when the prefix ends a line and the suffix
starts with indentation, the span is whole lines, and the joint tokenization ends it with one
token holding its last line break *and* the suffix's indentation (``"\n       "`` before
``" for"``). The suffix's leading indentation token is removed (the model then sees the suffix
as it saw suffixes in training) and kept as ``tail_bytes``: a fixed-length fill must end with a
token ending in ``"\n" + tail_bytes`` (mercury_engine/decode.py), and the indentation is stripped from
the end of the returned text (it is the suffix's, which the caller keeps).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from mercury_engine.errors import InvalidRequestError
from mercury_engine.tokenizer import Tokenizer

MIN_CONTEXT_TOKENS = 8  # below this no canvas holds a useful prefix, span and suffix
MAX_SPAN_SHARE = 2  # an infill span takes at most 1/2 of the context: it never crowds out all text
INFILL_SUFFIX_SHARE = 4  # trimming an infill keeps >= 1/4 of the room for the suffix (the prefix matters more)
REFILL_SUFFIX_SHARE = 2  # trimming a refill / scored replacement keeps >= 1/2 of the room after the spans


@dataclass
class SpanLayout:
    """Token ids of a canvas (masks in the spans) and where its spans are."""
    ids: list[int]
    starts: list[int]  # canvas position of each span
    lengths: list[int]
    heal: list[bytes]  # per span: bytes its first token must start with (b"" = none)
    trimmed: bool
    tail: list[bytes] = field(default_factory=list)  # per span: suffix indentation healed off (end healing)

    @property
    def prompt_tokens(self) -> int:
        return len(self.ids) - sum(self.lengths)


@dataclass
class Canvas:
    """An infill canvas ``[prefix][MASK x span_len][suffix]``."""
    prefix_ids: list[int]
    suffix_ids: list[int]
    span_len: int
    heal_bytes: bytes  # bytes the span's first token must start with (b"" = none)
    trimmed: bool
    tail_bytes: bytes = b""  # indentation healed off the suffix's start (b"" = none; end healing)

    @property
    def span_start(self) -> int:
        return len(self.prefix_ids)

    @property
    def length(self) -> int:
        return len(self.prefix_ids) + self.span_len + len(self.suffix_ids)

    def ids(self, mask_id: int) -> list[int]:
        return [*self.prefix_ids, *([mask_id] * self.span_len), *self.suffix_ids]

    def layout(self, mask_id: int) -> SpanLayout:
        return SpanLayout(self.ids(mask_id), [self.span_start], [self.span_len], [self.heal_bytes],
                          self.trimmed, [self.tail_bytes])


# ---------------------------------------------------------------------------- helpers
def heal_boundary(tok: Tokenizer, ids: list[int]) -> tuple[list[int], bytes]:
    """``ids`` without its last token, and that token's bytes (the span's first token must
    start with them); ``(ids, b"")`` when there is nothing to heal."""
    if not ids:
        return ids, b""
    last = tok.token_bytes[ids[-1]] if ids[-1] < len(tok.token_bytes) else b""
    return (ids[:-1], last) if last else (ids, b"")


def heal_end(tok: Tokenizer, prefix: str, suf: list[int]) -> tuple[list[int], bytes]:
    """End healing: ``suf`` without its leading indentation token, and that token's bytes, when
    the span is whole lines (``prefix`` is empty or ends a line) and a line break merges with
    that indentation into one token; ``(suf, b"")`` otherwise."""
    if len(suf) < 2 or (prefix and not prefix.endswith("\n")):
        return suf, b""
    first = tok.token_bytes[suf[0]] if suf[0] < len(tok.token_bytes) else b""
    if not first or first.strip(b" \t"):
        return suf, b""
    merged = tok.encode("\n" + first.decode("ascii"))
    return (suf[1:], first) if len(merged) == 1 else (suf, b"")


def strip_tail(text: str, tail: bytes) -> str:
    """``text`` without the healed suffix indentation at its end (after its last line break)."""
    end = "\n" + tail.decode("ascii") if tail else ""
    return text[: len(text) - len(tail)] if end and text.endswith(end) else text


def fit_context(before: list[int], after: list[int], room: int, after_share: int) -> tuple[list[int], list[int]]:
    """Keep at most ``room`` tokens: the end of ``before`` and the start of ``after``.

    ``after`` keeps at least ``room // after_share`` tokens (or all it has) and whatever
    ``before`` leaves unused; ``before`` keeps the rest."""
    keep_after = min(len(after), max(room // after_share, room - len(before)))
    keep_before = room - keep_after
    return (before[len(before) - keep_before:] if keep_before > 0 else []), after[:keep_after]


def check_context(context_limit: int) -> None:
    if context_limit < MIN_CONTEXT_TOKENS:
        raise InvalidRequestError(f"context limit {context_limit} is too small")


# ---------------------------------------------------------------------------- one span
def build_canvas(tok: Tokenizer, prefix: str, suffix: str, max_tokens: int, context_limit: int,
                 heal: bool = True, heal_tail: bool = True) -> Canvas:
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens <= 0:
        raise InvalidRequestError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    check_context(context_limit)
    pre = tok.encode(prefix) if prefix else []
    suf = tok.encode(suffix) if suffix else []
    heal_bytes = tail_bytes = b""
    if heal:
        pre, heal_bytes = heal_boundary(tok, pre)
    if heal and heal_tail:
        suf, tail_bytes = heal_end(tok, prefix, suf)
    want = max_tokens + (1 if heal_bytes else 0)
    span = min(want, context_limit // MAX_SPAN_SHARE)
    trimmed = span < want
    room = context_limit - span
    if len(pre) + len(suf) > room:
        trimmed = True
        pre, suf = fit_context(pre, suf, room, INFILL_SUFFIX_SHARE)
    return Canvas(pre, suf, span, heal_bytes, trimmed, tail_bytes)


# ---------------------------------------------------------------------------- several spans
def layout_spans(tok: Tokenizer, text: str, spans: list[tuple[int, int]], max_tokens: Sequence[int],
                 context_limit: int, heal: bool = True) -> SpanLayout:
    """Masks in place of the (non-overlapping) character ``spans`` of ``text``; the text before
    the first and after the last span is trimmed to fit ``context_limit``. Spans keep input order."""
    check_context(context_limit)
    order = sorted(range(len(spans)), key=lambda i: spans[i])
    cuts = [spans[i] for i in order]
    segments = [text[: cuts[0][0]]] + [text[cuts[k][1]:cuts[k + 1][0]] for k in range(len(cuts) - 1)] \
        + [text[cuts[-1][1]:]]
    seg_ids = [tok.encode(s) if s else [] for s in segments]
    heal_of = [b""] * len(cuts)
    if heal:
        for k in range(len(cuts)):
            seg_ids[k], heal_of[k] = heal_boundary(tok, seg_ids[k])
    lens = [max_tokens[order[k]] + (1 if heal_of[k] else 0) for k in range(len(cuts))]
    trimmed = sum(len(s) for s in seg_ids) + sum(lens) > context_limit
    if trimmed:  # cut the outer segments (text before the first / after the last span)
        inner = sum(len(s) for s in seg_ids[1:-1]) + sum(lens)
        if inner > context_limit:
            raise InvalidRequestError(
                f"the spans and the text between them need {inner} tokens, more than the context "
                f"({context_limit}); refill fewer or closer spans")
        seg_ids[0], seg_ids[-1] = fit_context(seg_ids[0], seg_ids[-1], context_limit - inner,
                                              REFILL_SUFFIX_SHARE)
    ids: list[int] = []
    starts, lengths, heals = [0] * len(cuts), [0] * len(cuts), [b""] * len(cuts)
    for k, i in enumerate(order):
        ids.extend(seg_ids[k])
        starts[i], lengths[i], heals[i] = len(ids), lens[k], heal_of[k]
        ids.extend([tok.mask_id] * lens[k])
    ids.extend(seg_ids[-1])
    return SpanLayout(ids, starts, lengths, heals, trimmed)


# ---------------------------------------------------------------------------- reading spans
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
