"""What next edit asks the repository memory (``mercury_lsp.memory``, docs/memory.md): the words
that finish a half-typed identifier, the endings of a half-typed line, and the file that defines
a name no open document defines.

The memory reaches a query as ``RuleContext.memory`` (a ``Recall``), built on the event loop
with the request (the memory and the connection's other open documents at their versions:
``completion.service.CompletionService.memory_request``). It is None when the memory is off or
has not finished its first build (``Memory.ready``): the rules then work from the open
documents alone, as they did before the memory existed, and no request waits for an index.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from mercury_lsp.completion.choose import MemoryRequest, memory_lines
from mercury_lsp.completion.rank import Ranker
from mercury_lsp.memory.service import uri_path
from mercury_lsp.next_edit.query import DocState
from mercury_lsp.refactor.files import InputError, read_source

WORD = re.compile(r"[A-Za-z_$][\w$]*")


@dataclass(frozen=True)
class Recall:
    """The memory as one next-edit request may ask it, and the precision gate its line
    candidates pass: the ghost text's (``completion.minProbability`` against the probability
    weighed by length, ``completion.lengthWeight``: ``rank.gate_score``)."""
    request: MemoryRequest
    min_probability: float
    length_weight: float
    ranker: Ranker | None = None  # completion.ranker's (None: the shipped default)

    def words(self, uri: str, text: str, lo: int, cursor: int) -> dict[str, float]:
        """The words that finish ``text[lo:cursor]`` (a half-typed identifier), each with the best
        probability of a memory continuation that starts with it: the memory is asked at the
        word's start, the typed part left out, so every place whose context matches the code
        before the word (across the repository) proposes the name it has there."""
        prefix = text[lo:cursor]
        out: dict[str, float] = {}
        for s in memory_lines(self.request, uri, text[:lo] + text[cursor:], lo, ranker=self.ranker):
            m = WORD.match(s.text)
            if m is not None and m.group() != prefix and m.group().startswith(prefix):
                out[m.group()] = max(out.get(m.group(), 0.0), s.probability)
        return out

    def endings(self, uri: str, text: str, cursor: int) -> list[str]:
        """The memory's rests of the line at ``cursor`` that pass the gate, best first, each after
        a context that reaches back past the start of the cursor's line (a line of the repository
        that starts as the typed one does: ``[]string,`` alone is followed by `` error) {`` in
        function signatures, not in the ``make([]string,`` typed — heldout3)."""
        return [s.text for s in memory_lines(self.request, uri, text, cursor, self.length_weight, self.ranker)
                if s.score >= self.min_probability and s.text.strip() and s.features.get("covers_line")]

    def defining_file(self, name: str, open_uris: set[str]) -> DocState | None:
        """The file (not open) that defines ``name``, as the memory found it, read from disk now;
        None when no file the memory may read defines it."""
        found = self.request.memory.definition(name, self.request.open_docs)
        if found is None or found.path in open_uris:
            return None
        path = uri_path(found.path) if "://" in found.path else found.path
        if path is None or not self.request.memory.allowed(path) or Path(path).as_uri() in open_uris:
            return None
        try:
            src, _ = read_source(Path(path))
        except (InputError, OSError):
            return None
        if src is None:
            return None
        return DocState(Path(path).as_uri(), src.text, src.grammar, None)


def best_word(words: dict[str, float], min_probability: float) -> str | None:
    """The one word the memory implies: the only one it proposes, or the only one whose
    probability passes the gate."""
    if len(words) == 1:
        return next(iter(words))
    passed = [w for w, p in words.items() if p >= min_probability]
    return passed[0] if len(passed) == 1 else None
