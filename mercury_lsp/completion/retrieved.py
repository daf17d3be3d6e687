"""Retrieved context in the model's window: the memory's definitions and similar chunks
(``memory.retrieve``), each under a one-line comment naming where it comes from, as Copilot's
neighbouring-tab snippets are, within a share of the window (``memory.retrievalShare``).

Until the backend seam carries retrieved context as a field of its own, the block goes at the
start of the prefix: every backend (the embedded engine, a shared ``mercury-lsp http``, an
OpenAI-compatible FIM server, Inception's API) then sees it in its FIM prompt unchanged.
"""

from __future__ import annotations

from pathlib import Path

from mercury_lsp.memory import Chunk
from mercury_lsp.memory.service import uri_path

# Line-comment markers of the grammars (and of plain text, which reads "#" as a heading).
COMMENT = {"python": "#", "": "#"}
DEFAULT_COMMENT = "//"  # every other grammar the daemon parses is C-like


def shown_path(path: str, roots: list[Path]) -> str:
    """A chunk's path relative to its workspace folder (no local absolute paths in a prompt)."""
    p = Path(uri_path(path) or path)
    for root in roots:
        try:
            return p.relative_to(root).as_posix()
        except ValueError:
            continue
    return p.name


def context_block(chunks: list[Chunk], grammar: str | None, budget_chars: int, roots: list[Path]) -> str:
    """The retrieved chunks that fit ``budget_chars``, definitions first, as one block of text."""
    marker = COMMENT.get(grammar or "", DEFAULT_COMMENT)
    parts, used = [], 0
    for c in chunks:
        what = f"definition of {c.name}" if c.kind == "definition" else "similar code"
        block = f"{marker} {what} in {shown_path(c.path, roots)}\n{c.text}"
        if used + len(block) > budget_chars:
            continue
        parts.append(block)
        used += len(block)
    return "".join(parts) + "\n" if parts else ""
