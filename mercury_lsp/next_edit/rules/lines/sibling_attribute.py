"""NE305 sibling-attribute: a decorator or attribute line the user put above one definition is put
above its siblings of the same shape.

**What.** The newest edits (``EXAMPLES``) are read for whole lines inserted above a definition
that are all attribute lines of the grammar (``ATTRIBUTE``: Python and TypeScript decorators,
Rust's ``#[...]``, Go's ``//go:`` directives), finished (their brackets closed, none the start of a
longer attribute line of the document: a half-typed ``#[cfg(target_endian`` or ``@pytest.mark``
is NE502's to complete), at most ``MAX_INSERTED_LINES``. The definition's
*shape* is its head line's indentation and kind (the tree's node there: a method, a function, a
field, an enum variant; a line inside a macro has the head's keywords instead) and the attribute
lines that stood next to the insertion (``#[cfg(feature = "std")]`` above, a
``@pytest.mark.parametrize(...)`` below; a Python or TypeScript decorator by its name, its
arguments being data, a Rust attribute by its text). A sibling matches when its head has that
shape, its own attribute lines are the example's (the same names, no more, and none of the
inserted ones), and — when no attribute stood beside the insertion, so the kind alone says
little — its head reads as the example's up to its parameters (``fn from(`` in each ``impl
From``). Where attributes are matched by their text and some stood beside the insertion (Rust's
``#[cfg(feature = "std")]``), they are the shape: an item of any kind and depth gated the same
way matches (the ``impl`` blocks below the methods, all ``std``-only). The lines are inserted at the top of each such sibling's attribute lines (as many of
them above as the example had), re-indented; below the example in its document (the user marks them top
down: the siblings above were passed over), then in the open documents of its language (ranked
below), the nearest first and at most ``MAX_ATTRIBUTE_SITES``. An attribute that names part of
its definition's name (``#[cfg(stable_i128)]`` above ``pub fn be_u128``: ``128``) is about it: only
siblings whose names have that part too get it (``be_i128``, not ``be_i8``).

**Why.** An attribute is seldom meant for one definition: a ``#[cfg_attr(doc_cfg, ...)]`` goes on
every ``std``-only item, a ``@pytest.mark.benchmark()`` on each parametrised test. Whole-line
insertions with anchor lines (NE301) miss them, as each site's neighbours differ.

**Example.** ``#[cfg_attr(doc_cfg, doc(cfg(feature = "std")))]`` added under ``#[cfg(feature =
"std")]`` above ``pub fn chain`` is added under it above ``pub fn root_cause`` too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mercury_lsp.next_edit.examples import to_current
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import (
    LINES_OTHER_DOCUMENT_PENALTY,
    REPEAT_AGE_PENALTY,
    SIBLING_ATTRIBUTE,
)
from mercury_lsp.next_edit.rules.lines.blocks import line_changes, line_starts
from mercury_lsp.next_edit.statements import BLOCKS
from mercury_lsp.next_edit.text import TOKEN, indent_of, line_bounds
from mercury_lsp.next_edit.tree import ParsedDoc

EXAMPLES = 3  # the newest edits read (as the other line rules)
MAX_INSERTED_LINES = 2  # more attribute lines at once is a definition being written, not marked
# The nearest siblings below the example only: the user marks some of them, top down, and which
# ones the shape cannot tell (on the tuning sets, the third site and beyond, and every site above
# the example, were false positives: 31 of 47 edits with six sites, above and below).
MAX_ATTRIBUTE_SITES = 2
# An attribute line per grammar, and the name it is known by.
ATTRIBUTE = {
    "python": re.compile(r"^\s*@(?P<name>[\w.]+)"),
    "typescript": re.compile(r"^\s*@(?P<name>[\w.]+)"),
    "tsx": re.compile(r"^\s*@(?P<name>[\w.]+)"),
    "javascript": re.compile(r"^\s*@(?P<name>[\w.]+)"),
    "rust": re.compile(r"^\s*#\[\s*(?P<name>[\w:]+)"),
    "go": re.compile(r"^\s*//go:(?P<name>\w+)"),
}
# Grammars whose attributes are matched by their text (their arguments are what they mean: a
# ``#[cfg(test)]`` is not a ``#[cfg(feature = "std")]``), not by their name alone.
BY_TEXT = frozenset({"rust", "go"})
PART = re.compile(r"[a-z]+|\d+")
MIN_SUBJECT_CHARS = 3  # a shared part shorter ('i', 'u', 'be') says nothing of what the attribute is about
# Words that open a definition's head (read when the tree has no definition there: a macro body).
HEAD_WORDS = frozenset({"def", "class", "fn", "func", "function", "struct", "enum", "trait", "impl", "type",
                        "interface", "const", "static", "let", "var", "pub", "async", "export", "mod"})


@dataclass(frozen=True)
class Shape:
    indent: str
    kind: str  # the head's node type, or its keywords
    context: tuple[str, ...]  # the attributes beside the insertion (names or texts)
    head: str  # the head up to its parameters (compared when the context is empty)
    inserted: tuple[str, ...]  # the inserted lines, stripped
    above: int  # how many of the attribute lines stood above the insertion (it goes below as many)


def run(ctx: RuleContext) -> list[Prediction]:
    """The siblings of the definitions the newest edits gave an attribute line (module docstring)."""
    out: list[Prediction] = []
    seen: set[tuple[str, int]] = set()
    for ex in ctx.examples[:EXAMPLES]:
        home = ctx.by_uri.get(ex.doc.uri)
        grammar = ex.doc.grammar or ""
        attr = ATTRIBUTE.get(grammar)
        if home is None or attr is None:
            continue
        for change in line_changes(ex.before, ex.after):
            lines = [x for x in change.inserted if x.strip()]
            if change.deleted or not lines or len(lines) > MAX_INSERTED_LINES \
                    or not all(attr.match(x) and _complete(x, grammar) for x in lines) \
                    or _prefix_of_another(lines, home.doc.text, attr):
                continue
            at = to_current(ex, change.at)
            shape = _shape(home, at, len(change.inserted), attr, grammar) if at is not None else None
            if shape is None:
                continue
            sites = []
            for d in (p for p in ctx.parsed if p.doc in ctx.same_language(ex.doc)):
                sites += [(d, s) for s in _sites(d, shape, attr, grammar, skip=at if d is home else None)]
            sites = [(d, s) for d, s in sites if d is not home or s > at]  # above it: passed over
            subject = _subject(shape)
            if subject:  # the attribute names what its definition is about: the siblings about it too
                sites = [(d, s) for d, s in sites if subject <= _parts(_head_below(d.doc.text, s, attr))]
            sites.sort(key=lambda x: (x[0] is not home, x[1]))
            for d, s in sites[:MAX_ATTRIBUTE_SITES]:
                if (d.doc.uri, s) in seen:
                    continue
                seen.add((d.doc.uri, s))
                indent = indent_of(d.doc.text[s:line_bounds(d.doc.text, s, s)[1]])
                new = "".join(indent + x.strip() + "\n" for x in change.inserted if x.strip())
                conf = SIBLING_ATTRIBUTE.value - REPEAT_AGE_PENALTY.value * ex.age
                if d is not home:
                    conf -= LINES_OTHER_DOCUMENT_PENALTY.value
                out.append(Prediction(d.doc.uri, s, s, new, round(max(conf, 0.0), 6),
                                      "the same attribute above this sibling definition", RULE.kind, "syntax", ""))
    return out


def _parts(text: str) -> set[str]:
    """The words and numbers of ``text`` (``be_u128`` -> be, u, 128), lowercased."""
    return set(PART.findall(text.lower()))


def _subject(shape: Shape) -> set[str]:
    """The parts the inserted attribute shares with its definition's name — what the attribute is
    about (``#[cfg(stable_i128)]`` above ``pub fn be_u128``: 128); empty when it names nothing of
    it (``#[inline]``, ``@pytest.mark.benchmark()``)."""
    name = " ".join(t for t in shape.head.split() if t not in HEAD_WORDS)
    inserted = _parts(" ".join(shape.inserted))
    return {p for p in inserted & _parts(name) if len(p) >= MIN_SUBJECT_CHARS}


def _head_below(text: str, at: int, attr: re.Pattern) -> str:
    """The head line of the definition whose attribute lines start at ``at`` (the first line from
    there that is no attribute), up to its parameters."""
    while at < len(text):
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        line = text[at:end]
        if line.strip() and not attr.match(line):
            return _head(line)
        at = end + 1
    return ""


def _complete(line: str, grammar: str) -> bool:
    """An attribute line the user has finished: its brackets closed (``#[cfg(target_endian`` or
    ``@pytest.mark.`` half typed is no attribute yet to repeat: NE502 finishes it)."""
    depth = 0
    for ch in line:
        depth += (ch in "([{") - (ch in ")]}")
        if depth < 0:
            return False
    code = line.strip()
    return depth == 0 and not code.endswith(".") and (grammar != "rust" or code.endswith("]"))


def _prefix_of_another(inserted: list[str], text: str, attr: re.Pattern) -> bool:
    """An inserted line is the start of a longer attribute line of the document (``@pytest.mark``
    of ``@pytest.mark.benchmark()``): the user is still typing it."""
    written = {line.strip() for line in text.split("\n") if attr.match(line)}
    return any(w != x.strip() and w.startswith(x.strip()) for x in inserted for w in written)


def _lines(text: str) -> tuple[list[int], list[str]]:
    starts = line_starts(text)
    return starts, [text[s:(starts[i + 1] - 1 if i + 1 < len(starts) else len(text))] for i, s in enumerate(starts)]


def _key(line: str, attr: re.Pattern, grammar: str) -> str:
    m = attr.match(line)
    return line.strip() if grammar in BY_TEXT or m is None else m.group("name")


def _shape(home: ParsedDoc, at: int, n: int, attr: re.Pattern, grammar: str) -> Shape | None:
    """The shape of the definition below the ``n`` lines inserted at ``at`` (None: no definition)."""
    starts, lines = _lines(home.doc.text)
    first = home.doc.text.count("\n", 0, at)
    last = first + n  # the first line below the insertion
    above = []
    i = first - 1
    while i >= 0 and attr.match(lines[i]):
        above.append(_key(lines[i], attr, grammar))
        i -= 1
    j = last
    below = []
    while j < len(lines) and attr.match(lines[j]):
        below.append(_key(lines[j], attr, grammar))
        j += 1
    if j >= len(lines) or not lines[j].strip():
        return None
    kind = _kind(home, starts[j], lines[j])
    if kind is None:
        return None
    inserted = tuple(x.strip() for x in lines[first:last] if x.strip())
    return Shape(indent_of(lines[j]), kind, tuple(sorted(above + below)), _head(lines[j]), inserted, len(above))


def _kind(doc: ParsedDoc, start: int, line: str) -> str | None:
    """The head line's definition kind: the outermost node starting at its first character, or the
    definition keywords it opens with (a line of a macro body); None for anything else."""
    at = start + len(indent_of(line))
    b = doc.b.byte(at)
    node = doc.tree.root_node.descendant_for_byte_range(b, b)
    top = None
    while node is not None and node.start_byte == b and not _container(node):
        top = node
        node = node.parent
    words = [t for t in TOKEN.findall(line)[:3] if t in HEAD_WORDS]
    if top is not None and top.is_named and top.type not in ("identifier", "token_tree", "ERROR"):
        return top.type
    return " ".join(words) if words else None


def _container(node) -> bool:
    """A node that holds definitions (a block, a class or impl body, the file): never a head's kind."""
    return node.parent is None or node.type in BLOCKS or node.type.endswith(("_list", "_body"))


def _head(line: str) -> str:
    """The head up to its parameters, its spacing ignored (``fn from(``, ``def __init__(``)."""
    head = line.strip().split("(", 1)[0]
    return " ".join(TOKEN.findall(head))


def _sites(d: ParsedDoc, shape: Shape, attr: re.Pattern, grammar: str, skip: int | None) -> list[int]:
    """Offsets (the start of each matching sibling's attribute lines) where ``shape``'s lines go."""
    starts, lines = _lines(d.doc.text)
    gated = grammar in BY_TEXT and bool(shape.context)  # an item gated like the example: any kind, any depth
    out = []
    for j, line in enumerate(lines):
        if attr.match(line) or not line.strip() or (not gated and indent_of(line) != shape.indent):
            continue
        i = j - 1
        run_keys = []
        while i >= 0 and attr.match(lines[i]):
            run_keys.append(_key(lines[i], attr, grammar))
            i -= 1
        if skip is not None and starts[i + 1] <= skip <= starts[j]:
            continue  # the example itself
        if any(x.strip() in shape.inserted or _key(x, attr, grammar) in {_key(y, attr, grammar) for y in shape.inserted}
               for x in lines[i + 1:j]):
            continue  # it has the attribute already (or one of its name)
        if tuple(sorted(run_keys)) != shape.context:
            continue
        if not shape.context and _head(line) != shape.head:
            continue
        if not gated and _kind(d, starts[j], line) != shape.kind:
            continue
        out.append(starts[i + 1 + shape.above])
    return out


RULE = Rule("NE305", "sibling-attribute", "line-repeat", SIBLING_ATTRIBUTE.value, run, __doc__)
