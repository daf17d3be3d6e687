"""Comments and strings (any grammar): telling code from prose, and the extent of one piece of
prose — a string, or a run of comments on consecutive lines — for edits made inside it."""

from __future__ import annotations

import re

from mercury_lsp.next_edit.scopes import word_in
from mercury_lsp.next_edit.tree import ParsedDoc

# Node types (any grammar) whose identifiers are not code: comments and string contents.
NON_CODE = ("comment", "line_comment", "block_comment", "string", "string_content", "string_fragment",
            "interpreted_string_literal", "raw_string_literal", "template_string", "string_literal")
COMMENTS = ("comment", "line_comment", "block_comment")


def _prose_node(parsed: ParsedDoc | None, start: int):
    if parsed is None:
        return None
    b = parsed.b.byte(start)
    node = parsed.tree.root_node.descendant_for_byte_range(b, b + 1)
    found = None
    while node is not None:
        if node.type in NON_CODE and node.is_named:  # (TypeScript's type keyword ``string`` is no string)
            found = node  # the outermost: a string, not its content
        node = node.parent
    return found


def non_code(parsed: ParsedDoc | None, start: int) -> bool:
    """``start`` is in a comment or a string."""
    return _prose_node(parsed, start) is not None


def inserts_into_prose(parsed: ParsedDoc | None, offset: int) -> bool:
    """Text inserted at ``offset`` extends a comment or a string: the character before it is one
    (an insertion at a line's end stands past the comment it extends), unless that is a string
    literal that closes right there — ``runpytest('-v')`` + ``, '-p', 'no:asyncio'`` is code."""
    node = _prose_node(parsed, max(offset - 1, 0))
    return node is not None and (node.type in COMMENTS or parsed.b.char(node.end_byte) != offset)


def prose_span(parsed: ParsedDoc | None, start: int) -> tuple[int, int] | None:
    """Code-point span of the string or comment at ``start`` (a comment with the comments on the
    lines next to it); None in code."""
    node = _prose_node(parsed, start)
    if node is None:
        return None
    lo, hi = node, node
    if node.type in COMMENTS:
        while (p := lo.prev_sibling) is not None and p.type in COMMENTS and p.end_point[0] >= lo.start_point[0] - 1:
            lo = p
        while (n := hi.next_sibling) is not None and n.type in COMMENTS and n.start_point[0] <= hi.end_point[0] + 1:
            hi = n
    return parsed.b.char(lo.start_byte), parsed.b.char(hi.end_byte)


def mentions(parsed: ParsedDoc, name: str, new: str) -> list[tuple[int, int]]:
    """Code-point spans of ``name`` spelt as code in the document's comments and Python docstrings:
    in backticks or called (`` `name` ``, ``name(``, ``@name(MyMeta)`` in a usage example), or the
    first word of the comment right above the line that spells it, or its ``new`` name (``// Name
    does ...`` above ``func Name``, renamed). A bare
    word elsewhere is left alone even when no sentence would use it as a word (``Defaults to
    UnknownFlagsHandlingErrorOnUnknown.``): on the tuning sets such words were left unchanged by
    the commits that renamed the name. Other strings are left out: a string that spells a name is
    a registry (its note is ``exports``'), one that holds it among words is a message."""
    text = parsed.doc.text
    out = []
    for m in re.finditer(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text):
        node = _prose_node(parsed, m.start())
        if node is None or not (node.type in COMMENTS or _docstring(node)):
            continue
        if text[m.start() - 1:m.start()] == "`" or text[m.end():m.end() + 1] in ("`", "(") \
                or node.type in COMMENTS and _leads_doc_comment(parsed, node, m.start(), (name, new)):
            out.append((m.start(), m.end()))
    return out


def _leads_doc_comment(parsed: ParsedDoc, node, at: int, names: tuple[str, ...]) -> bool:
    """The word at ``at`` opens a comment whose run of comments (``prose_span``) stands right above
    a line that spells one of ``names`` (Go's doc comments, ``// Name does ...`` above ``func Name``)."""
    text = parsed.doc.text
    if text[parsed.b.char(node.start_byte):at].strip("/*#! \t"):
        return False
    _, end = prose_span(parsed, at)
    below = text[end + 1 if text.startswith("\n", end) else end:].split("\n", 1)[0]
    return any(word_in(n, below) for n in names)


def _docstring(node) -> bool:
    """A Python string standing alone as a statement (a module's, class's or function's docstring,
    or an attribute's)."""
    parent = node.parent
    return node.type == "string" and parent is not None and parent.type == "expression_statement" \
        and parent.named_child_count == 1
