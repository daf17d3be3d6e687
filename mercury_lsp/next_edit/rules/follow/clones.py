"""Clone search (shared by ``extracted-function``, NE110): a piece of the tree turned into a regular
expression that finds the same code elsewhere, any spacing and comments between its tokens, with
*holes* for a function's parameters (``Pattern``).

A pattern is the node's leaves in order (a string or a comment is one leaf; comments are left
out), each leaf a literal, except the identifiers naming a parameter: the first of a parameter's
holes matches an *operand* (``OPERAND``: a name, a number, a string or a bracketed group, with
any chain of ``.field``, ``::name``, calls and indexes after it: ``eventName``, ``self.items[0]``,
``opts.get("x")``), the others the same text again (a backreference). A match is a clone only
when it is one node of the tree (or a run of whole statements of one block, for a statement
body): ``a + b`` does not match inside ``x * a + b``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mercury_lsp.next_edit.prose import COMMENTS, NON_CODE
from mercury_lsp.next_edit.tree import ParsedDoc

# What stands between two tokens of a clone: spacing and comments (``//``, ``#``, ``/* */``).
GAP = r"(?:\s|//[^\n]*|#(?![\[!])[^\n]*|/\*.*?\*/)*"
_NAME = r"[A-Za-z_$][\w$]*"
_GROUP = r"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
_INDEX = r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]"
_STRING = r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|`[^`]*`"
OPERAND = (rf"[&*]?(?:{_NAME}|\d[\w.]*|{_STRING}|{_GROUP}|{_INDEX})"
           rf"(?:\s*(?:\.|::|\?\.|->)\s*{_NAME}|\s*{_GROUP}|\s*{_INDEX})*")
IDENTIFIERS = ("identifier", "shorthand_property_identifier")  # a parameter's use (not a field or key)


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern
    holes: tuple[str, ...]  # the parameters in the order their groups appear
    tokens: int  # literal leaves (how specific the pattern is)


def leaves(doc: ParsedDoc, node) -> list:
    """The leaves of ``node`` in order, a string or comment whole, comments left out."""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in COMMENTS:
            continue
        if n.child_count == 0 or (n.type in NON_CODE and n.is_named):
            out.append(n)
            continue
        stack.extend(reversed(n.children))
    return out


def pattern(doc: ParsedDoc, nodes: list, params: tuple[str, ...]) -> Pattern | None:
    """The pattern of ``nodes`` (consecutive siblings), ``params`` its holes (None: no leaves)."""
    parts: list[str] = []
    holes: list[str] = []
    literal = 0
    prev = ""
    for node in (leaf for n in nodes for leaf in leaves(doc, n)):
        text = doc.b.node_text(node)
        if not text:
            continue
        if node.type in IDENTIFIERS and text in params and not _field_position(node):
            part = f"(?P=p{holes.index(text)})" if text in holes else f"(?P<p{len(holes)}>{OPERAND})"
            if text not in holes:
                holes.append(text)
            word_start = True
        else:
            part = re.escape(text)
            literal += 1
            word_start = text[0].isalnum() or text[0] in "_$"
        if parts:
            glue = r"\s+" if (prev[-1:].isalnum() or prev[-1:] in "_$") and word_start else GAP
            parts.append(glue)
        parts.append(part)
        prev = text if node.type not in IDENTIFIERS or text not in params else "x"
    if not parts:
        return None
    head = r"(?<![\w$.])" if parts[0][:1].isalnum() or parts[0].startswith(("(?P", "_", "\\$")) else ""
    tail = r"(?![\w$])" if prev[-1:].isalnum() or prev[-1:] in "_$" else ""
    return Pattern(re.compile(head + "".join(parts) + tail, re.S), tuple(holes), literal)


def _field_position(node) -> bool:
    """The identifier names a member or a key (``x.key``, ``{key: v}``), not a variable."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "keyword_argument" and parent.child_by_field_name("name") == node:
        return True
    prev = node.prev_sibling
    return prev is not None and prev.type in (".", "::", "?.", "->")


def node_spanning(doc: ParsedDoc, start: int, end: int):
    """The outermost node whose span is exactly ``[start, end)`` (code points), or None."""
    b0, b1 = doc.b.byte(start), doc.b.byte(end)
    node = doc.tree.root_node.descendant_for_byte_range(b0, max(b0, b1 - 1))
    while node is not None and not (node.start_byte == b0 and node.end_byte == b1):
        if node.start_byte < b0 or node.end_byte > b1:
            return None
        node = node.parent
    while node is not None and node.parent is not None and node.parent.start_byte == b0 \
            and node.parent.end_byte == b1:
        node = node.parent
    return node


def statements_spanning(doc: ParsedDoc, start: int, end: int, count: int) -> bool:
    """``[start, end)`` is a run of ``count`` whole statements of one block."""
    b0, b1 = doc.b.byte(start), doc.b.byte(end)
    first = doc.tree.root_node.descendant_for_byte_range(b0, b0)
    while first is not None and first.parent is not None and first.parent.start_byte == b0:
        if first.parent.end_byte > b1:
            break
        first = first.parent
    if first is None or first.start_byte != b0:
        return False
    node, n = first, 1
    while node is not None and node.end_byte < b1:
        node = node.next_named_sibling
        while node is not None and node.type in COMMENTS:
            node = node.next_named_sibling
        n += 1
    return node is not None and node.end_byte == b1 and n == count
