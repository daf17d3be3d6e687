"""Plain-text helpers of next-edit: tokens and identifiers, lines and their indentation, the
smallest diff between two texts and applying edits (code-point offsets throughout; lines and
positions: ``mercury_lsp.text``)."""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable

from mercury_lsp import syntax

# Tokens are words (identifiers, numbers) and single punctuation characters: a change read as
# tokens does not depend on spacing.
TOKEN = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*|\d[\w.]*|\S")
IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")
# Separators of a path: names joined by them are one reference (``log.Printf``, ``std::fs``).
PATH_SEPARATORS = frozenset({".", ":"})
# Characters per line past which a document is a minified bundle (``dist/qs.js``: one module a
# line), not code anyone edits by hand: hand-written code averages well under 60.
MINIFIED_MEAN_LINE_CHARS = 200
# Keywords and literals of the project's languages: words that give code its shape, never names.
KEYWORDS = syntax.KEYWORDS | syntax.VALUE_WORDS
# A string literal on one line (no escapes read: a quote inside one ends it early).
QUOTED = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`")
# An import line (any grammar): a changed import is not a rename, whatever its names.
IMPORT_LINE = re.compile(r"\s*(?:import\b|from\s+\S+\s+import\b|(?:pub\s+)?use\s|extern\s+crate\b|#\s*include\b)")


# A module path going on after a name (``progress`` of ``crate::progress::{Bar}``, ``pkg`` of
# ``pkg.old``), and coming to one.
PATH_GOES_ON = re.compile(r"\s*(?:::|\.)\s*[\w{*]")
PATH_COMES = re.compile(r"(?:::|\.)\s*\Z")


def declares(name: str, text: str) -> bool:
    """``text`` declares ``name`` with a keyword (``func (c *T) name``, ``def name``, ``const name``...)."""
    return re.search(r"\b(?:func|def|fn|function|class|struct|enum|trait|interface|type|const|let|var)\s+"
                     rf"(?:\([^)]*\)\s*)?{re.escape(name)}(?![\w$])", text) is not None


def line_bounds(text: str, lo: int, hi: int) -> tuple[int, int]:
    """(start, end) of the whole lines of ``text[lo:hi]`` (the end before its line break)."""
    start = text.rfind("\n", 0, lo) + 1
    end = text.find("\n", hi)
    return start, len(text) if end < 0 else end


def indent_of(line: str) -> str:
    """The spaces and tabs ``line`` starts with."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def is_identifier(s: str) -> bool:
    return s.isidentifier() and not keyword.iskeyword(s)


def is_ident_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _common_prefix(a: str, b: str, limit: int) -> int:
    """Length of the common prefix of ``a`` and ``b`` (at most ``limit``): binary search, the
    slices compare in C (a per-character loop took ~40 ms on a 60 kB file)."""
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


def changed_lines(before: str, after: str) -> tuple[int, int, int] | None:
    """(start, end in ``before``, end in ``after``) of the whole lines the smallest diff between
    the two texts touches (the start is the same in both, the ends before their line breaks);
    None when the texts are equal."""
    p, eb, ea = diff_region(before, after)
    if p == eb == ea:
        return None
    lo, hb = line_bounds(before, p, eb)
    return lo, hb, line_bounds(after, p, ea)[1]


def shared_ends(old_lines: list[str], new_lines: list[str]) -> tuple[int, int]:
    """How many whole lines two versions of a region share at their start and at their end (the
    lines no edit wrote: a diff's region is ambiguous there, an inserted line reads as its
    neighbour rewritten)."""
    n = min(len(old_lines), len(new_lines))
    head = next((i for i in range(n) if old_lines[i] != new_lines[i]), n)
    tail = next((i for i in range(n - head) if old_lines[-1 - i] != new_lines[-1 - i]), n - head)
    return head, tail


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


def minified(text: str) -> bool:
    """``text`` reads as a minified or bundled file (its lines average more than
    ``MINIFIED_MEAN_LINE_CHARS`` characters): built output, never a place for an edit."""
    return len(text) > (text.count("\n") + 1) * MINIFIED_MEAN_LINE_CHARS
