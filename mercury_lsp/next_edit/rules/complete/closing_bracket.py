"""NE506 closing-bracket: a bracket the user just opened before a block is closed after the block.

**What.** The newest edit wrote a line that ends by opening a block (``{``) inside a call or a
list it opened and did not close (``let v = IdentUnraw::new(match &member {``, ``var opts =
Object.create(options || null, {``): the brackets still open on that line (``(``, ``[``, the
edit's own: the line's old text had fewer) are closed right after the ``}`` that closes the block,
before its ``;`` or ``,`` — when that ``}`` is not followed by the closer already and the closers
there leave the document with fewer parse errors. Grammars with brace blocks only (Rust, Go,
JavaScript, TypeScript); strings and comments are skipped when brackets are counted.

**Why.** Wrapping a block-valued expression in a call is written at its start; the end, lines
below, is the half the user has still to write, and the parse says where it goes.

**Example.** ``let formatvar = match &member {`` -> ``let formatvar = IdentUnraw::new(match &member
{``: the ``};`` that ends the match becomes ``});``.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import CLOSING_BRACKET
from mercury_lsp.next_edit.text import changed_lines
from mercury_lsp.syntax import count_errors

BRACE_GRAMMARS = frozenset(("rust", "go", "javascript", "typescript", "tsx"))
CLOSERS = {"(": ")", "[": "]", "{": "}"}
# A string, a comment or one bracket (what the scan reads; anything else is skipped).
LEXEME = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`|//[^\n]*|/\*.*?\*/|[()\[\]{}]",
                    re.S)
MAX_BLOCK_CHARS = 20_000  # a block longer than this is no expression the user wrapped
ERRORS_LIMIT = 256


def open_before_block(line: str) -> tuple[list[str], int] | None:
    """The brackets ``line`` leaves open before the ``{`` it ends with (outermost first), and
    that ``{``'s column; None when it does not end by opening a block or closes more than it
    opens."""
    stack: list[str] = []
    last = None
    for m in LEXEME.finditer(line):
        t = m.group()
        if t in CLOSERS:
            stack.append(t)
        elif t in ")]}":
            if not stack or CLOSERS[stack.pop()] != t:
                return None
        if t[0] not in "/\"'`":
            last = m
    if last is None or last.group() != "{" or line[last.end():].strip() and not LEXEME.fullmatch(
            line[last.end():].strip()):
        return None
    return stack[:-1], last.start()


def block_end(text: str, brace: int) -> int | None:
    """The offset of the ``}`` that closes the ``{`` at ``brace``; None when it is not closed."""
    depth = 0
    for m in LEXEME.finditer(text, brace, min(len(text), brace + MAX_BLOCK_CHARS)):
        t = m.group()
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                return m.start()
    return None


def run(ctx: RuleContext) -> list[Prediction]:
    """The closers of the newest edit's line after the block it opened (module docstring)."""
    ex = ctx.newest
    home = ctx.by_uri.get(ex.doc.uri) if ex is not None else None
    if home is None or home.doc.grammar not in BRACE_GRAMMARS or not home.tree.root_node.has_error:
        return []
    span = changed_lines(ex.before, ex.after)
    if span is None:
        return []
    lo, old_end, new_end = span
    text = home.doc.text
    opened_by_edit = _net_open(text[lo:new_end]) - _net_open(ex.before[lo:old_end])
    parser = ctx.grammars.parser(home.doc.grammar)
    if parser is None or opened_by_edit <= 0:
        return []
    errors = count_errors(home.tree.root_node, 0, len(text.encode("utf-8")), limit=ERRORS_LIMIT)
    start = lo
    for line in text[lo:new_end].split("\n"):
        found = open_before_block(line)
        here, start = start, start + len(line) + 1
        if found is None or not found[0] or opened_by_edit < len(found[0]):
            continue
        opened, column = found
        end = block_end(text, here + column)
        if end is None or text[end + 1:end + 2] in (")", "]"):
            continue
        closers = "".join(CLOSERS[b] for b in reversed(opened))
        fixed = text[:end + 1] + closers + text[end + 1:]
        if _errors(parser, fixed) >= errors:
            continue
        return [Prediction(home.doc.uri, end + 1, end + 1, closers, CLOSING_BRACKET.value,
                           f"closes the {''.join(opened)} the edit opened before the block", RULE.kind, "syntax", "")]
    return []


def _net_open(text: str) -> int:
    """Round and square brackets opened minus closed in ``text`` (strings and comments aside)."""
    n = 0
    for m in LEXEME.finditer(text):
        n += {"(": 1, "[": 1, ")": -1, "]": -1}.get(m.group(), 0)
    return n


def _errors(parser, text: str) -> int:
    data = text.encode("utf-8")
    return count_errors(parser.parse(data).root_node, 0, len(data), limit=ERRORS_LIMIT)


RULE = Rule("NE506", "closing-bracket", "complete", CLOSING_BRACKET.value, run, __doc__)
