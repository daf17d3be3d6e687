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
then a half-typed line is finished like the lines that start the same way (``endings``: the same
text, in the document or its text before the recent edits; or the same tokens up to a renaming of
identifiers, among its sibling lines), the first such ending that passes the syntax guard.

A line the newest edit wrote can be unfinished and still parse (``this._execs`` in JavaScript,
``err = cmd.execute`` in Go): it is finished too when the ending its like lines have closes with a
character it lacks (``_unfinished``) and adds no parse error — unless a like line ends where it
does (``endings``, strict), or the ending gives back a line the edit just cut short
(``self.c = c or ()`` -> ``self.c = c``).
"""

from __future__ import annotations

from mercury_engine.errors import EngineError, InvalidRequestError
from mercury_lsp.next_edit.endings import open_quote, same_shape, same_start
from mercury_lsp.next_edit.query import EditModel, NextEditQuery, Prediction
from mercury_lsp.next_edit.text import diff_region, is_ident_char
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
# Endings parsed with the line (each a parse of the whole document): the best-ranked few; an
# ending ranked past them is a guess among many.
MAX_ENDINGS_TRIED = 4
TERMINATORS = ";,"  # what ends a statement or a member: the whole of an ending only by style
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
    if open_quote(text[text.rfind("\n", 0, lo) + 1:lo]) is not None:
        return None  # a word typed in a string left open (the tree may still call it a name)
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


def _unfinished(typed: str, ending: str) -> bool:
    """A line that parses is still unfinished when its like lines go on to a closing character it
    lacks (`` = [];`` after ``this._execs``, ``(flags)`` after ``err = cmd.execute``). A lone
    terminator (';', ',') is a style choice, not an unfinished line."""
    last = ending[-1:]
    return (bool(last) and not is_ident_char(last) and last != typed[-1:]
            and bool(ending.strip().strip(TERMINATORS)))


def _written(home: ParsedDoc, line: tuple[int, int]) -> set[str] | None:
    """None unless the newest edit wrote (part of) the line; else the lines it removed (stripped):
    a line the user just cut short (``x or ()`` -> ``x``) is not offered back to them."""
    before = home.doc.history[0]
    p, eb, ea = diff_region(before, home.doc.text)
    if not (p <= line[1] and ea >= line[0]):
        return None
    lo, hi = before.rfind("\n", 0, p) + 1, before.find("\n", eb)
    return {r.strip() for r in before[lo:len(before) if hi < 0 else hi].split("\n")}


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
    typed = text[line[0]:cursor].rstrip()
    removed = None if before else _written(home, line)
    if not before and removed is None:  # a line that parses and that the user did not just write
        return []
    language = grammars.language(home.doc.grammar)
    like = same_start(home, line, cursor, not before) + same_shape(home, line, cursor, language, not before)
    tried = 0
    for ending in dict.fromkeys(like):
        if not before and (not _unfinished(typed, ending) or (typed + ending).strip() in removed):
            continue
        tried += 1
        if tried > MAX_ENDINGS_TRIED:
            break
        after = text[:cursor] + ending + text[cursor:]
        errors = _errors(parser, after, line[0], region_end + len(ending))
        if errors < before or errors == before == 0:
            return [Prediction(home.doc.uri, cursor, cursor, ending, LINE_CONFIDENCE,
                               "finishes the line like the lines that start the same way", "complete", "syntax", "")]
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
