"""Fill-in-the-middle prompt formats: build one (for a remote FIM server) or read one back.

The formats are the ones Zed's ``open_ai_compatible_api`` edit-prediction provider sends to
``/v1/completions`` (its ``fim.rs``): the prompt carries the prefix and the suffix between a
model family's special tokens. The HTTP API reads any of them back into (prefix, suffix),
whatever the served model's own tokens are; the remote backend writes the one named in the
``backend.promptFormat`` setting for a vLLM / SGLang / llama.cpp server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PromptFormat = Literal["starcoder", "codellama", "deepseek", "qwen", "codegemma", "codestral", "glm"]


@dataclass(frozen=True)
class FimFormat:
    """``template`` has ``{prefix}`` and ``{suffix}``; ``stop`` is what Zed sends with it."""
    name: PromptFormat
    template: str
    stop: tuple[str, ...]


FORMATS: dict[str, FimFormat] = {f.name: f for f in (
    FimFormat("codellama", "<PRE> {prefix} <SUF>{suffix} <MID>", ("<PRE>", "<SUF>", "<MID>")),
    FimFormat("starcoder", "<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>",
              ("<|endoftext|>", "<fim_prefix>", "<fim_middle>", "<fim_suffix>")),
    FimFormat("deepseek", "<｜fim▁begin｜>{prefix}<｜fim▁hole｜>{suffix}<｜fim▁end｜>",
              ("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>")),
    FimFormat("qwen", "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>",
              ("<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>")),
    FimFormat("codegemma", "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>",
              ("<|file_separator|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>")),
    FimFormat("codestral", "[SUFFIX]{suffix}[PREFIX]{prefix}", ("[PREFIX]", "[SUFFIX]")),
    FimFormat("glm", "<|code_prefix|>{prefix}<|code_suffix|>{suffix}<|code_middle|>",
              ("<|endoftext|>", "<|code_prefix|>", "<|code_suffix|>", "<|code_middle|>")),
)}

# Special tokens a FIM server may echo at the end of its text (cut there, as Zed does).
END_MARKERS = ("<|endoftext|>", "<|file_separator|>", "<|fim_pad|>", "<|fim_prefix|>", "<|fim_middle|>",
               "<|fim_suffix|>", "<fim_prefix>", "<fim_middle>", "<fim_suffix>", "<PRE>", "<SUF>", "<MID>",
               "[PREFIX]", "[SUFFIX]", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>", "<|code_prefix|>",
               "<|code_suffix|>", "<|code_middle|>")


def build_prompt(fmt: PromptFormat, prefix: str, suffix: str) -> str:
    return FORMATS[fmt].template.format(prefix=prefix, suffix=suffix)


@dataclass(frozen=True)
class ParsedPrompt:
    prefix: str
    suffix: str
    format: PromptFormat | None  # None: a plain prompt (all prefix)


def _between(text: str, start: str, mid: str, end: str) -> tuple[str, str] | None:
    """(a, b) when ``text`` is exactly ``start + a + mid + b + end`` (``mid`` found first)."""
    if not (text.startswith(start) and text.endswith(end)) or len(text) < len(start) + len(mid) + len(end):
        return None
    body = text[len(start): len(text) - len(end)]
    i = body.find(mid)
    if i < 0:
        return None
    return body[:i], body[i + len(mid):]


def parse_prompt(prompt: str) -> ParsedPrompt:
    """Read a FIM prompt in any of ``FORMATS`` back into its prefix and suffix.

    A prompt in none of them is all prefix. Formats sharing their tokens (qwen/codegemma) read
    as the first one; the text is the same either way.
    """
    for fmt in FORMATS.values():
        t = fmt.template
        prefix_first = t.index("{prefix}") < t.index("{suffix}")
        first, second = ("{prefix}", "{suffix}") if prefix_first else ("{suffix}", "{prefix}")
        head, rest = t.split(first)
        mid, end = rest.split(second)
        got = _between(prompt, head, mid, end)
        if got is not None:
            a, b = got if prefix_first else got[::-1]
            return ParsedPrompt(prefix=a, suffix=b, format=fmt.name)
    return ParsedPrompt(prefix=prompt, suffix="", format=None)


def clean_completion(text: str) -> str:
    """Cut a FIM server's text at the first special token it echoed."""
    for marker in END_MARKERS:
        i = text.find(marker)
        if i >= 0:
            text = text[:i]
    return text


def apply_stop(text: str, stop: list[str]) -> tuple[str, bool]:
    """``text`` cut before the earliest stop sequence; True when one was found."""
    cut = min((i for s in stop if s and (i := text.find(s)) >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)
