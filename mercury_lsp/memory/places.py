"""Reading one matching place: the rest of its line, how its next line agrees with the
document's, and whether its context goes on matching past one differing word.

* **The rest of the line** is read from the source's bytes after the match, so it keeps the
  source's spacing; whitespace the user already typed after the last token is not repeated.
* **Next-line agreement**: the tokens after the place's line compared with the tokens after the
  cursor's line (the code below the cursor is part of the context too).
* **One word apart** (``substitution``): where the match stops at a word that differs (``WEEKS``
  in the document, ``MICROSECONDS`` at the place) and the context agrees again right after it,
  the place is a parallel of the cursor's code; when its rest of line holds that word (in the same
  or another letter case, possibly inside a longer name: ``total_microseconds_value``), the word
  put in its place gives a second text (``total_weeks_value``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from mercury_lsp.memory.corpus import Corpus, line_ends
from mercury_lsp.memory.query import Query
from mercury_lsp.memory.shard import Matches
from mercury_lsp.memory.tokens import NEWLINE, SEP

WINDOW = 96  # tokens read after each match: the rest of its line and the start of the next
MAX_CONTINUATION_CHARS = 400  # a longer rest of line is data, not code to suggest
AGAIN_TOKENS = 8  # tokens compared past a differing word
AGAIN_MIN = 3  # ... that must agree for the place to count as a parallel
MIN_SUBSTITUTE_CHARS = 3  # a shorter word replaced inside a name is a guess (``i`` in ``is``)
WORD = re.compile(rb"[A-Za-z0-9_$\x80-\xff]+")


@dataclass(frozen=True)
class Place:
    text: str  # the rest of the place's line (after the typed whitespace)
    length: int  # tokens matched
    extended: int  # tokens matched allowing one differing word (== length when none)
    file: int  # file index in its corpus
    next_agree: int
    space_mismatch: bool  # the user typed a space where the source has none
    substituted: str | None = None  # the text with the differing word replaced, when it holds it


def _word_at(corpus: Corpus, i: int) -> bytes | None:
    start = int(corpus.starts[i])
    m = WORD.match(bytes(corpus.blob[start:start + 128]))
    return m.group() if m else None


def _variants(src: str, dst: str) -> list[tuple[str, str]]:
    out = [(src, dst)]
    for f in (str.lower, str.upper, str.capitalize):
        pair = (f(src), f(dst))
        if pair not in out and pair[0] != src:
            out.append(pair)
    return out


def substitute(text: str, src: str, dst: str) -> str | None:
    """``text`` with ``src`` replaced by ``dst`` (whole words, or inside names when at least
    ``MIN_SUBSTITUTE_CHARS`` long), trying the other letter cases too; None when it holds none."""
    for a, b in _variants(src, dst):
        if len(a) >= MIN_SUBSTITUTE_CHARS and a in text:
            return text.replace(a, b)
        pattern = re.compile(rf"(?<![\w$]){re.escape(a)}(?![\w$])")
        if pattern.search(text):
            return pattern.sub(b, text)
    return None


def read_places(query: Query, corpus: Corpus, m: Matches, wildcard: int | None = None) -> list[Place]:
    """The places of ``m``; ``wildcard=j``: the matches are of the context before the typed word
    ``j`` tokens back from the cursor (a name found nowhere else): the place's own word stands for
    it, and the ``j`` tokens typed after it must follow it there."""
    if not len(m.ends):
        return []
    ends = m.ends
    win = corpus.window(ends, WINDOW)
    le = line_ends(win)
    files = corpus.file_of(ends)
    next_ids = query.next_ids
    k = len(next_ids)
    after_break = query.typed_tail != "" or (len(query.q) and query.q[0] == NEWLINE)
    out = []
    for i in range(len(ends)):
        e, line_end, length = int(ends[i]), int(le[i]), int(m.lengths[i])
        if line_end >= WINDOW:
            continue  # a line longer than the window: not something to suggest whole
        if wildcard is not None:  # step over the place's word standing for the typed one
            j = wildcard
            word = _word_at(corpus, e) if line_end > j else None
            if word is None or not (win[i, 1:1 + j] == query.q[:j][::-1]).all():
                continue
            end_of_match = int(corpus.starts[e + j]) + (query.last_len if j else len(word))
            e, line_end = e + 1 + j, line_end - 1 - j
        else:
            end_of_match = int(corpus.starts[e - 1]) + query.last_len
        first = int(corpus.starts[e]) if line_end > 0 else end_of_match
        stop = int(corpus.starts[e + line_end])
        start = first if after_break else min(end_of_match, first)
        if stop - start > MAX_CONTINUATION_CHARS:
            continue
        text = corpus.text(start, stop).rstrip()
        mismatch = bool(query.typed_tail and not query.typed_tail.strip() and first == end_of_match and line_end > 0)
        agree = 0
        if k and win[i, line_end] == NEWLINE:
            nxt = win[i, line_end + 1:line_end + 1 + k]
            same = nxt[:k] == next_ids[:len(nxt)]
            agree = len(same) if same.all() else int(np.argmin(same))
        extended, sub = (length, None) if wildcard is not None else _one_word_apart(query, corpus, e, length, text)
        out.append(Place(text, length, extended, int(files[i]), agree, mismatch, sub))
    return out


def _one_word_apart(query: Query, corpus: Corpus, e: int, length: int, text: str) -> tuple[int, str | None]:
    """(tokens matched allowing one differing word, the text with that word replaced or None)."""
    q = query.q
    if length + 1 >= len(q):
        return length, None
    src_i = e - 1 - length  # the source's token where the match stopped
    if src_i < 0 or corpus.ids[src_i] in (SEP, NEWLINE):
        return length, None
    idx = src_i - 1 - np.arange(min(AGAIN_TOKENS, len(q) - length - 1))
    idx = idx[idx >= 0]
    again = corpus.ids[idx] == q[length + 1:length + 1 + len(idx)]
    run = len(again) if again.all() else int(np.argmin(again))
    if run < AGAIN_MIN:
        return length, None
    src = _word_at(corpus, src_i)
    dst = _word_at(query.doc, query.cursor_end - 1 - length)
    if src is None or dst is None:
        return length, None
    # the match past the differing word may go on: ``run`` is a lower bound (AGAIN_TOKENS compared)
    sub = substitute(text, src.decode("utf-8", "replace"), dst.decode("utf-8", "replace"))
    return length + 1 + run, sub if sub != text else None
