"""From candidates to the one suggestion shown: the memory's continuations and the model's draft
ranked together (``rank``), the precision gate, the identifier check, then the suffix trim and
syntax guard every suggestion passes (``pipeline.finish``).

* The memory is asked first (a few milliseconds). By default the model drafts only when the
  memory has no candidate the gate would show (``completion.modelDrafts``: "fallback"): a likely
  memory continuation is answered without a model call.
* Candidates are tried best first (at most ``completion.candidates``) while their gate score
  (the probability weighed by length, ``rank.gate_score``) reaches ``completion.minProbability``.
  A memory continuation is a whole line of the user's
  code: it is shown whole or not at all (a guard that would cut it moves on to the next one); the
  model's draft keeps today's guard (cut back to what parses).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mercury_lsp.completion.identifiers import check, vocabulary
from mercury_lsp.completion.rank import DocNames, Ranker, Scored, rank
from mercury_lsp.config import Settings
from mercury_lsp.memory import Candidate, Context, Memory, OpenDoc


@dataclass(frozen=True)
class MemoryRequest:
    """What a completion job may ask the memory (built on the event loop)."""
    memory: Memory
    open_docs: tuple[OpenDoc, ...]  # the connection's other open documents, at their versions
    grammar: str
    test: bool

    def context(self, uri: str, text: str, cursor: int, replace_end: int, block: bool = False) -> Context:
        return Context(uri, text, cursor, self.grammar, self.test, replace_end, block)


@dataclass
class Choice:
    text: str
    source: str  # "memory" | "model" | "both" | "" (nothing)
    probability: float | None
    gated: bool = False  # a candidate existed but none reached the gate
    tried: list[str] = field(default_factory=list)


Finish = Callable[[str, str], tuple[str, bool, bool]]  # (text, source) -> (text, dropped, cut)


def choose(ranked: list[Scored], settings: Settings, finish: Finish,
           check_names: Callable[[str], str] | None) -> Choice:
    """The best candidate that passes the gate, the identifier check and the guard. A draft of a
    model the ranker was not fitted on (``Settings.calibrated_model``) has no probability to gate
    by: it comes after the memory's candidates and is shown when none of them passes."""
    opts = settings.completion
    trusted = settings.calibrated_model
    order = ranked if trusted else [s for s in ranked if s.source != "model"] + [s for s in ranked if s.source == "model"]
    gated = False
    tried = 0
    for s in order:
        if tried >= opts.candidates:
            break
        if s.score < opts.min_probability and (trusted or s.source != "model"):
            gated = True
            continue  # the rest of the memory's are lower still; an uncalibrated draft may follow
        tried += 1
        text = s.text
        if check_names is not None and s.source == "model":
            text = check_names(text)
        if not text.strip():
            continue
        final, dropped, cut = finish(text, s.source)
        if s.source != "model" and (dropped or cut or final != text):
            continue  # a line of the user's code is shown whole or not at all
        if final:
            return Choice(final, s.source, s.probability)
    return Choice("", "", ranked[0].probability if ranked else None, gated)


def name_checker(req: MemoryRequest | None, doc_text: str, line_before: str) -> Callable[[str], str]:
    """The identifier check for this request; the names it knows are collected on first use (most
    requests show a memory line, which needs no check)."""
    vocab: list = []

    def known(names: set[str]) -> set[str]:
        return req.memory.knows(names, req.open_docs) if req is not None else set()

    def check_text(text: str) -> str:
        if not vocab:
            vocab.append(vocabulary([doc_text, *(d.text for d in req.open_docs)] if req else [doc_text]))
        return check(text, line_before, vocab[0], known)

    return check_text


def memory_candidates(req: MemoryRequest | None, settings: Settings, uri: str, text: str, cursor: int,
                      replace_end: int, block: bool = False) -> list[Candidate]:
    if req is None or not settings.memory.enabled:
        return []
    return req.memory.candidates(req.context(uri, text, cursor, replace_end, block), req.open_docs)


def memory_lines(req: MemoryRequest, uri: str, text: str, cursor: int, length_weight: float = 0.0,
                 ranker: Ranker | None = None) -> list[Scored]:
    """The repository memory's continuations of the line at ``cursor``, ranked with their
    probabilities and gate scores (no model call): the small, stable call for other features
    (next edit's half-typed line, the CLI) — gate their ``score`` with
    ``completion.minProbability``, ``length_weight`` being ``completion.lengthWeight`` and
    ``ranker`` ``completion.ranker``'s; the shipped default when None)."""
    line_before = text[text.rfind("\n", 0, cursor) + 1:cursor]
    cands = req.memory.candidates(req.context(uri, text, cursor, cursor), req.open_docs)
    return rank(cands, None, line_before, ranker, doc=DocNames.of(text, cursor, req.grammar),
                length_weight=length_weight)
