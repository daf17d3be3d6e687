"""The memory's retrieved context as the backend seam carries it (``InfillSpec.retrieved``): its
definitions and similar chunks (``memory.retrieve``), most relevant first, each with its path
relative to its workspace folder. The backend writes them into the model's window or its FIM
prompt (``backend.retrieved``) and leaves out what does not fit."""

from __future__ import annotations

from pathlib import Path

from mercury_lsp.memory import Chunk
from mercury_lsp.memory.service import uri_path
from mercury_lsp.schema import RetrievedChunk


def shown_path(path: str, roots: list[Path]) -> str:
    """A chunk's path relative to its workspace folder (no local absolute paths in a prompt)."""
    p = Path(uri_path(path) or path)
    for root in roots:
        try:
            return p.relative_to(root).as_posix()
        except ValueError:
            continue
    return p.name


def seam_chunks(chunks: list[Chunk], roots: list[Path]) -> tuple[RetrievedChunk, ...]:
    return tuple(RetrievedChunk(path=shown_path(c.path, roots), text=c.text) for c in chunks)
