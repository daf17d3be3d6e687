"""NE502 like-line-ending: a half-typed line at the cursor is finished like the document's lines
that start the same way, else, when it does not parse, like the repository memory's code after
the same code.

**What.** When the line the cursor ends does not parse (the user stopped mid-line: ``err = f(``,
``max_depth: Option``, ``from datetime import``; tree-sitter often puts the error on the line
after, so both lines count), it is finished like the lines that start the same way
(``endings``: the same text, in the document or its text before the recent edits; or the same
tokens up to a renaming of identifiers, among its sibling lines), then, with the repository
memory built and for a line that does not parse, like the repository's code that matches the
code before the cursor (the memory's rests of the line that pass ``completion.minProbability``),
the first of the best-ranked ``MAX_ENDINGS_TRIED`` endings that leaves fewer parse errors on the line.

A line the newest edit wrote can be unfinished and still parse (``this._execs`` in JavaScript,
``err = cmd.execute`` in Go): it is finished too when the ending its like lines have closes with a
character it lacks (``_unfinished``) and adds no parse error — unless a like line ends where it
does (``endings``, strict), or the ending gives back a line the edit just cut short
(``self.c = c or ()`` -> ``self.c = c``).

First of all, ``self.name`` / ``this.name`` typed alone in a function taking a parameter
``name`` it does not store yet is finished `` = name`` (``endings.parameter_ending``), though it
parses and its siblings end otherwise (``self.stream = stream`` above ``self.environment``).

**Why.** The document's own lines are the best evidence of how a line like this one ends, and
the parse tells whether the ending fits.

**Example.** ``this._execs`` typed among ``this._args = [];`` members (JavaScript): `` = [];``
is inserted.
"""

from __future__ import annotations

from collections.abc import Iterator

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.complete.cursor import cursor_line
from mercury_lsp.next_edit.rules.complete.endings import parameter_ending, same_shape, same_start
from mercury_lsp.next_edit.rules.confidence import LIKE_LINE_ENDING
from mercury_lsp.next_edit.symbols import captures
from mercury_lsp.next_edit.text import diff_region, is_ident_char
from mercury_lsp.next_edit.tree import ParsedDoc

# Endings parsed with the line (each a parse of the whole document): the best-ranked few; an
# ending ranked past them is a guess among many.
MAX_ENDINGS_TRIED = 4
TERMINATORS = ";,"  # what ends a statement or a member: the whole of an ending only by style


def run(ctx: RuleContext) -> list[Prediction]:
    """The first ending of the like lines that repairs (or, for a line that parses, finishes)
    the cursor's line (module docstring)."""
    at = ctx.shared(cursor_line)
    if at is None:
        return []
    home, line, cursor, before = at.home, at.line, ctx.query.cursor, at.errors
    text = home.doc.text
    typed = text[line[0]:cursor].rstrip()
    removed = None if before else _written(home, line)
    if not before and removed is None:  # a line that parses and that the user did not just write
        return []
    language = ctx.grammars.language(home.doc.grammar)
    stored = parameter_ending(home, captures(ctx.grammars, home)["parameter"], line, cursor)
    like = ([stored] if stored is not None else []) + same_start(home, line, cursor, not before) + same_shape(
        home, line, cursor, language, not before)
    tried = 0
    for ending, reason in _endings(ctx, home, like, bool(before)):
        if ending == stored:
            reason = "stores the parameter the member is named after"
        elif not before and (not _unfinished(typed, ending) or (typed + ending).strip() in removed):
            continue
        tried += 1
        if tried > MAX_ENDINGS_TRIED:
            break
        errors = at.errors_with(text[:cursor] + ending + text[cursor:], len(ending))
        if errors < before or errors == before == 0:
            return [Prediction(home.doc.uri, cursor, cursor, ending, LIKE_LINE_ENDING.value, reason, RULE.kind,
                               "syntax", "")]
    return []


def _endings(ctx: RuleContext, home: ParsedDoc, like: list[str], broken: bool) -> Iterator[tuple[str, str]]:
    """The document's like lines' endings, then (asked only when those are spent, and only for a
    line that does not parse) the repository memory's rests of the line that pass its gate
    (``recall.Recall.endings``), each once. A line that parses was written whole, or is prose in a
    string: on the dev histories the memory's endings there were all wrong (`` {`` after a Go
    function type, ``()`` and ``.`` in docstrings)."""
    seen: set[str] = set()
    for ending in like:
        if ending not in seen:
            seen.add(ending)
            yield ending, "finishes the line like the lines that start the same way"
    if ctx.memory is None or not broken:
        return
    for ending in ctx.memory.endings(home.doc.uri, home.doc.text, ctx.query.cursor):
        if ending not in seen:
            seen.add(ending)
            yield ending, "finishes the line as the repository's code goes on after the same code"


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


RULE = Rule("NE502", "like-line-ending", "complete", LIKE_LINE_ENDING.value, run, __doc__, self_checked=True)
