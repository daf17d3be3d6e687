"""NE501 cut-short-name: an identifier cut short at the cursor is finished from the document's own
names, when exactly one of them extends it.

**What.** The word before the cursor (at least ``MIN_PREFIX_CHARS`` characters, a tree-sitter
identifier: not in a comment or a string, nor a word typed in a string left open) is the start
of exactly one other identifier of the document, and no identifier of its own: the rest of that
name is inserted at the cursor.

**Why.** The user stopped typing a name the document already spells out; one candidate only,
so no guess among several.

**Example.** ``result = compute_tot`` in a document defining ``compute_totals``: ``als`` is
inserted.
"""

from __future__ import annotations

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.complete.cursor import cursor_line
from mercury_lsp.next_edit.rules.complete.endings import open_quote
from mercury_lsp.next_edit.rules.confidence import CUT_SHORT_NAME
from mercury_lsp.next_edit.text import is_ident_char
from mercury_lsp.next_edit.tree import ParsedDoc, walk

MIN_PREFIX_CHARS = 2  # an identifier prefix shorter than this extends to too many names
IDENTIFIER_TYPES = ("identifier", "field_identifier", "property_identifier", "type_identifier")


def run(ctx: RuleContext) -> list[Prediction]:
    at = ctx.shared(cursor_line)
    fill = _identifier_completion(at.home, ctx.query.cursor) if at is not None else None
    if fill is None:
        return []
    return [Prediction(at.home.doc.uri, ctx.query.cursor, ctx.query.cursor, fill, CUT_SHORT_NAME.value,
                       "finishes the name at the cursor", RULE.kind, "syntax", "")]


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


RULE = Rule("NE501", "cut-short-name", "complete", CUT_SHORT_NAME.value, run, __doc__, self_checked=True)
