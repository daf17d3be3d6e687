"""From places where the left context matches to suggestions: the rest of each place's line
(``places``), grouped by text, with what the ranker needs to tell them apart (``Features``).

A candidate that repeats the text after the cursor on its line is trimmed to what comes before
that text, or dropped when nothing is left (the completion pipeline's own trim and syntax guard
come after).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from mercury_lsp.memory.corpus import Corpus
from mercury_lsp.memory.fields import stored_parameters
from mercury_lsp.memory.parallel import parallels
from mercury_lsp.memory.places import Place, read_places
from mercury_lsp.memory.query import Query
from mercury_lsp.memory.shard import Matches

MAX_CANDIDATES = 16  # distinct texts kept per request, best-supported first
MAX_PARALLEL = 4  # distinct texts the parallel lines add, nearest first


@dataclass
class Features:
    """What the memory knows about one candidate (fed to ``completion.rank``)."""
    match_tokens: int = 0  # longest context (tokens) after which this text follows
    match_chars: int = 0  # the same in characters (UTF-8 bytes)
    covers_line: bool = False  # that context reaches back past the start of the cursor's line
    count: int = 0  # places (sampled) where this text follows the context, any level
    count_top: int = 0  # ... at its longest level
    total_top: int = 0  # places with that longest context (all texts)
    share_top: float = 0.0  # count_top / places looked at on that level
    distinct_top: int = 0  # distinct texts on that level
    best_level: bool = False  # its longest context is the longest any candidate has
    in_document: int = 0  # places in the document itself
    in_open: int = 0  # places in other open documents
    same_language: float = 0.0  # share of its places in files of the document's language
    same_kind: float = 0.0  # share of its places in files that are tests exactly when this one is
    extended: int = 0  # longest context allowing one differing word (tokens)
    substituted: bool = False  # the text is a place's with that differing word replaced
    next_agree: int = 0  # tokens of the following line that agree with the document's (best place)
    space_mismatch: bool = False  # the user typed a space where the source has none
    trimmed: bool = False  # a repeat of the text after the cursor was cut off
    wildcard: bool = False  # found around a typed word that occurs nowhere else (a new name)
    parallel: int = 0  # lines near the cursor's that give this text as a parallel (``parallel``)
    parallel_words: int = 0  # the fewest words such a line differed in
    parallel_near: int = 0  # lines between the nearest such line and the cursor's (0: none)


@dataclass
class Candidate:
    text: str  # inserted at the cursor, up to the end of the line (nothing after it)
    features: Features = field(default_factory=Features)
    source: str = "memory"  # "memory" | "model"


def gather(query: Query, found: list[tuple[Corpus, Matches, str]], levels: list[int],
           wildcard: int | None = None) -> list[Candidate]:
    """Candidates from every corpus's matches (``kind``: "document", "open" or "disk");
    ``wildcard``: matches of the context before a new typed word (``places.read_places``)."""
    ctx = query.context
    groups: dict[tuple[str, bool], list[int]] = defaultdict(list)
    rows: list[tuple[Place, str, bool, bool]] = []  # place, kind, same language, same kind of file
    for corpus, m, kind in found:
        for place in read_places(query, corpus, m, wildcard):
            info = corpus.files[place.file]
            i = len(rows)
            rows.append((place, kind, info.language == ctx.language, info.test == ctx.test))
            groups[(place.text, False)].append(i)
            if place.substituted is not None:
                groups[(place.substituted, True)].append(i)
    if not groups:
        return []
    lengths = [r[0].length for r in rows]
    length = np.array(lengths, np.int64)
    group_top = np.array([max(lengths[i] for i in idx) for (_, sub), idx in groups.items() if not sub], np.int64)
    lv = np.array(levels, np.int64)
    # places looked at per level (every text, the empty rest of line too), distinct texts there
    looked = {int(v): int((length >= v).sum()) for v in lv}
    distinct = {int(v): int((group_top >= v).sum()) for v in lv}
    totals = dict.fromkeys(levels, 0)
    for _, m, _ in found:
        for r in m.levels:
            if r.length in totals:
                totals[r.length] += r.count
    best_len = int(group_top.max())

    def order(item) -> tuple:
        (text, _), idx = item
        top = max(lengths[i] for i in idx)
        return -top, -sum(lengths[i] >= top for i in idx), -len(idx), text

    out = []
    for (text, sub), idx in sorted(groups.items(), key=order)[:2 * MAX_CANDIDATES]:
        text, trimmed = _trim(text, query.after_line)
        if not text.strip():
            continue
        occ = [rows[i] for i in idx]
        lens = [lengths[i] for i in idx]
        top = max(lens)
        level = max((v for v in levels if v <= top), default=top)
        count_top = sum(x >= level for x in lens)
        f = Features(
            match_tokens=top, match_chars=int(query.q_chars[min(top, len(query.q_chars)) - 1]) if top else 0,
            covers_line=top > query.line_tokens, count=len(occ), count_top=count_top,
            total_top=totals.get(level, count_top), share_top=count_top / max(1, looked.get(level, 1)),
            distinct_top=distinct.get(level, 1), best_level=top == best_len,
            in_document=sum(o[1] == "document" for o in occ), in_open=sum(o[1] == "open" for o in occ),
            same_language=sum(o[2] for o in occ) / len(occ), same_kind=sum(o[3] for o in occ) / len(occ),
            extended=max(o[0].extended for o in occ), substituted=sub,
            next_agree=max(o[0].next_agree for o in occ), space_mismatch=all(o[0].space_mismatch for o in occ),
            trimmed=trimmed, wildcard=wildcard is not None)
        out.append(Candidate(text, f))
    out.sort(key=lambda c: (-c.features.match_tokens, -c.features.count_top, -c.features.count, c.text))
    return _merge_same(out)[:MAX_CANDIDATES]


def _trim(text: str, after: str) -> tuple[str, bool]:
    """``text`` without a tail that repeats the rest of the line after the cursor (stripped)."""
    tail = after.strip()
    body = text.rstrip()
    if not tail or not body.endswith(tail):
        return text, False
    return body[:len(body) - len(tail)].rstrip(" \t"), True


def _merge_same(cands: list[Candidate]) -> list[Candidate]:
    """Texts equal once trimmed: the best-ranked one stands for them."""
    seen: set[str] = set()
    out = []
    for c in cands:
        if c.text in seen:
            continue
        seen.add(c.text)
        out.append(c)
    return out


def with_parallels(query: Query, cands: list[Candidate]) -> list[Candidate]:
    """``cands`` with what the parallel lines near the cursor say (``parallel``, and the next
    parameter a method stores: ``fields``): a text they give that is a candidate already gets
    their features, a new one is added (at most ``MAX_PARALLEL``), trimmed like the others."""
    by_text = {c.text: c for c in cands}
    added: list[Candidate] = []
    for p in chain(parallels(query), stored_parameters(query)):
        text, trimmed = _trim(p.text, query.after_line)
        if not text.strip():
            continue
        c = by_text.get(text)
        if c is None:
            if len(added) >= MAX_PARALLEL:
                continue
            c = Candidate(text, Features(same_language=1.0, same_kind=1.0, trimmed=trimmed,
                                         substituted=p.swapped))
            by_text[text] = c
            added.append(c)
        f = c.features
        if not f.parallel:
            f.parallel_words, f.parallel_near = p.words, p.lines_away
        f.parallel += 1
        f.parallel_words = min(f.parallel_words, p.words)
    return cands + added
