"""Plain-text helpers of next-edit: identifiers, the smallest diff between two texts, line and
position bookkeeping, and applying edits (code-point offsets throughout)."""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable

from mercury_lsp.documents import PositionEncoding, units_len
from mercury_lsp.schema import TextPosition

NEWLINE = re.compile("\n")


def is_identifier(s: str) -> bool:
    return s.isidentifier() and not keyword.iskeyword(s)


def _ident_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _common_prefix(a: str, b: str, limit: int) -> int:
    """Length of the common prefix of ``a`` and ``b`` (at most ``limit``); slices compare in C."""
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid:] == b[len(b) - mid:]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def diff_region(before: str, after: str) -> tuple[int, int, int]:
    """(start, end in ``before``, end in ``after``) of the smallest changed region."""
    n = min(len(before), len(after))
    p = _common_prefix(before, after, n)
    s = _common_suffix(before, after, n - p)
    return p, len(before) - s, len(after) - s


class LineIndex:
    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *(m.end() for m in NEWLINE.finditer(text))]

    def line_of(self, offset: int) -> int:
        import bisect

        return bisect.bisect_right(self.starts, offset) - 1

    def line_start(self, offset: int) -> int:
        return self.starts[self.line_of(offset)]

    def line_end(self, offset: int) -> int:
        line = self.line_of(offset)
        return self.starts[line + 1] - 1 if line + 1 < len(self.starts) else len(self.text)

    def position(self, offset: int, enc: PositionEncoding) -> TextPosition:
        line = self.line_of(offset)
        start = self.starts[line]
        return TextPosition(line, units_len(self.text[start:offset], enc))


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
