"""Inputs and outputs of next-edit prediction, and what it needs from the engine.

The documents and cursor a request sees (``DocState``, ``NextEditQuery``, tuned by
``NextEditOptions`` — the typed ``nextEdit`` settings, defined in ``mercury_lsp.config``), the
locations the syntax finds (``Candidate``), the edits predicted there (``Prediction``,
``Outcome``), and the engine surface the model steps use (``EditModel``, adapted from
``engine.Engine`` by ``EngineEdits``). Built on the event loop, read on the engine worker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from mercury_lsp.config import NextEditOptions
from mercury_lsp.documents import PositionEncoding
from mercury_lsp.engine_client import EngineCancelled
from mercury_lsp.schema import EditKind, EditSource, NextEditTimings

# The kinds of edits that repeat the user's edit elsewhere (not a follow-up the syntax ties).
REPEAT_KINDS: frozenset[EditKind] = frozenset({"repeat", "line-repeat", "move", "supersede"})


@dataclass(frozen=True)
class DocState:
    """One document as next-edit sees it (immutable; built on the event loop)."""
    uri: str
    text: str
    grammar: str | None
    version: int | None
    history: tuple[str, ...] = ()  # texts before the newest 1, 2, ... edit records
    edited_at: float = 0.0  # time of the newest edit (ranks documents)
    edit_times: tuple[float, ...] = ()  # time of each edit record (newest first; orders edits across documents)


@dataclass(frozen=True)
class NextEditQuery:
    docs: tuple[DocState, ...]
    cursor_uri: str
    cursor: int  # code-point offset in the cursor's document
    encoding: PositionEncoding = PositionEncoding.UTF16
    options: NextEditOptions = NextEditOptions()


@dataclass
class Candidate:
    uri: str
    start: int  # code-point offsets in the current text
    end: int
    old_text: str
    kind: EditKind
    expected: str | None  # the syntax-obvious new text (the user's identifier / argument list)
    reason: str
    arg_count: int | None = None  # signature: arguments the new text must have
    # a hole's text when the model fills nothing: the call with each new argument a placeholder
    # named after its parameter (``preamble(w, name)``)
    placeholder: str | None = None
    # a rename's mention in a comment or docstring (``prose.mentions``: NE117's), not code (NE101's)
    mention: bool = False


@dataclass
class Prediction:
    uri: str
    start: int
    end: int
    new_text: str
    confidence: float
    reason: str
    kind: EditKind
    source: EditSource
    old_text: str
    model_text: str = ""  # what the model's refill said (for reports)
    rule: str = ""  # the code of the rule that predicted it (set by the pipeline)


@dataclass(frozen=True)
class Note:
    """A place the user's change may have to reach that no edit is offered for: a string that
    names the renamed definition (``getattr(module, "old")``), which the syntax cannot tie to it
    (``exports``). Sent with the edits (``NextEditResult.notes``), never applied."""
    uri: str
    start: int  # code-point offsets in the current text
    end: int
    message: str
    rule: str = ""  # the code of the rule whose edits it accompanies (set by the pipeline)


@dataclass
class Outcome:
    """Predictions plus what the benchmark reports (not sent to clients); the notes are sent."""
    predictions: list[Prediction]
    candidates: list[Candidate]
    timings: NextEditTimings = field(default_factory=NextEditTimings)
    notes: list[Note] = field(default_factory=list)


class EditModel(Protocol):
    """What next-edit needs from the engine (``EngineEdits`` adapts ``engine.Engine``)."""
    context_tokens: int

    def count_tokens(self, text: str) -> int: ...
    def refill(self, text: str, spans: list[tuple[int, int]], max_tokens: list[int], steps: int,
               cancel: Any) -> list[tuple[str, float]]: ...
    def score(self, text: str, candidates: list[tuple[int, int, str]], cancel: Any) -> list[float]: ...
    def token_probs(self, text: str, stride: int, cancel: Any) -> list[tuple[int, int, float]]: ...


class EngineEdits:
    """Adapts ``engine.Engine`` (or anything with its edit methods) to ``EditModel``: plain
    tuples out; a mercury CancelToken is linked to the engine's own."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self.context_tokens = int(engine.context_tokens)
        self.model_name = str(getattr(engine, "path", "") or "")

    @staticmethod
    def _token(cancel: Any) -> Any:
        return cancel.engine_token() if cancel is not None and hasattr(cancel, "engine_token") else cancel

    def count_tokens(self, text: str) -> int:
        return self._engine.count_tokens(text)

    def refill(self, text, spans, max_tokens, steps, cancel):
        r = self._engine.refill(text, spans, max_tokens, steps=steps, cancel=self._token(cancel))
        return [(s.text, float(s.confidence)) for s in r.spans]

    def score(self, text, candidates, cancel):
        return [float(v) for v in self._engine.score_spans(text, candidates, cancel=self._token(cancel))]

    def token_probs(self, text, stride, cancel):
        return [(s.start, s.end, float(s.probability))
                for s in self._engine.token_scores(text, stride, cancel=self._token(cancel))]


def check_cancelled(cancel: Any) -> None:
    if cancel is not None and cancel.cancelled:
        raise EngineCancelled("next-edit request cancelled")
