"""The identifier check: a name a suggestion writes must exist somewhere the user's code can see.

A name counts as known when the document, another open document or the repository memory holds
it, when the suggestion itself (or the line before it) is defining it (``x =``, ``def x``,
``for x in``, ``let x``, ...), or when it follows a ``.`` (an attribute: it may come from a library
the repository only imports). An unknown name is replaced by the most frequent known name that it
starts (the model stopped early: ``proces`` -> ``process_item``), else the suggestion is cut just
before it (nothing shown when nothing is left).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable

NAME = re.compile(r"(?<![\w$.])[A-Za-z_$][\w$]*")
DEFINERS = ("def", "class", "fn", "func", "function", "let", "const", "var", "val", "for", "as", "import",
            "struct", "enum", "type", "interface", "trait", "mut", "lambda", "catch", "except", "with")
ASSIGNED = re.compile(r"\s*(?::[^=]*)?=(?!=)")  # ``x =`` / ``x: int =``, not ``x ==``
MIN_PREFIX = 2  # an unknown name shorter than this is completed to nothing sensible


SIGNATURE = re.compile(r"^\s*(?:\w+\s+)*(?:def|fn|func|function)\b[^(]*\(")  # a definition's parameters follow


def _defined(text: str, start: int, end: int, before: str) -> bool:
    """Is the name at ``text[start:end]`` being defined here (assigned, declared, a parameter)?"""
    head = (before + text[:start]).rstrip()
    word = head.rsplit(None, 1)[-1] if head else ""
    return word in DEFINERS or bool(ASSIGNED.match(text, end)) or bool(SIGNATURE.match(before + text[:start]))


def vocabulary(texts: Iterable[str]) -> Counter:
    """Names and how often they occur in ``texts`` (the document, the open documents)."""
    c: Counter = Counter()
    for t in texts:
        c.update(m.group() for m in NAME.finditer(t))
    return c


def check(text: str, line_before: str, vocab: Counter, known: Callable[[set[str]], set[str]]) -> str:
    """``text`` with its unknown names replaced or cut (see the module docstring)."""
    names = [(m.start(), m.end(), m.group()) for m in NAME.finditer(text)]
    pending = {n for _, _, n in names if n not in vocab}
    found = known(pending) if pending else set()
    out, pos = [], 0
    for start, end, name in names:
        if name in vocab or name in found or _defined(text, start, end, line_before):
            continue
        longer = [w for w in vocab if w.startswith(name) and w != name] if len(name) >= MIN_PREFIX else []
        if not longer:
            return "".join(out) + text[pos:start].rstrip()
        best = max(longer, key=lambda w: (vocab[w], -len(w)))
        out.append(text[pos:start] + best)
        pos = end
    out.append(text[pos:])
    return "".join(out)
