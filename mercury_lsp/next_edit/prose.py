"""Comments and strings (any grammar): telling code from prose, and the extent of one piece of
prose — a string, or a run of comments on consecutive lines — for edits made inside it."""

from __future__ import annotations

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
