"""The line the cursor ends (shared by the rules of the cursor's line, ``rules.complete``): where it
is, the parse errors on it and the line after it (tree-sitter often puts a half-typed line's error
on the line after), and the parser to count them again with an ending in place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mercury_lsp.next_edit.rules.base import RuleContext
from mercury_lsp.next_edit.tree import ParsedDoc
from mercury_lsp.syntax import count_errors

LINE_ERRORS_LIMIT = 64  # errors counted on one line: any number past a few means the same


@dataclass(frozen=True)
class CursorLine:
    home: ParsedDoc  # the cursor's document
    line: tuple[int, int]  # (start, end) of the cursor's line
    region_end: int  # the end of the line after it
    parser: Any
    errors: int  # parse errors on the line and the line after it, now

    def errors_with(self, text: str, added: int) -> int:
        """The parse errors of the same region in ``text`` (the document with ``added`` characters
        inserted on the line)."""
        return line_errors(self.parser, text, self.line[0], self.region_end + added)


def _line(text: str, cursor: int) -> tuple[int, int] | None:
    """(start, end) of the cursor's line when the cursor ends its text; None otherwise."""
    end = text.find("\n", cursor)
    end = len(text) if end < 0 else end
    if text[cursor:end].strip():
        return None
    start = text.rfind("\n", 0, cursor) + 1
    return (start, end) if text[start:cursor].strip() else None


def line_errors(parser, text: str, start: int, end: int) -> int:
    data = text.encode("utf-8")
    lo, hi = len(text[:start].encode("utf-8")), len(text[:end].encode("utf-8"))
    return count_errors(parser.parse(data).root_node, lo, hi, limit=LINE_ERRORS_LIMIT)


def cursor_line(ctx: RuleContext) -> CursorLine | None:
    """The cursor's line when the cursor ends its text, in an edited document with a parser."""
    home = next((p for p in ctx.parsed if p.doc.uri == ctx.query.cursor_uri), None)
    if home is None or not home.doc.history:
        return None
    text = home.doc.text
    line = _line(text, ctx.query.cursor)
    parser = ctx.grammars.parser(home.doc.grammar)
    if line is None or parser is None:
        return None
    nxt = text.find("\n", line[1] + 1)
    region_end = len(text) if nxt < 0 else nxt
    bs, be = home.b.byte(line[0]), home.b.byte(region_end)
    errors = count_errors(home.tree.root_node, bs, be, limit=LINE_ERRORS_LIMIT)
    return CursorLine(home, line, region_end, parser, errors)
