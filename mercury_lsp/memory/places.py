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
  put in its place gives a second text (``total_weeks_value``). Two words apart likewise: after
  the first, a shorter agreeing run, a second differing word, then the context agreeing again.
  A name's differing pieces are swapped alone too (``total_seconds`` for ``total_minutes`` turns
  ``span.seconds`` into ``span.minutes``: ``_cores``).
* **The word the next line changes** (``_next_line_word``): where the place's next line differs
  from the document's in one word and agrees around it (``par_split(array)`` there,
  ``par_split(array_ref)`` below the cursor), that word is replaced in the place's text too.
* **A new name** (``wildcard``): the place's own word, standing for the typed one, is replaced
  by the typed word in its rest of line (``self.width = width`` there, ``self.height`` typed:
  `` = height``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from mercury_lsp.memory.corpus import Corpus, line_ends
from mercury_lsp.memory.query import Query
from mercury_lsp.memory.shard import Matches
from mercury_lsp.memory.tokens import NEWLINE, SEP, word_mask
from mercury_lsp.syntax import KEYWORDS

WINDOW = 96  # tokens read after each match: the rest of its line and the start of the next
MAX_CONTINUATION_CHARS = 400  # a longer rest of line is data, not code to suggest
AGAIN_TOKENS = 8  # tokens compared past a differing word
AGAIN_MIN = 3  # ... that must agree for the place to count as a parallel
MIN_SUBSTITUTE_CHARS = 3  # a shorter word replaced inside a name is a guess (``i`` in ``is``)
WORD = re.compile(rb"[A-Za-z0-9_$\x80-\xff]+")
MAX_BODY_LINES = 8  # a block span's body read from a place (the suggestion is cut to its kind after)


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


def _replace(text: str, src: str, dst: str) -> str | None:
    for a, b in _variants(src, dst):
        if len(a) >= MIN_SUBSTITUTE_CHARS and a in text:
            return text.replace(a, b)
        pattern = re.compile(rf"(?<![\w$]){re.escape(a)}(?![\w$])")
        if pattern.search(text):
            return pattern.sub(b, text)
    return None


PIECE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|_+|[^_A-Za-z0-9]+")


def _cores(src: str, dst: str) -> tuple[str, str] | None:
    """The pieces two names differ in (``total_seconds``, ``total_minutes``: ``seconds``,
    ``minutes``), when they share pieces around one differing run; None otherwise."""
    a, b = PIECE.findall(src), PIECE.findall(dst)
    if "".join(a) != src or "".join(b) != dst:
        return None
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    j = 0
    while j < min(len(a), len(b)) - i and a[-1 - j] == b[-1 - j]:
        j += 1
    if not i and not j:
        return None
    core_a, core_b = "".join(a[i:len(a) - j]).strip("_"), "".join(b[i:len(b) - j]).strip("_")
    if len(core_a) < MIN_SUBSTITUTE_CHARS or not core_b:
        return None
    return core_a, core_b


def substitute(text: str, src: str, dst: str) -> str | None:
    """``text`` with ``src`` replaced by ``dst`` (whole words, or inside names when at least
    ``MIN_SUBSTITUTE_CHARS`` long), trying the other letter cases too, then the pieces the two
    names differ in (``_cores``); None when it holds neither, or when either is a keyword (two
    places that differ in a keyword are not parallels)."""
    if src in KEYWORDS or dst in KEYWORDS:
        return None
    out = _replace(text, src, dst)
    cores = _cores(src, dst)
    if cores is not None:
        out = _replace(out if out is not None else text, *cores) or out
    return out


def read_places(query: Query, corpus: Corpus, m: Matches, wildcard: int | None = None) -> list[Place]:
    """The places of ``m``; ``wildcard=j``: the matches are of the context before the typed word
    ``j`` tokens back from the cursor (a name found nowhere else): the place's own word stands for
    it, and the ``j`` tokens typed after it must follow it there. Vectorized over the places but
    for reading their texts."""
    if not len(m.ends):
        return []
    q = query.q
    ends = m.ends.astype(np.int64)
    lengths = m.lengths.astype(np.int64)
    win = corpus.window(ends, WINDOW)
    le = line_ends(win)
    ok = le < WINDOW  # a line longer than the window: not something to suggest whole
    starts = corpus.starts
    if wildcard is not None:  # step over the place's word standing for the typed one
        j = wildcard
        ok &= le > j
        ok &= word_mask(corpus.blob, starts[ends].astype(np.int64))
        if j:
            ok &= (win[:, 1:1 + j] == q[:j][::-1][None, :]).all(axis=1)
        skip = 1 + j
        tail_len = np.full(len(ends), query.last_len, np.int64)
        if not j:
            tail_len = np.array([len(_word_at(corpus, int(e)) or b"") for e in ends], np.int64)
        end_of_match = starts[np.minimum(ends + j, len(starts) - 1)].astype(np.int64) + tail_len
    else:
        skip = 0
        end_of_match = starts[ends - 1].astype(np.int64) + query.last_len
    e2 = ends + skip
    le2 = np.maximum(le - skip, 0)
    stop = starts[np.minimum(ends + le, len(starts) - 1)].astype(np.int64)
    first = np.where(le2 > 0, starts[np.minimum(e2, len(starts) - 1)].astype(np.int64), end_of_match)
    after_break = query.typed_tail != "" or (len(q) and q[0] == NEWLINE)
    start = first if after_break else np.minimum(end_of_match, first)
    ok &= (stop - start) <= MAX_CONTINUATION_CHARS
    if corpus is query.doc:  # a place earlier on the cursor's own line: its rest is what was typed since
        ok &= ~((start < query.cursor_byte) & (stop >= query.cursor_byte))
    mismatch = bool(query.typed_tail and not query.typed_tail.strip()) & (first == end_of_match) & (le2 > 0)
    agree = _next_agree(win, le, query.next_ids)
    if wildcard is not None:
        extended, subs = lengths, _wildcard_word(query, corpus, ends, wildcard)
    else:
        extended, subs = _one_word_apart(query, corpus, ends, lengths, ok)
    below = _next_line_word(query, corpus, ends, win, le, agree)
    files = corpus.file_of(ends)
    block = query.context.block
    out = []
    for i in np.flatnonzero(ok):
        text = corpus.text(int(start[i]), int(stop[i])).rstrip()
        if block and not text:  # the place's line ends where the cursor's does: its body follows
            text = _body(corpus, int(end_of_match[i]), int(stop[i]), int(files[i]), query.line_before)
        sub = subs(i, text) if subs is not None else None
        if sub is None:
            sub = below(i, text)
        out.append(Place(text, int(lengths[i]), int(extended[i]), int(files[i]), int(agree[i]),
                         bool(mismatch[i]), sub))
    return out


def _indent(line: bytes) -> bytes:
    return line[:len(line) - len(line.lstrip(b" \t"))]


def _body(corpus: Corpus, header_end: int, line_end: int, file: int, line_before: str) -> str:
    """The block a header line at a place opens: the lines after it deeper than the header (and
    a closing-bracket line at its level), at most ``MAX_BODY_LINES``, indented for the cursor's
    line (the header's indentation there replaces the place's); "" when it has none."""
    file_start, file_end = int(corpus.file_byte[file]), int(corpus.file_byte[file + 1])
    blob = bytes(corpus.blob[file_start:file_end])
    head_start = blob.rfind(b"\n", 0, header_end - file_start) + 1
    base = _indent(blob[head_start:header_end - file_start])
    mine = line_before[:len(line_before) - len(line_before.lstrip(" \t"))]
    lines = []
    for raw in blob[line_end - file_start + 1:].split(b"\n")[:MAX_BODY_LINES]:
        body = raw.rstrip()
        if not body.strip():
            if lines:
                lines.append("")
            continue
        ind = _indent(body)
        if len(ind) <= len(base):
            if body.strip()[:1] in b")]}" and lines:
                lines.append(mine + body.strip().decode("utf-8", "replace"))
            break
        lines.append(mine + body[len(base):].decode("utf-8", "replace") if ind.startswith(base)
                     else mine + body.decode("utf-8", "replace").strip())
    while lines and not lines[-1]:
        lines.pop()
    return "\n" + "\n".join(lines) if lines else ""


def _next_agree(win: np.ndarray, le: np.ndarray, next_ids: np.ndarray) -> np.ndarray:
    """Per place, the tokens of its next line that agree with the document's next tokens."""
    k = len(next_ids)
    rows = np.arange(len(win))
    at_nl = win[rows, np.minimum(le, win.shape[1] - 1)] == NEWLINE
    if not k:
        return np.zeros(len(win), np.int64)
    idx = le[:, None] + 1 + np.arange(k)[None, :]
    inside = idx < win.shape[1]
    got = win[rows[:, None], np.minimum(idx, win.shape[1] - 1)]
    same = (got == next_ids[None, :]) & inside & at_nl[:, None]
    return np.cumprod(same, axis=1).sum(axis=1)


def _next_line_word(query: Query, corpus: Corpus, ends: np.ndarray, win: np.ndarray, le: np.ndarray,
                    agree: np.ndarray):
    """A function giving a place's text with the one word where its next line differs from the
    document's (both agreeing before it and ``AGAIN_MIN`` of ``AGAIN_TOKENS`` after it) replaced
    by the document's, or None: the line below the cursor says which word this copy changes."""
    k = len(query.next_ids)
    rows = np.arange(len(win))
    width = win.shape[1]
    at = le + 1 + agree  # the place's token where its next line stops agreeing
    ok = (agree < k) & (le < width) & (at < width)
    ok &= win[rows, np.minimum(le, width - 1)] == NEWLINE
    if not ok.any():
        return lambda i, text: None
    t = np.arange(AGAIN_TOKENS)[None, :]
    idx = at[:, None] + 1 + t
    qidx = agree[:, None] + 1 + t
    inside = (idx < width) & (qidx < k)
    eq = (win[rows[:, None], np.minimum(idx, width - 1)] == query.next_ids[np.minimum(qidx, max(0, k - 1))]) & inside
    ok &= np.cumprod(eq, axis=1).sum(axis=1) >= AGAIN_MIN

    def sub(i: int, text: str) -> str | None:
        if not ok[i]:
            return None
        src = _word_at(corpus, int(ends[i]) + int(at[i]))
        dst = _word_at(query.doc, query.next_at + int(agree[i]))
        if src is None or dst is None or src == dst:
            return None
        out = substitute(text, src.decode("utf-8", "replace"), dst.decode("utf-8", "replace"))
        return out if out != text else None

    return sub


def _wildcard_word(query: Query, corpus: Corpus, ends: np.ndarray, j: int):
    """A function giving a wildcard place's text with the place's own word (the one standing for
    the typed word ``j`` tokens back) replaced by the typed word, or None when it holds none."""
    typed = _word_at(query.doc, query.cursor_end - 1 - j)

    def sub(i: int, text: str) -> str | None:
        src = _word_at(corpus, int(ends[i]))
        if src is None or typed is None or src == typed:
            return None
        out = substitute(text, src.decode("utf-8", "replace"), typed.decode("utf-8", "replace"))
        return out if out != text else None

    return sub


def _one_word_apart(query: Query, corpus: Corpus, ends: np.ndarray, lengths: np.ndarray, ok: np.ndarray):
    """(tokens matched allowing one differing word per place (or two, each followed by agreeing
    tokens), a function giving a place's text with those words replaced, or None)."""
    q = query.q
    ids = corpus.ids
    src_i = ends - 1 - lengths  # the source's token where the match stopped
    base = ok & (lengths + 1 < len(q)) & (src_i >= 0)
    base[base] = ~np.isin(ids[src_i[base]], (SEP, NEWLINE))
    run = _again(ids, q, src_i, lengths + 1)
    valid = base & (run >= AGAIN_MIN)
    # A second differing word after a shorter run, and the context agreeing again after it.
    src2 = src_i - 1 - run
    q2 = lengths + 1 + run
    second = base & (run >= 1) & (run < AGAIN_TOKENS) & (src2 >= 0) & (q2 + 1 < len(q))
    second[second] = ~np.isin(ids[src2[second]], (SEP, NEWLINE)) & (q[q2[second]] != NEWLINE)
    run2 = _again(ids, q, src2, q2 + 1)
    second &= run2 >= AGAIN_MIN
    # the match past the differing words may go on: the runs are lower bounds (AGAIN_TOKENS compared)
    extended = np.where(second, lengths + 2 + run + run2, np.where(valid, lengths + 1 + run, lengths))

    def sub(i: int, text: str) -> str | None:
        if not (valid[i] or second[i]):
            return None
        pairs = [(int(src_i[i]), query.cursor_end - 1 - int(lengths[i]))]
        if second[i]:
            pairs.append((int(src2[i]), query.cursor_end - 1 - int(q2[i])))
        out = text
        for at, typed in pairs:
            src, dst = _word_at(corpus, at), _word_at(query.doc, typed)
            if src is None or dst is None:
                continue
            swapped = substitute(out, src.decode("utf-8", "replace"), dst.decode("utf-8", "replace"))
            out = out if swapped is None else swapped
        return out if out != text else None

    return extended, sub


def _again(ids: np.ndarray, q: np.ndarray, src: np.ndarray, qfrom: np.ndarray) -> np.ndarray:
    """Per place, the tokens before ``src`` that agree with the query's from ``qfrom`` on (at
    most ``AGAIN_TOKENS``)."""
    k = np.arange(AGAIN_TOKENS)[None, :]
    idx = src[:, None] - 1 - k
    qidx = qfrom[:, None] + k
    inside = (idx >= 0) & (qidx < len(q))
    eq = (ids[np.clip(idx, 0, len(ids) - 1)] == q[np.clip(qidx, 0, len(q) - 1)]) & inside
    return np.cumprod(eq, axis=1).sum(axis=1)
