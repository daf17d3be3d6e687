"""Whole statements and lines deleted (shared by the rules that delete them): the statement around
an offset (``statement_lines``), and a deletion widened by what it would leave behind — the
comment directive that spoke of the deleted line, a blank line doubled or opening a block."""

from __future__ import annotations

import re

from mercury_lsp.next_edit.text import line_bounds
from mercury_lsp.next_edit.tree import ParsedDoc

# A comment line that speaks of the line below it alone: it goes when that line goes.
NEXT_LINE_DIRECTIVE = re.compile(r"^\s*(?://|#)\s*(?:eslint-disable-next-line|@ts-ignore|@ts-expect-error"
                                 r"|prettier-ignore|noinspection|type:\s*ignore)\b")
MAX_STATEMENT_LINES = 6
OPENERS = ("{", ":", "(")  # a line ending so opens a block (or a parameter list)
# Nodes whose children are statements (any grammar): a use's statement is the child of one.
BLOCKS = ("block", "statement_list", "statement_block", "compound_statement", "source_file", "module", "program",
          "declaration_list", "field_declaration_list", "class_body", "translation_unit")
# Statements never deleted whole: definitions are the user's to rework.
DEFINITIONS = ("function_definition", "function_declaration", "method_declaration", "function_item",
               "class_definition", "class_declaration", "impl_item", "type_declaration", "struct_item",
               "method_definition", "decorated_definition", "interface_declaration")


def widen_deletion(text: str, s: int, e: int) -> tuple[int, int]:
    """Deleted whole lines ``[s, e)`` widened by the comment directive above them that speaks of
    the next line only (``// eslint-disable-next-line ...``, ``// @ts-expect-error``), and by one
    blank line where deleting them would leave a blank line doubled (blank above and below) or
    ending a block (blank above, a less indented line below)."""
    directive = text.rfind("\n", 0, max(s - 1, 0)) + 1
    if s > 0 and NEXT_LINE_DIRECTIVE.search(text[directive:s - 1]):
        s = directive
    above_start = text.rfind("\n", 0, max(s - 1, 0)) + 1
    blank_above = s > 0 and not text[above_start:s].strip()
    below_end = text.find("\n", e)
    below = text[e:len(text) if below_end < 0 else below_end + 1]
    if not blank_above or e >= len(text):
        return s, e
    if not below.strip():
        return s, e + len(below)
    copy_indent = len(text[s:e]) - len(text[s:e].lstrip(" \t"))
    if len(below) - len(below.lstrip(" \t")) < copy_indent:
        return above_start, e
    return s, e


def widened(text: str, s: int, e: int) -> tuple[int, int]:
    """A deleted line with the blank line after it when it was the first of its block (the
    blank line would open the block), else as ``widen_deletion`` widens it."""
    above = text[text.rfind("\n", 0, max(s - 1, 0)) + 1:s].rstrip()
    below_end = text.find("\n", e)
    if above.endswith(OPENERS) and below_end >= 0 and not text[e:below_end].strip():
        return s, below_end + 1
    return widen_deletion(text, s, e)


def statement_lines(doc: ParsedDoc, offset: int) -> tuple[int, int] | None:
    """The whole lines (with a blank line that deleting them would leave doubled) of the statement
    around ``offset``: the innermost enclosing node directly inside a block that stands alone on
    its lines (``let x = unsafe { f() };``, not ``f()`` in its inner block), when it spans at most
    ``MAX_STATEMENT_LINES`` lines and defines no function, type or class; else None."""
    text = doc.doc.text
    b = doc.b.byte(offset)
    node = doc.tree.root_node.descendant_for_byte_range(b, b + 1)
    while node is not None and node.parent is not None:
        if node.parent.type in BLOCKS:
            if node.type in DEFINITIONS or node.end_point[0] - node.start_point[0] >= MAX_STATEMENT_LINES:
                return None
            s, e = doc.b.char(node.start_byte), doc.b.char(node.end_byte)
            lo, hi = line_bounds(text, s, e)
            if not text[lo:s].strip() and not text[e:hi].strip(" \t;,"):
                return widened(text, lo, min(hi + 1, len(text)))
        node = node.parent
    return None
