"""Text bookkeeping shared by the case builder, the baselines and the scoring: the simple token
regex, token-boundary cursors, the cut document, LSP positions in any encoding, and applying an
inline completion item to the cut document."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Identifiers (letters, digits, _ and $), numbers (with a decimal point only before a digit) and
# single punctuation characters; whitespace separates tokens and is no token.
TOKEN = re.compile(r"(?:[^\W\d]|\$)[\w$]*|\d(?:\w|\.(?=\d))*|\S")


def tokens(text: str) -> list[re.Match]:
    return list(TOKEN.finditer(text))


def first_token(text: str) -> str | None:
    m = TOKEN.search(text)
    return m.group() if m else None


def boundaries(line: str) -> list[int]:
    """Cursor columns at a token boundary inside ``line``: after at least one token and before at
    least one more (the end of a token, or the start of the next one after whitespace)."""
    toks = tokens(line)
    out = {m.end() for m in toks[:-1]} | {m.start() for m in toks[1:]}
    return sorted(out)


# ---------------------------------------------------------------------------- the cut document
@dataclass(frozen=True)
class Cut:
    text: str  # the document shown to the server: the target removed
    cursor: int  # code-point offset of the cursor in ``text``
    target: str  # the rest of the cursor's line in the original (without the newline)


def line_start(text: str, line: int) -> int:
    pos = 0
    for _ in range(line):
        pos = text.index("\n", pos) + 1
    return pos


def cut(original: str, line: int, character: int) -> Cut:
    """``original`` with the rest of ``line`` after ``character`` removed (its newline and every
    other line kept)."""
    start = line_start(original, line)
    cursor = start + character
    end = original.find("\n", cursor)
    end = len(original) if end < 0 else end
    return Cut(original[:cursor] + original[end:], cursor, original[cursor:end])


def line_text(text: str, line: int) -> str:
    start = line_start(text, line)
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


# ---------------------------------------------------------------------------- positions
def units(s: str, encoding: str) -> int:
    """Length of ``s`` in the negotiated position encoding's units."""
    if encoding == "utf-32":
        return len(s)
    if encoding == "utf-8":
        return len(s.encode("utf-8"))
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def column(line: str, unit_col: int, encoding: str) -> int:
    """The code-point column of ``unit_col`` units into ``line`` (clamped to its end)."""
    if encoding == "utf-32":
        return min(unit_col, len(line))
    n = 0
    for i, ch in enumerate(line):
        if n >= unit_col:
            return i
        n += units(ch, encoding)
    return len(line)


def offset(text: str, pos: dict, encoding: str) -> int:
    """Code-point offset of an LSP position in ``text`` (past the end: clamped)."""
    lines = text.split("\n")
    li = pos["line"]
    if li >= len(lines):
        return len(text)
    start = sum(len(x) + 1 for x in lines[:li])
    return start + column(lines[li], pos["character"], encoding)


def position(text: str, off: int, encoding: str) -> dict:
    line = text.count("\n", 0, off)
    start = text.rfind("\n", 0, off) + 1
    return {"line": line, "character": units(text[start:off], encoding)}


# ---------------------------------------------------------------------------- applying an item
def insert_text(item: dict) -> str:
    t = item.get("insertText", "")
    return t.get("value", "") if isinstance(t, dict) else (t or "")


def first_item(result) -> dict | None:
    """The first item of an ``InlineCompletionList`` or an item array (null: none)."""
    items = result.get("items", []) if isinstance(result, dict) else (result or [])
    return items[0] if items else None


def apply_item(text: str, cursor: int, item: dict, encoding: str) -> str:
    """``text`` with ``item``'s insertText put over its range (no range: inserted at ``cursor``)."""
    rng = item.get("range")
    if rng:
        s, e = offset(text, rng["start"], encoding), offset(text, rng["end"], encoding)
        s, e = min(s, e), max(s, e)
    else:
        s = e = cursor
    return text[:s] + insert_text(item) + text[e:]


@dataclass(frozen=True)
class Outcome:
    shown: bool  # the item changes the document
    exact: bool  # the cursor's line then equals the original line (trailing whitespace aside)
    first_token: bool  # the first token it inserts at the cursor is the target's
    inserted: str  # what the cursor's line holds after the typed text (or the whole line when rewritten)
    multi_line: bool = False  # the item also adds lines (only the cursor's line is scored)


def score_item(c: Cut, line: int, character: int, item: dict | None, encoding: str) -> Outcome:
    if item is None:
        return Outcome(False, False, False, "")
    prefix = line_text(c.text, line)[:character]
    new = apply_item(c.text, c.cursor, item, encoding)
    if new == c.text:
        return Outcome(False, False, False, "")
    got = line_text(new, line) if line <= new.count("\n") else ""
    want = prefix + c.target
    exact = got.rstrip() == want.rstrip()
    inserted = got[len(prefix):] if got.startswith(prefix) else got
    ft = got.startswith(prefix) and first_token(inserted) is not None and first_token(inserted) == first_token(c.target)
    return Outcome(True, exact, ft, inserted, new.count("\n") != c.text.count("\n"))


def target_chars(target: str) -> int:
    """The characters a target counts for in "characters saved" (trailing whitespace aside)."""
    return len(target.rstrip())
