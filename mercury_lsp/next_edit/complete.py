"""Cursor-region rewrite: finishing the half-typed line at the cursor.

When the line the cursor ends does not parse (the user stopped mid-line: ``err = f(``,
``max_depth: Option``, ``from datetime import``; tree-sitter often puts the error on the line
after, so both lines count), the rest of the line is masked at the cursor and refilled by the
model (``nextEdit.completeLineModel``), with the text around the cursor in view (the user's edit is just
before it). The fill is kept only when

* it passes the syntax guard: the line has fewer parse errors with it than without;
* the model is confident in it (``model_min_confidence``, the mean confidence of its tokens) —
  and it is not empty: leaving the line as it is must lose to it on the model's own terms.

First (no model needed), an identifier cut short at the cursor is finished from the document's
own names when exactly one of them extends it (tree-sitter identifiers, not comments or strings);
then a half-typed line is finished like a line that starts the same way in the document or in its
text before the recent edits (``err = cmd.execute`` typed where ``err = cmd.execute(flags)`` was
just removed; ``request:`` among ``request: Request;`` members), the most frequent such ending,
then the nearest, that passes the syntax guard.
"""

from __future__ import annotations

from engine.errors import EngineError, InvalidRequestError
from mercury_lsp.next_edit.query import EditModel, NextEditQuery, Prediction
from mercury_lsp.next_edit.text import is_ident_char
from mercury_lsp.next_edit.tree import ParsedDoc, walk
from mercury_lsp.syntax import Grammars, count_errors

LINE_TOKENS = 12  # tokens the model may add to finish a line (a call's arguments, a type, a name)
# Text in view before the cursor (the user's edit and the lines above) and after the line: small,
# so that one refill fits the request's model time box on a CPU.
CONTEXT_BEFORE_CHARS = 600
CONTEXT_AFTER_CHARS = 200
MIN_PREFIX_CHARS = 2  # an identifier prefix shorter than this extends to too many names
IDENTIFIER_TYPES = ("identifier", "field_identifier", "property_identifier", "type_identifier")
IDENTIFIER_CONFIDENCE = 0.7  # the one name of the document that extends the typed prefix
LINE_ERRORS_LIMIT = 64  # errors counted on one line: any number past a few means the same
MIN_LINE_PREFIX_CHARS = 6  # a typed line shorter than this ('x = ', 'if (') starts too many lines
LINE_CONFIDENCE = 0.6  # a line of the document that starts like the typed one


def _line(text: str, cursor: int) -> tuple[int, int] | None:
    """(start, end) of the cursor's line when the cursor ends its text; None otherwise."""
    end = text.find("\n", cursor)
    end = len(text) if end < 0 else end
    if text[cursor:end].strip():
        return None
    start = text.rfind("\n", 0, cursor) + 1
    return (start, end) if text[start:cursor].strip() else None


def _errors(parser, text: str, start: int, end: int) -> int:
    data = text.encode("utf-8")
    lo, hi = len(text[:start].encode("utf-8")), len(text[:end].encode("utf-8"))
    return count_errors(parser.parse(data).root_node, lo, hi, limit=LINE_ERRORS_LIMIT)


def _identifier_completion(home: ParsedDoc, cursor: int) -> str | None:
    text = home.doc.text
    lo = cursor
    while lo > 0 and is_ident_char(text[lo - 1]):
        lo -= 1
    prefix = text[lo:cursor]
    if len(prefix) < MIN_PREFIX_CHARS or prefix[0].isdigit():
        return None
    start = home.b.byte(lo)
    node = home.tree.root_node.descendant_for_byte_range(start, home.b.byte(cursor))
    if node is None or node.type not in IDENTIFIER_TYPES:  # not code (a comment, a string)
        return None
    names = {home.b.node_text(n) for n in walk(home.tree.root_node)
             if n.type in IDENTIFIER_TYPES and n.start_byte != start}  # the cut-short name itself aside
    longer = {n for n in names if n.startswith(prefix) and n != prefix}
    if len(longer) != 1 or prefix in names:  # a name in its own right, or no single way to go on
        return None
    return longer.pop()[len(prefix):]


def _line_endings(home: ParsedDoc, line: tuple[int, int], cursor: int) -> list[str]:
    """Endings of the lines (the document's, and its text before the recent edits) that start
    like the cursor's typed line: those ending like the line above first (';' among members
    ending ';', ',' among arguments), then the most frequent, then the nearest."""
    text = home.doc.text
    typed = text[line[0]:cursor].strip()
    if len(typed) < MIN_LINE_PREFIX_CHARS:
        return []
    found: dict[str, list[int]] = {}
    for source in (text[:line[0]] + text[line[1]:], *home.doc.history[-1:]):
        pos = 0
        for raw in source.split("\n"):
            stripped = raw.strip()
            if stripped.startswith(typed) and len(stripped) > len(typed):
                found.setdefault(stripped[len(typed):], []).append(abs(pos - line[0]))
            pos += len(raw) + 1
    above = text[:line[0]].rstrip()[-1:]
    return sorted(found, key=lambda e: (e[-1:] != above, -len(found[e]), min(found[e])))


def complete_line(query: NextEditQuery, parsed: list[ParsedDoc], grammars: Grammars,
                  model: EditModel | None, cancel) -> list[Prediction]:
    home = next((p for p in parsed if p.doc.uri == query.cursor_uri), None)
    if home is None or not home.doc.history:
        return []
    text, cursor = home.doc.text, query.cursor
    line = _line(text, cursor)
    parser = grammars.parser(home.doc.grammar)
    if line is None or parser is None:
        return []
    nxt = text.find("\n", line[1] + 1)
    region_end = len(text) if nxt < 0 else nxt
    bs, be = home.b.byte(line[0]), home.b.byte(region_end)
    before = count_errors(home.tree.root_node, bs, be, limit=LINE_ERRORS_LIMIT)
    fill, conf, source = _identifier_completion(home, cursor), IDENTIFIER_CONFIDENCE, "syntax"
    if fill is not None:
        return [Prediction(home.doc.uri, cursor, cursor, fill, conf, "finishes the name at the cursor",
                           "complete", source, "")]
    for ending in _line_endings(home, line, cursor) if before else ():
        after = text[:cursor] + ending + text[cursor:]
        if _errors(parser, after, line[0], region_end + len(ending)) < before:
            return [Prediction(home.doc.uri, cursor, cursor, ending, LINE_CONFIDENCE,
                               "finishes the line like a line that starts the same way", "complete", "syntax", "")]
    if before and model is not None and query.options.complete_line_model:
        lo = max(0, cursor - CONTEXT_BEFORE_CHARS)
        window = text[lo: min(len(text), line[1] + CONTEXT_AFTER_CHARS)]
        try:
            (fill, conf), = model.refill(window, [(cursor - lo, cursor - lo)], [LINE_TOKENS], LINE_TOKENS, cancel)
        except (InvalidRequestError, EngineError):  # the window does not fit this model: no fill
            return []
        fill, source = fill.split("\n", 1)[0].rstrip(), "model"
        if conf < query.options.model_min_confidence:
            return []
    if fill is None or not fill.strip():
        return []
    after = text[:cursor] + fill + text[cursor:]
    if _errors(parser, after, line[0], region_end + len(fill)) >= before:
        return []
    return [Prediction(home.doc.uri, cursor, cursor, fill, conf, "finishes the line at the cursor",
                       "complete", source, "")]
