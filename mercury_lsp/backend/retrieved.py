"""Retrieved context in a prompt: chunks of other files written where a model reads them.

A model with no file-separator tokens reads other files' code best the way Copilot sends its
"neighbouring tabs": before the prefix, as comments of the current file's language, each chunk
under a header naming its file (``# Compare this snippet from utils/io.py:``), so the prompt is
still valid code of the file being edited. The local engine (``backend.local``) and the remote
FIM formats without file separators (``backend.prompts``) place chunks this way; formats with
file-separator tokens write each chunk as a file of its own instead (``prompts.build_prompt``).

Chunks come most relevant first; a budget keeps the first ones that fit, whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import PurePosixPath
from urllib.parse import urlparse

from mercury_lsp.schema import RetrievedChunk

# Line-comment markers by file extension: how a chunk is written into the current file.
LINE_COMMENTS: dict[str, str] = {
    **dict.fromkeys((".py", ".pyi", ".rb", ".sh", ".bash", ".zsh", ".pl", ".r", ".jl", ".ex", ".exs", ".nim",
                     ".yaml", ".yml", ".toml", ".ps1", ".cmake", ".mk"), "#"),
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".go", ".rs", ".java", ".kt",
                     ".kts", ".scala", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".cu", ".cs",
                     ".swift", ".dart", ".php", ".zig", ".sol", ".proto", ".groovy", ".m"), "//"),
    **dict.fromkeys((".lua", ".sql", ".hs", ".elm", ".ada", ".adb"), "--"),
    **dict.fromkeys((".clj", ".cljs", ".el", ".lisp", ".scm", ".rkt"), ";;"),
    **dict.fromkeys((".erl", ".hrl", ".tex"), "%"),
    ".vim": '"',
}
# A chunk's header (Copilot's words for a neighbouring tab's snippet).
HEADER = "Compare this snippet from {path}:"
# Tokens kept free when chunks are counted one by one: byte-level BPE may merge across the joins
# of chunks and prefix, so the whole block can take a token or two more than its parts.
JOIN_SLACK_TOKENS = 2


def line_comment(uri: str | None) -> str | None:
    """The line-comment marker of the document ``uri`` names; None when it is not known."""
    if not uri:
        return None
    return LINE_COMMENTS.get(PurePosixPath(urlparse(uri).path).suffix.lower())


def commented(chunk: RetrievedChunk, marker: str) -> str:
    """``chunk`` as comment lines under its header, ending with a line break."""
    lines = [HEADER.format(path=chunk.path), *chunk.text.rstrip("\n").split("\n")]
    return "".join(f"{marker} {line}".rstrip() + "\n" for line in lines)


def fit(blocks: Sequence[str], room: int, count: Callable[[str], int]) -> list[str]:
    """The leading ``blocks`` whose tokens (``count``) fit in ``room``, whole, in order."""
    kept: list[str] = []
    left = room - JOIN_SLACK_TOKENS
    for block in blocks:
        need = count(block)
        if need > left:
            break
        kept.append(block)
        left -= need
    return kept


def comment_block(chunks: Sequence[RetrievedChunk], uri: str | None, room: int | None = None,
                  count: Callable[[str], int] | None = None) -> str:
    """The chunks as comments of ``uri``'s language, to go before the prefix (most relevant
    nearest to it); within ``room`` tokens when given. With no document named (an HTTP request)
    the chunks' own language stands in for it: retrieved code is the current file's language.
    Empty when no line comment is known: another file's code is then left out rather than
    written into the prompt as code."""
    marker = line_comment(uri) if uri else next(filter(None, (line_comment(c.path) for c in chunks)), None)
    if marker is None or not chunks:
        return ""
    blocks = [commented(c, marker) for c in chunks]
    if room is not None and count is not None:
        blocks = fit(blocks, room, count)
    return "".join(reversed(blocks))
