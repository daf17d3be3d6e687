"""``refactor fill`` with the repository memory: each stub's infill carries the definitions of the
names around it and similar code from the repository as its retrieved context."""

from __future__ import annotations

from mercury_lsp.refactor.files import read_source
from mercury_lsp.refactor.fill import fill
from mercury_lsp.refactor.fill_memory import fill_memory
from mercury_lsp.schema import InfillOutcome
from mercury_lsp.syntax import Grammars
from tests.support.memory import write

HELPERS = "def normalize_header(name: str, *, lower: bool = True) -> str:\n    return name.strip().lower()\n"
STUB = 'from helpers import normalize_header\n\n\ndef clean(headers):\n    """Every header through normalize_header."""\n    ...\n'


class Recording:
    """Stands in for EngineSession: records the prompts, answers one line."""
    context_tokens, chars_per_token = 256, 3.0

    def __init__(self) -> None:
        self.retrieved: list[tuple] = []

    def infill(self, spec, cancel):
        self.retrieved.append(spec.retrieved)
        return InfillOutcome(text="return [normalize_header(h) for h in headers]\n", tokens=8, mean_confidence=0.9,
                             stop_reason="stop", steps=1, forwards=1, prompt_tokens=0, trimmed=False, elapsed_ms=0.0)


def test_stub_prompts_carry_the_memorys_definitions(tmp_path, monkeypatch):
    monkeypatch.setenv("MERCURY_LSP_CACHE", str(tmp_path / "cache"))
    ws = (tmp_path / "ws").resolve()
    write(ws, {"helpers.py": HELPERS, "clean.py": STUB})
    src, _ = read_source(ws / "clean.py")
    memory = fill_memory([src])
    try:
        session = Recording()
        fill([src], session, Grammars(), max_tokens=16, min_confidence=0.0, jobs=1, retrieved=memory.chunks,
             retrieval_share=0.25)
        first = session.retrieved[0][0]
        assert (first.path, first.text) == ("helpers.py",
                                            "def normalize_header(name: str, *, lower: bool = True) -> str:\n")
        session = Recording()
        fill([src], session, Grammars(), max_tokens=16, min_confidence=0.0, jobs=1, retrieved=memory.chunks,
             retrieval_share=0.0)
        assert session.retrieved == [()]  # no share: the prompt as before
    finally:
        memory.close()
