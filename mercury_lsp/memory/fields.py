"""Parameters stored as fields: in a constructor (or any method) whose body stores a parameter
as an attribute of the same name (``self.id = id``, ``this.gson = gson;``), a line that starts
with the receiver (``self.``, ``this``, ``self.boo``) gets the next parameter the body never
mentions, stored the same way (``book_count = book_count``).

The suffix-array search cannot tell these apart: after ``self.`` every stored attribute of the
repository follows, and the parallel lines need three tokens typed. The header says which names
are left: each parameter, in order, is stored or used once in a body like this, so the first one
the body (above and below the cursor's line) does not mention yet is the line being written. The
candidate goes to the ranker as a parallel line of the nearest stored one with its name swapped
(``parallel.Parallel``), which is what it is.

Text only, for any language whose methods put their parameters in brackets after a name: a
parameter's name is the last word of its piece of the list before any ``=`` (a default) or ``:``
(a type): ``b: int = 0``, ``final List<String> names``, ``private readonly name?: string``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mercury_lsp.memory.parallel import Parallel
from mercury_lsp.memory.query import Query

# Lines looked at above the cursor's for the header and below it for the rest of the body: a
# constructor that stores its parameters is short; past this it is not one.
MAX_LINES = 60
NAME = re.compile(r"[A-Za-z_$][\w$]*")
TYPED = re.compile(r"^(?P<indent>[ \t]*)(?P<recv>[A-Za-z_$][\w$]*)(?P<dot>\.?)(?P<part>[\w$]*)$")
OPENERS, CLOSERS = "([{<", ")]}>"
RECEIVERS = frozenset({"cls", "self", "this"})  # never a parameter to store


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _around(text: str, cursor: int) -> tuple[list[str], list[str]]:
    """The ``MAX_LINES`` lines above the cursor's (nearest first) and below it."""
    start = end = text.rfind("\n", 0, cursor)
    for _ in range(MAX_LINES):
        if start < 0:
            break
        start = text.rfind("\n", 0, start)
    above = [] if end < 0 else text[start + 1:end].split("\n")[::-1]
    stop = after = text.find("\n", cursor)
    for _ in range(MAX_LINES):
        if stop < 0:
            break
        stop = text.find("\n", stop + 1)
    below = [] if after < 0 else text[after + 1:stop if stop >= 0 else len(text)].split("\n")
    return above, below


def _parameters(header: str) -> tuple[list[str], int]:
    """The parameter names of the first bracketed list in ``header`` (the module docstring) and
    the line breaks before it closes; ([], 0) when there is none."""
    open_at = header.find("(")
    if open_at < 0:
        return [], 0
    pieces, depth, piece = [], 0, []
    breaks = 0
    for ch in header[open_at + 1:]:
        breaks += ch == "\n"
        if ch in OPENERS:
            depth += 1
        elif ch in CLOSERS:
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            pieces.append("".join(piece))
            piece = []
            continue
        piece.append(ch)
    else:
        return [], 0  # the list does not close: not a header
    pieces.append("".join(piece))
    names = []
    for p in pieces:
        found = NAME.findall(p.split("=", 1)[0].split(":", 1)[0])
        if found and found[-1] not in RECEIVERS:
            names.append(found[-1])
    return names, breaks


def stored_parameters(query: Query) -> Iterator[Parallel]:
    """The next parameter to store, when the typed line is a receiver and the enclosing method
    stores its parameters (module docstring); nothing otherwise."""
    typed = TYPED.match(query.line_before)
    if typed is None:
        return
    recv, part = typed["recv"], typed["part"]
    if not typed["dot"] and part:
        return
    above, below = _around(query.context.text, query.context.cursor)
    indent = len(typed["indent"].expandtabs())
    header_at = next((i for i, line in enumerate(above) if line.strip() and _indent(line.expandtabs()) < indent
                      and line.strip()[0] not in CLOSERS), None)
    if header_at is None:
        return
    head_indent = _indent(above[header_at].expandtabs())
    params, breaks = _parameters("\n".join(above[:header_at + 1][::-1]))
    if not params:
        return
    body_above = above[:header_at - breaks]  # the header's own lines aside
    body_below = []
    for line in below:
        if line.strip() and _indent(line.expandtabs()) <= head_indent:
            break
        body_below.append(line)
    store = re.compile(rf"^[ \t]*{re.escape(recv)}\.([\w$]+)[ \t]*=[ \t]*([\w$]+)[ \t]*;?[ \t]*$")
    stores = [(away, m) for lines in (body_above, body_below) for away, line in enumerate(lines, 1)
              if (m := store.match(line)) and m[1] == m[2] and m[1] in params]
    if not stores:
        return
    mentioned = {w for line in body_above + body_below for w in NAME.findall(line)}
    nxt = next((p for p in params if p not in mentioned), None)
    if nxt is None or not nxt.startswith(part):
        return
    away, m = min(stores, key=lambda t: t[0])  # the nearest stored line gives the shape
    rest = m[0].strip()[len(recv) + 1:]  # ``id = id`` of ``self.id = id``
    stored = re.sub(rf"(?<![\w$]){re.escape(m[1])}(?![\w$])", nxt, rest)
    out = stored[len(part):] if typed["dot"] else "." + stored
    yield Parallel(out, 1, away, 0, True)
