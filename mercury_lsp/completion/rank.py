"""One ranker for every candidate of a completion: the memory's continuations and the model's
draft alike get a probability of being exactly the line the user is writing.

The probability comes from the candidate's features (``FEATURES``: what the memory knows about
it — how long a context it follows, how often, how alone, whether the code below agrees — and
what the model thinks of it), by one of two fitted models (``completion.ranker``): boosted trees
(``trees``: the default, ``ranker_trees.json``) or a logistic model (``linear``: one typed table
of weights, ``RankerWeights``, ``ranker.json``). Both are fitted on the completion benchmark's dev
repositories by ``benchmarks/memory/fit_ranker.py`` and shipped beside this module; nothing else
in the daemon holds a tuning number for them. The precision gate (``completion.minProbability``) compares the best candidate's
probability, weighed by its length (``gate_score``, ``completion.lengthWeight``: a long line saves
more when right), with a threshold chosen on the same data.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Protocol

import msgspec

from mercury_lsp.completion.brackets import closes_unopened, open_at
from mercury_lsp.completion.trees import TREES_FILE, Trees, read_table
from mercury_lsp.config import RankerKind
from mercury_lsp.memory.candidates import Features

log = logging.getLogger(__name__)

WEIGHTS_FILE = Path(__file__).with_name("ranker.json")
OPENERS, CLOSERS = "([{", ")]}"
NAME = re.compile(r"[A-Za-z_$][\w$]*")
NEAR_CHARS = 4000  # the document around the cursor whose names count as "nearby" (a screen or two)
# The part of the document "anywhere" reads (each side of the cursor): a bound on the work and
# the memory a huge document costs, far past where names stop telling candidates apart.
DOC_CHARS = 64 * 1024


class RankerWeights(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Logistic-model weights, one per feature (``features``), and the intercept."""
    bias: float = 0.0
    match_tokens: float = 0.0  # log(1 + tokens of context matched)
    match_chars: float = 0.0  # log(1 + characters of context matched)
    covers_line: float = 0.0  # the context reaches past the line's start
    count: float = 0.0  # log(1 + places)
    count_top: float = 0.0  # log(1 + places at its longest context)
    total_top: float = 0.0  # log(1 + places with that context, any text)
    share_top: float = 0.0  # its share of them
    distinct_top: float = 0.0  # log(1 + distinct texts there)
    best_level: float = 0.0  # its context is the longest of any candidate
    in_document: float = 0.0  # log(1 + places in the document)
    in_open: float = 0.0  # log(1 + places in other open documents)
    same_language: float = 0.0
    same_kind: float = 0.0  # test files for a test file, others for others
    extended: float = 0.0  # log(1 + extra tokens matched past one differing word)
    substituted: float = 0.0
    next_agree: float = 0.0  # log(1 + tokens of the next line agreeing)
    space_mismatch: float = 0.0
    trimmed: float = 0.0
    wildcard: float = 0.0
    parallel: float = 0.0  # log(1 + parallel lines near the cursor's giving it)
    parallel_words: float = 0.0  # the fewest words such a line differed in
    parallel_near: float = 0.0  # 1 / (1 + lines to the nearest one); 0: none
    text_chars: float = 0.0  # log(1 + characters suggested)
    balanced: float = 0.0  # the line's brackets balance with it
    overclosed: float = 0.0  # it closes brackets the line never opened
    line_tokens: float = 0.0  # log(1 + tokens typed on the line)
    rank: float = 0.0  # log(1 + its place in the memory's own order)
    margin: float = 0.0  # its share_top minus the best other candidate's
    from_model: float = 0.0  # the model's draft, no memory place behind it
    model_agrees: float = 0.0  # the model's draft is this text
    model_confidence: float = 0.0  # the draft's mean token confidence (model candidates)
    model_score: float = 0.0  # the model's likelihood of the text in its two-sided context (0: not scored)
    names: float = 0.0  # log(1 + names the text writes)
    names_after: float = 0.0  # share of them in the document below the cursor's line (nearby)
    names_before: float = 0.0  # share of them in the document above the cursor (nearby)
    names_unseen: float = 0.0  # share of them nowhere in the document
    # How the candidate stands among the request's others (the memory's places agree or split):
    longest_ratio: float = 0.0  # log(1 + its characters) minus the longest candidate's
    prefix_of: float = 0.0  # log(1 + other candidates that go on from its text)
    extends: float = 0.0  # log(1 + other candidates whose text it goes on from)
    count_share: float = 0.0  # its places / all candidates' places
    first_token_share: float = 0.0  # share of all candidates' places whose first token is its own
    candidates: float = 0.0  # log(1 + candidates)
    match_x_share: float = 0.0  # match_tokens * share_top (a long, unanimous context)
    chars_x_share: float = 0.0  # text_chars * share_top (a long text most places agree on)
    chars_x_match: float = 0.0  # text_chars * match_tokens
    open_mismatch: float = 0.0  # it closes a bracket the code before the cursor left not open (``brackets``)
    # Its lead over the request's other candidates (its value minus the best other's; 0 alone):
    next_agree_lead: float = 0.0  # ... in next_agree: the code below agrees with it more than with the rest
    match_lead: float = 0.0  # ... in match_tokens
    unseen_excess: float = 0.0  # its names_unseen minus the lowest other's (it writes more unknown names)


FEATURES = tuple(f for f in RankerWeights.__struct_fields__ if f != "bias")


# The gate and the order weigh a candidate's probability by what showing it would save:
# ``probability * (characters / REFERENCE_CHARS) ** completion.lengthWeight``. At this length the
# score is the probability itself, so ``completion.minProbability`` keeps its meaning there
# (16: about the median rest of line of the benchmark's cases).
REFERENCE_CHARS = 16
FIRST_TOKEN = re.compile(r"\s*([\w$]+|\S)")


def gate_score(probability: float, text: str, length_weight: float) -> float:
    """What the precision gate compares with ``completion.minProbability``."""
    if not length_weight:
        return probability
    return probability * (max(1, len(text.rstrip())) / REFERENCE_CHARS) ** length_weight


@dataclass
class Scored:
    text: str
    probability: float
    features: dict[str, float]
    source: str  # "memory" | "model" | "both"
    score: float | None = None  # gate_score (None: the probability itself)

    def __post_init__(self) -> None:
        if self.score is None:
            self.score = self.probability


def _brackets(line: str) -> tuple[int, int]:
    """(brackets left open, closers with no opener) of a line."""
    depth = over = 0
    for ch in line:
        if ch in OPENERS:
            depth += 1
        elif ch in CLOSERS:
            if depth:
                depth -= 1
            else:
                over += 1
    return depth, over


@dataclass(frozen=True)
class DocNames:
    """What the ranker reads of the document around the cursor: its names near the cursor above
    it, below its line, and anywhere, and the brackets open at the cursor (``brackets.open_at``)."""
    before: frozenset[str]
    after: frozenset[str]
    anywhere: frozenset[str]
    brackets: str = ""
    language: str = ""  # the grammar's name ("" for plain text)

    @classmethod
    def of(cls, text: str, cursor: int, language: str = "") -> DocNames:
        line_end = text.find("\n", cursor)
        line_end = len(text) if line_end < 0 else line_end
        return cls(frozenset(NAME.findall(text, max(0, cursor - NEAR_CHARS), cursor)),
                   frozenset(NAME.findall(text, line_end, line_end + NEAR_CHARS)),
                   frozenset(NAME.findall(text, max(0, cursor - DOC_CHARS), cursor + DOC_CHARS)),
                   open_at(text, cursor, language), language)


NO_NAMES = DocNames(frozenset(), frozenset(), frozenset())


def features(f: Features | None, text: str, line_before: str, line_tokens: int, rank: int, margin: float,
             *, model_agrees: bool = False, model_confidence: float = 0.0, model_score: float = 0.0,
             doc: DocNames = NO_NAMES, standing: dict[str, float] | None = None) -> dict[str, float]:
    """The ranker's inputs for one candidate (``f``: the memory's features, None for a model draft;
    ``standing``: how it stands among the request's candidates, ``among``)."""
    lg = math.log1p
    open_, over = _brackets(line_before + text)
    names = set(NAME.findall(text))
    n = max(1, len(names))
    base = {"text_chars": lg(len(text)), "balanced": float(open_ == 0 and over == 0), "overclosed": float(over > 0),
            "line_tokens": lg(line_tokens), "rank": lg(rank), "margin": margin,
            "model_agrees": float(model_agrees), "model_confidence": model_confidence, "model_score": model_score,
            "names": lg(len(names)), "names_after": len(names & doc.after) / n,
            "names_before": len(names & doc.before) / n, "names_unseen": len(names - doc.anywhere) / n,
            "open_mismatch": float(closes_unopened(doc.brackets, text, doc.language)),
            **(standing or among([text], [0])[0]), **dict.fromkeys(LEADS, 0.0)}
    if f is None:
        return _interactions({**{k: 0.0 for k in FEATURES}, **base, "from_model": 1.0})
    return _interactions({
        **base, "from_model": 0.0,
        "match_tokens": lg(f.match_tokens), "match_chars": lg(f.match_chars), "covers_line": float(f.covers_line),
        "count": lg(f.count), "count_top": lg(f.count_top), "total_top": lg(f.total_top), "share_top": f.share_top,
        "distinct_top": lg(f.distinct_top), "best_level": float(f.best_level), "in_document": lg(f.in_document),
        "in_open": lg(f.in_open), "same_language": f.same_language, "same_kind": f.same_kind,
        "extended": lg(max(0, f.extended - f.match_tokens)), "substituted": float(f.substituted),
        "next_agree": lg(f.next_agree), "space_mismatch": float(f.space_mismatch), "trimmed": float(f.trimmed),
        "wildcard": float(f.wildcard), "parallel": lg(f.parallel), "parallel_words": float(f.parallel_words),
        "parallel_near": 1.0 / (1.0 + f.parallel_near) if f.parallel else 0.0})


def _first_token(text: str) -> str:
    m = FIRST_TOKEN.match(text)
    return m.group(1) if m else ""


def among(texts: list[str], counts: list[int]) -> list[dict[str, float]]:
    """Per candidate, how it stands among all of them (``texts``: every candidate's text,
    ``counts``: its places, 0 for a model draft)."""
    lg = math.log1p
    if not texts:
        return []
    lens = [len(t.rstrip()) for t in texts]
    longest = max(lg(n) for n in lens)
    total = sum(counts) or 1
    firsts = [_first_token(t) for t in texts]
    by_first: dict[str, int] = {}
    for f, n in zip(firsts, counts, strict=True):
        by_first[f] = by_first.get(f, 0) + n
    bodies = [t.rstrip() for t in texts]
    out = []
    for i, body in enumerate(bodies):
        out.append({"longest_ratio": lg(lens[i]) - longest,
                    "prefix_of": lg(sum(j != i and o.startswith(body) for j, o in enumerate(bodies))),
                    "extends": lg(sum(j != i and body.startswith(o) for j, o in enumerate(bodies))),
                    "count_share": counts[i] / total, "first_token_share": by_first[firsts[i]] / total,
                    "candidates": lg(len(texts))})
    return out


# Lead features: (name, the feature it compares, whether it is measured against the best other
# candidate's value (True) or the lowest other's (False)).
LEADS = {"next_agree_lead": ("next_agree", True), "match_lead": ("match_tokens", True),
         "unseen_excess": ("names_unseen", False)}


def leads(rows: list[dict[str, float]]) -> None:
    """Each row's lead features (``LEADS``) against the other rows of the request, in place."""
    for name, (key, against_best) in LEADS.items():
        values = [x[key] for x in rows]
        for i, x in enumerate(rows):
            others = values[:i] + values[i + 1:]
            if others:
                x[name] = values[i] - (max(others) if against_best else min(others))


def _interactions(x: dict[str, float]) -> dict[str, float]:
    return {**x, "match_x_share": x["match_tokens"] * x["share_top"],
            "chars_x_share": x["text_chars"] * x["share_top"], "chars_x_match": x["text_chars"] * x["match_tokens"]}


def probability(w: RankerWeights, x: dict[str, float]) -> float:
    z = w.bias + sum(getattr(w, k) * x[k] for k in FEATURES)
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


class Ranker(Protocol):
    def probabilities(self, rows: Sequence[dict[str, float]]) -> list[float]:
        """Each candidate's probability of being exactly right, from its features."""
        ...


@dataclass(frozen=True)
class Linear:
    """The logistic ranker."""
    weights: RankerWeights

    def probabilities(self, rows: Sequence[dict[str, float]]) -> list[float]:
        return [probability(self.weights, x) for x in rows]


@cache
def shipped_weights() -> RankerWeights:
    """The fitted table shipped with the daemon (all zeros, a coin flip, when missing)."""
    try:
        return msgspec.json.decode(WEIGHTS_FILE.read_bytes(), type=RankerWeights)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return RankerWeights()


def checked(trees: Trees) -> Trees:
    """The trees, when every feature they split on is one the ranker computes."""
    unknown = sorted(trees.used - set(FEATURES))
    if unknown:
        raise ValueError(f"the trees split on features the ranker does not compute: {', '.join(unknown)}")
    return trees


@cache
def shipped_ranker(kind: RankerKind = "trees") -> Ranker:
    """The fitted ranker of that kind shipped with the daemon; the linear one when the trees'
    table is missing or damaged (said once)."""
    if kind == "trees":
        try:
            return checked(Trees(read_table(TREES_FILE)))
        except (OSError, ValueError, msgspec.DecodeError, msgspec.ValidationError) as e:
            log.warning("the ranker's trees (%s) cannot be read (%s): ranking with the linear weights",
                        TREES_FILE.name, e)
    return Linear(shipped_weights())


@dataclass(frozen=True)
class Draft:
    """The model's own suggestion for the same span."""
    text: str
    confidence: float  # mean token confidence
    score: float = 0.0


def candidate_rows(cands: list, draft: Draft | None, line_before: str,
                   model_scores: dict[str, float] | None = None,
                   doc: DocNames = NO_NAMES) -> list[tuple[str, dict[str, float], str]]:
    """(text, features, source) of every candidate: the memory's in their order, then the
    model's draft when it is not one of them (``source`` "both" when it is)."""
    from mercury_lsp.memory.tokens import tokenize

    line_tokens = len(tokenize(line_before.encode("utf-8")))
    shares = [c.features.share_top for c in cands]
    scores = model_scores or {}
    extra = [draft.text] if draft is not None and draft.text.strip() and all(c.text != draft.text for c in cands) else []
    standing = among([c.text for c in cands] + extra, [c.features.count for c in cands] + [0] * len(extra))
    out = []
    for i, c in enumerate(cands):
        others = max((s for j, s in enumerate(shares) if j != i), default=0.0)
        agrees = draft is not None and draft.text == c.text
        x = features(c.features, c.text, line_before, line_tokens, i, c.features.share_top - others,
                     model_agrees=agrees, model_confidence=draft.confidence if agrees else 0.0,
                     model_score=scores.get(c.text, 0.0), doc=doc, standing=standing[i])
        out.append((c.text, x, "both" if agrees else "memory"))
    if extra:
        x = features(None, draft.text, line_before, line_tokens, len(cands), 0.0,
                     model_confidence=draft.confidence, model_score=scores.get(draft.text, draft.score), doc=doc,
                     standing=standing[-1])
        out.append((draft.text, x, "model"))
    leads([x for _, x, _ in out])
    return out


def rank(cands: list, draft: Draft | None, line_before: str, ranker: Ranker | None = None,
         model_scores: dict[str, float] | None = None, doc: DocNames = NO_NAMES,
         length_weight: float = 0.0) -> list[Scored]:
    """Every candidate with its probability and gate score (``gate_score``), best score first
    (``length_weight`` 0: most probable first; ``ranker``: the shipped default when None)."""
    rows = candidate_rows(cands, draft, line_before, model_scores, doc)
    probs = (ranker or shipped_ranker()).probabilities([x for _, x, _ in rows])
    out = [Scored(text, p, x, source, gate_score(p, text, length_weight))
           for (text, x, source), p in zip(rows, probs, strict=True)]
    out.sort(key=lambda s: -s.score)
    return out
