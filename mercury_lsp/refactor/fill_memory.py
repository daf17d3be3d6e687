"""The repository memory for ``refactor fill``: the memory of the files' repository (its git
root, else their common folder) is built or read from its saved index, and each stub's prompt
starts with the definitions of the names around it and the most similar code of other files
(``memory.retrieve``), carried as the infill's retrieved context (``InfillSpec.retrieved``)."""

from __future__ import annotations

import os
from pathlib import Path

from mercury_lsp.completion.retrieved import seam_chunks
from mercury_lsp.memory import Context, Memory
from mercury_lsp.memory.sources import git_root, is_test_path
from mercury_lsp.refactor.files import Source
from mercury_lsp.schema import RetrievedChunk

MAX_RETRIEVAL_SHARE = 0.75  # the same bound as the memory.retrievalShare setting's


class FillMemory:
    def __init__(self, root: Path) -> None:
        self.memory = Memory([root])
        self.memory.start()
        self.memory.wait_built()

    def chunks(self, src: Source, offset: int) -> tuple[RetrievedChunk, ...]:
        ctx = Context(src.uri, src.text, offset, src.grammar or "", is_test_path(str(src.path)))
        return seam_chunks(self.memory.retrieve(ctx), self.memory.roots)

    def close(self) -> None:
        self.memory.close()


def fill_memory(sources: list[Source]) -> FillMemory:
    folder = Path(os.path.commonpath([str(s.path.resolve().parent) for s in sources]))
    return FillMemory(git_root(folder) or folder)
