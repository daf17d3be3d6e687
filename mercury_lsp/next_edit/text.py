"""Plain-text helpers of next-edit: identifiers, the smallest diff between two texts and applying
edits (code-point offsets throughout; lines and positions: ``mercury_lsp.text``)."""

from __future__ import annotations

import keyword
from collections.abc import Iterable


def is_identifier(s: str) -> bool:
    return s.isidentifier() and not keyword.iskeyword(s)


def is_ident_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def diff_region(before: str, after: str) -> tuple[int, int, int]:
    """(start, end in ``before``, end in ``after``) of the smallest changed region."""
    n = min(len(before), len(after))
    p = 0
    while p < n and before[p] == after[p]:
        p += 1
    s = 0
    while s < n - p and before[len(before) - 1 - s] == after[len(after) - 1 - s]:
        s += 1
    return p, len(before) - s, len(after) - s


def apply_edits(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """Apply non-overlapping (start, end, new) replacements (code-point offsets)."""
    out, pos = [], 0
    for s, e, new in sorted(edits, key=lambda x: (x[0], x[1])):
        if s < pos:
            raise ValueError("overlapping edits")
        out.append(text[pos:s])
        out.append(new)
        pos = e
    out.append(text[pos:])
    return "".join(out)
