"""Parallel lines: the document's own lines near the cursor that the typed line follows word for
word but for a few words, and their rest of line with those words swapped.

Code repeats its shape line by line with other names (``self.width = width`` then
``self.height = height``; ``let serial = s.split(a)`` then ``let parallel = s.par_split(a)``; one
``assert_eq!(b(b"\\t"), unescape(r"\\t"))`` per escape). The suffix-array search finds a place only
where the context right before the cursor matches; when the differing word is the one just typed,
or the second differs too, its match is too short to tell these lines from any other. Here every
line within ``NEAR_LINES`` of the cursor's is aligned with the typed line token by token: the
punctuation must be equal and at most ``MAX_WORDS`` words may differ; the line's rest after the
aligned tokens, with each differing word replaced by the typed one (``places.substitute``), is a
candidate. The ranker reads how many lines give a text, how many words differed and how near the
closest one is (``Features.parallel``, ``parallel_words``, ``parallel_near``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from mercury_lsp.memory.query import Query
from mercury_lsp.memory.tokens import NEWLINE, SEP, is_word_byte

# Lines (each way, blank lines aside) compared with the typed line: half a screen of code, where a
# parallel line is the user's own pattern; further away a like-shaped line is chance (on the
# memory-fit cases 10, 20 and 40 lines gave the ranker the same within 0.1 point; 20 kept).
NEAR_LINES = 20
MAX_WORDS = 2  # words that may differ: more and a line of the same punctuation is no parallel
# Tokens that must agree: ``x = 1`` and ``y = 2`` share a shape by chance (2: 0.4 point fewer
# characters saved on the memory-fit cases than 3; 4: 0.7 fewer).
MIN_SAME = 3


@dataclass(frozen=True)
class Parallel:
    text: str  # the line's rest after the aligned tokens, the differing words swapped
    words: int  # words that differed
    lines_away: int  # non-blank lines between it and the cursor's line
    same: int  # tokens that agreed
    swapped: bool  # a differing word stood in the rest and was replaced


def _lines(ids: np.ndarray) -> np.ndarray:
    """Token index where each line starts (after each NEWLINE or SEP), plus the end."""
    breaks = np.flatnonzero((ids == NEWLINE) | (ids == SEP))
    return breaks + 1


def parallels(query: Query) -> Iterator[Parallel]:
    """The parallel lines near the cursor, nearest first (module docstring)."""
    from mercury_lsp.memory.places import substitute

    doc = query.doc
    ids = doc.ids
    n = query.line_tokens
    if n < 1:
        return
    typed_at = query.cursor_end - n  # the typed line's first token
    typed = ids[typed_at:query.cursor_end]
    words = np.array([is_word_byte(doc.data[int(doc.starts[i])]) for i in range(typed_at, query.cursor_end)])
    starts = _lines(ids)
    here = int(np.searchsorted(starts, typed_at, side="right")) - 1
    space_typed = query.typed_tail != "" and not query.typed_tail.strip()
    for away in range(1, NEAR_LINES + 1):
        for k in (here - away, here + away):
            if k < 0 or k + 1 >= len(starts):
                continue
            a, b = int(starts[k]), int(starts[k + 1]) - 1  # the line's tokens: ids[a:b]
            if b - a <= n:
                continue  # nothing after the aligned tokens
            line = ids[a:a + n]
            differ = line != typed
            if (differ & ~words).any() or differ.sum() > MAX_WORDS or n - differ.sum() < MIN_SAME:
                continue
            pairs = [(i, typed_at + i) for i in np.flatnonzero(differ)]
            if any(not is_word_byte(doc.data[int(doc.starts[a + i])]) for i, _ in pairs):
                continue
            rest_from = int(doc.ends[a + n - 1])
            rest = doc.data[rest_from:int(doc.starts[b])].decode("utf-8", "replace").rstrip()
            if space_typed:
                if rest[:1] not in (" ", "\t"):
                    continue  # the user typed a space where this line has none
                rest = rest.lstrip(" \t")
            text = rest
            for i, j in pairs:
                swapped = substitute(text, query.token_text(a + i), query.token_text(j))
                text = text if swapped is None else swapped
            if text.strip():
                yield Parallel(text, len(pairs), away, int(n - len(pairs)), text != rest)
