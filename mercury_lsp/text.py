"""The one text index of the daemon: lines, LSP positions (UTF-8/16/32 units), code points, UTF-8
bytes and tree-sitter points.

Offsets are Python string indices (Unicode code points). Lines end at ``\\n`` (a ``\\r`` before it
belongs to the line ending). ``Lines`` gives any object with ``text`` and ``line_starts`` the line
and position arithmetic (open documents keep ``line_starts`` up to date edit by edit; snapshots
and ``TextIndex`` carry a fixed one); ``TextIndex`` adds UTF-8 bytes and tree-sitter points.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from enum import StrEnum

NEWLINE = re.compile("\n")


class PositionEncoding(StrEnum):
    UTF8 = "utf-8"
    UTF16 = "utf-16"
    UTF32 = "utf-32"


class PositionError(ValueError):
    """A position that does not exist in the document (message safe to show: no user text)."""


def line_starts_of(text: str) -> list[int]:
    """Offsets where each line of ``text`` starts."""
    return [0, *(m.end() for m in NEWLINE.finditer(text))]


NON_ASCII = re.compile(r"[^\x00-\x7f]")


def utf8_len(s: str) -> int:
    return len(s) if s.isascii() else len(s.encode("utf-8"))


def utf16_len(s: str) -> int:
    if s.isascii():
        return len(s)
    return len(s) + sum(1 for ch in s if ord(ch) > 0xFFFF)


def units_len(s: str, enc: PositionEncoding) -> int:
    if enc is PositionEncoding.UTF32 or s.isascii():
        return len(s)
    if enc is PositionEncoding.UTF16:
        return utf16_len(s)
    return len(s.encode("utf-8"))


def index_of_units(line: str, units: int, enc: PositionEncoding, strict: bool) -> int:
    """Code-point index in ``line`` of a column counted in ``enc`` units.

    Past the end: the line's length (LSP: "defaults back to the line length"). A column inside a
    character (a UTF-16 surrogate pair, a multi-byte UTF-8 sequence): PositionError when
    ``strict``, else the start of that character.
    """
    if units < 0:
        raise PositionError("negative column")
    if enc is PositionEncoding.UTF32 or line.isascii():
        return min(units, len(line))
    if enc is PositionEncoding.UTF16:
        count = 0
        for i, ch in enumerate(line):
            if count >= units:
                if count > units and strict:
                    raise PositionError("column splits a UTF-16 surrogate pair")
                return i if count == units else i - 1
            count += 2 if ord(ch) > 0xFFFF else 1
        if count > units:  # inside the last character
            if strict:
                raise PositionError("column splits a UTF-16 surrogate pair")
            return len(line) - 1
        return len(line)
    return index_of_byte(line, units, strict)


def index_of_byte(line: str, nbytes: int, strict: bool = False) -> int:
    """Code-point index in ``line`` of its UTF-8 byte offset ``nbytes`` (clamped to the end; a byte
    inside a character: PositionError when ``strict``, else the start of that character)."""
    data = line.encode("utf-8")
    if nbytes >= len(data):
        return len(line)
    head = data[:nbytes]
    try:
        return len(head.decode("utf-8"))
    except UnicodeDecodeError:
        if strict:
            raise PositionError("column splits a UTF-8 sequence") from None
        return len(head.decode("utf-8", errors="ignore"))


def end_point(start: tuple[int, int], new: str) -> tuple[int, int]:
    """Tree-sitter point (row, byte column) where ``new`` ends when inserted at ``start``."""
    nl = new.rfind("\n")
    if nl < 0:
        return start[0], start[1] + utf8_len(new)
    return start[0] + new.count("\n"), utf8_len(new[nl + 1:])


class Lines:
    """Line arithmetic over ``self.text`` and ``self.line_starts`` (provided by the subclass)."""

    text: str
    line_starts: Sequence[int]

    @property
    def line_count(self) -> int:
        return len(self.line_starts)

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.line_starts, offset) - 1

    def line_start(self, line: int) -> int:
        return self.line_starts[line]

    def line_end(self, line: int) -> int:
        """Offset of the end of ``line``'s content (before its line ending)."""
        if line + 1 < len(self.line_starts):
            end = self.line_starts[line + 1] - 1
            if end > self.line_starts[line] and self.text[end - 1] == "\r":
                end -= 1
            return end
        return len(self.text)

    def line_text(self, line: int) -> str:
        return self.text[self.line_starts[line]:self.line_end(line)]

    def offset_at(self, line: int, character: int, enc: PositionEncoding, *, strict: bool) -> int:
        """Code-point offset of an LSP position; past the last line: PositionError when ``strict``,
        else the end of the text."""
        if line < 0 or character < 0:
            raise PositionError("negative position")
        if line >= len(self.line_starts):
            if strict:
                raise PositionError(f"line {line} is past the end of the document "
                                    f"({len(self.line_starts)} lines)")
            return len(self.text)
        return self.line_starts[line] + index_of_units(self.line_text(line), character, enc, strict)

    def position_at(self, offset: int, enc: PositionEncoding) -> tuple[int, int]:
        """LSP (line, character) of a code-point offset."""
        line = self.line_of(offset)
        return line, units_len(self.text[self.line_starts[line]:offset], enc)


class TextIndex(Lines):
    """An immutable text with its lines, UTF-8 bytes and byte <-> code-point maps (identity for
    ASCII; built lazily otherwise)."""

    def __init__(self, text: str, line_starts: Sequence[int] | None = None,
                 data: bytes | None = None) -> None:
        self.text = text
        self.line_starts = line_starts if line_starts is not None else line_starts_of(text)
        self._data = data
        self.ascii = text.isascii()
        self._char_of: tuple[list[int], list[int], list[int], list[int]] | None = None

    @property
    def data(self) -> bytes:
        """The text in UTF-8 (encoded on first use)."""
        if self._data is None:
            self._data = self.text.encode("utf-8")
        return self._data

    def byte(self, offset: int) -> int:
        """UTF-8 byte offset of a code-point offset."""
        return offset if self.ascii else len(self.text[:offset].encode("utf-8"))

    def char(self, byte: int) -> int:
        """Code-point offset of a UTF-8 byte offset (a byte inside a character: that character)."""
        if self.ascii:
            return byte
        if self._char_of is None:  # the non-ASCII characters only (found in C): byte start, index, end, extra
            starts, chars, ends, extra, total = [], [], [], [], 0
            for m in NON_ASCII.finditer(self.text):
                first = m.start() + total
                total += utf8_len(m.group()) - 1
                starts.append(first)
                chars.append(m.start())
                ends.append(m.start() + total + 1)
                extra.append(total)
            self._char_of = (starts, chars, ends, extra)
        starts, chars, ends, extra = self._char_of
        k = bisect.bisect_right(starts, byte) - 1
        if k < 0:
            return byte
        return chars[k] if byte < ends[k] else byte - extra[k]

    def point(self, offset: int) -> tuple[int, int]:
        """Tree-sitter point (row, byte column) of a code-point offset."""
        row = self.line_of(offset)
        return row, utf8_len(self.text[self.line_starts[row]:offset])

    def offset_of_point(self, point: tuple[int, int]) -> int:
        """Code-point offset of a tree-sitter point (row, byte column); clamped to the row."""
        row, col = point
        if row >= len(self.line_starts):
            return len(self.text)
        start = self.line_starts[row]
        end = self.line_starts[row + 1] if row + 1 < len(self.line_starts) else len(self.text)
        return start + index_of_byte(self.text[start:end], col)

    def node_text(self, node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", errors="replace")
