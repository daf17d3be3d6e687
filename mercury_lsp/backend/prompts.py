"""Fill-in-the-middle prompt formats: build one (for a remote FIM server) or read one back.

The formats are the ones Zed's ``open_ai_compatible_api`` edit-prediction provider sends to
``/v1/completions`` (its ``fim.rs``): the prompt carries the prefix and the suffix between a
model family's special tokens. The HTTP API reads any of them back into (prefix, suffix),
whatever the served model's own tokens are; the remote backend writes the one named in the
``backend.promptFormat`` setting for a vLLM / SGLang / llama.cpp server.

Retrieved context (``schema.RetrievedChunk``) goes where each model family was trained to read
other files: the families with a file-separator token (Qwen2.5-Coder ``<|file_sep|>``,
StarCoder2 ``<file_sep>``, CodeGemma ``<|file_separator|>``) get each chunk as a file of its own
before the FIM prompt (``{sep}{path}\n{text}``, the most relevant last, then ``{sep}`` and the
current file's name), as in their repository-level prompts; the others get the chunks as
comments of the current file's language before the prefix (``backend.retrieved``).
``parse_prompt`` reads the file-separator form back into chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal
from urllib.parse import urlparse

from mercury_lsp.backend.retrieved import comment_block
from mercury_lsp.schema import RetrievedChunk

PromptFormat = Literal["starcoder", "codellama", "deepseek", "qwen", "codegemma", "codestral", "glm"]


@dataclass(frozen=True)
class FimFormat:
    """``template`` has ``{prefix}`` and ``{suffix}``; ``stop`` is what Zed sends with it;
    ``file_sep``: the token that starts another file in the family's repository-level prompts
    (None: retrieved chunks go in as comments)."""
    name: PromptFormat
    template: str
    stop: tuple[str, ...]
    file_sep: str | None = None


FORMATS: dict[str, FimFormat] = {f.name: f for f in (
    FimFormat("codellama", "<PRE> {prefix} <SUF>{suffix} <MID>", ("<PRE>", "<SUF>", "<MID>")),
    FimFormat("starcoder", "<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>",
              ("<|endoftext|>", "<fim_prefix>", "<fim_middle>", "<fim_suffix>"), "<file_sep>"),
    FimFormat("deepseek", "<｜fim▁begin｜>{prefix}<｜fim▁hole｜>{suffix}<｜fim▁end｜>",
              ("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>")),
    FimFormat("qwen", "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>",
              ("<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"), "<|file_sep|>"),
    FimFormat("codegemma", "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>",
              ("<|file_separator|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"), "<|file_separator|>"),
    FimFormat("codestral", "[SUFFIX]{suffix}[PREFIX]{prefix}", ("[PREFIX]", "[SUFFIX]")),
    FimFormat("glm", "<|code_prefix|>{prefix}<|code_suffix|>{suffix}<|code_middle|>",
              ("<|endoftext|>", "<|code_prefix|>", "<|code_suffix|>", "<|code_middle|>")),
)}

# Special tokens a FIM server may echo at the end of its text (cut there, as Zed does).
END_MARKERS = ("<|endoftext|>", "<|file_separator|>", "<|file_sep|>", "<file_sep>", "<|fim_pad|>", "<|fim_prefix|>", "<|fim_middle|>",
               "<|fim_suffix|>", "<fim_prefix>", "<fim_middle>", "<fim_suffix>", "<PRE>", "<SUF>", "<MID>",
               "[PREFIX]", "[SUFFIX]", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>", "<|code_prefix|>",
               "<|code_suffix|>", "<|code_middle|>")


def build_prompt(fmt: PromptFormat, prefix: str, suffix: str, retrieved: Sequence[RetrievedChunk] = (),
                 uri: str | None = None) -> str:
    """The FIM prompt, with ``retrieved`` in the format's own way (module docstring); ``uri``:
    the current document (only its file name is sent, never the user's directories)."""
    f = FORMATS[fmt]
    if not retrieved:
        return f.template.format(prefix=prefix, suffix=suffix)
    if f.file_sep is None:
        return f.template.format(prefix=comment_block(retrieved, uri) + prefix, suffix=suffix)
    # the most relevant file last: nearest to the current one
    files = "".join(f"{f.file_sep}{c.path}\n{c.text.rstrip(chr(10))}\n" for c in reversed(retrieved))
    name = PurePosixPath(urlparse(uri).path).name if uri else ""
    return f"{files}{f.file_sep}{name}\n" + f.template.format(prefix=prefix, suffix=suffix)


@dataclass(frozen=True)
class ParsedPrompt:
    prefix: str
    suffix: str
    format: PromptFormat | None  # None: a plain prompt (all prefix)
    retrieved: tuple[RetrievedChunk, ...] = ()  # other files before the prompt (file-separator formats)


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
        files, fim = _files(prompt, fmt.file_sep, head)
        got = _between(fim, head, mid, end)
        if got is not None:
            a, b = got if prefix_first else got[::-1]
            return ParsedPrompt(prefix=a, suffix=b, format=fmt.name, retrieved=files)
    return ParsedPrompt(prefix=prompt, suffix="", format=None)


def _files(prompt: str, sep: str | None, head: str) -> tuple[tuple[RetrievedChunk, ...], str]:
    """(the files before the FIM part, the FIM part) of a repository-level prompt; the last
    file, whose text is the FIM part, is the current one and no chunk."""
    at = prompt.find(head)
    if sep is None or not prompt.startswith(sep) or at < 0:
        return (), prompt
    files = []
    for part in prompt[:at].split(sep)[1:]:
        path, _, text = part.partition("\n")
        if text:
            files.append(RetrievedChunk(path=path, text=text))
    return tuple(reversed(files)), prompt[at:]  # most relevant first, as requests carry them


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
