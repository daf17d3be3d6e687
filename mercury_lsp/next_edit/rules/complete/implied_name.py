"""NE504 implied-name: an identifier cut short at the cursor is finished to the name the edit
implies — a name the recent edits introduced, a member of the type or module before the dot, a
name another open document defines, else the repository memory's name there (a variant defined in
a file that is not open) — and the name it replaces in the same function follows.

**What.** The word before the cursor (at least ``MIN_PREFIX_CHARS``, in code, not a name the
document already has) is the start of the candidates of one tier, tried in order, the first with
exactly one candidate winning:

1. the names the recent edits defined (in any open document: absent from its text before them)
   — the new function the user is about to call;
2. after ``X.`` or ``X::``, the members of ``X`` where an open document of the language defines
   it (an enum's variants, a class's or struct's members and methods, an impl's functions) or
   where ``X`` names an open document (a module, a Go package): its top-level definitions;
3. the top-level names the other open documents of the language define, when no name of the
   cursor's document extends the word (that is NE501's);
4. with the repository memory built (``RuleContext.memory``), the repository's own: after
   ``X.`` or ``X::`` first the members of ``X`` where a file that is not open defines it (the
   memory finds the file, the syntax reads its members), then — after a qualifier, or when no
   name of the document extends the word — the names the memory's continuations at the word's
   start begin with (the places across the repository whose code before it matches the
   cursor's): the only one, or the only one whose continuation passes ``completion.minProbability``.

Its rest is inserted at the cursor. When the newest edit wrote the word in place of another
identifier (``count`` deleted, ``tot`` typed), the old identifier's other uses in the same
function (not where it is bound) become the finished name too (at most ``nextEdit.repeatMaxSites``).

**Why.** NE501 finishes a word from the document's own names; a half-typed name is as often one
the user just wrote elsewhere, or a variant defined in another file — open or not: the
repository memory (``mercury_lsp.memory``) knows the files no editor tab shows. Until its first
build is done the rule reads the open documents alone (no request waits for an index).

**Example.** ``enum Shape { Circle, Square }`` in ``shape.rs`` (open, or only in the repository)
and ``Shape::Sq`` typed in ``draw.rs``: ``uare`` is inserted.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mercury_lsp.next_edit.examples import to_current
from mercury_lsp.next_edit.import_lists import module_key, top_level
from mercury_lsp.next_edit.prose import non_code
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.recall import best_word
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.complete.endings import open_quote
from mercury_lsp.next_edit.rules.confidence import IMPLIED_NAME, IMPLIED_RENAME
from mercury_lsp.next_edit.scopes import binds, scope_of, word_in
from mercury_lsp.next_edit.symbols import captures
from mercury_lsp.next_edit.text import KEYWORDS, diff_region, is_ident_char
from mercury_lsp.next_edit.tree import ParsedDoc, parse_all

MIN_PREFIX_CHARS = 2  # a shorter start extends to too many names
IDENTIFIER_TYPES = ("identifier", "field_identifier", "property_identifier", "type_identifier",
                    "shorthand_property_identifier", "ERROR")
WORD = re.compile(r"[A-Za-z_$][\w$]*")
QUALIFIER = re.compile(r"(?P<name>[A-Za-z_$][\w$]*)\s*(?:\.|::)\s*$")
# Definitions whose members a qualifier reaches, and the member nodes each holds.
OWNERS = ("enum_item", "struct_item", "trait_item", "enum_declaration", "class_declaration",
          "class_definition", "interface_declaration", "type_spec", "impl_item", "abstract_class_declaration")
# Nodes a member stands inside of (one level is read through).
WRAPPERS = ("decorated_definition", "expression_statement", "field_declaration_list", "enum_variant_list",
            "declaration_list", "enum_body", "class_body", "object_type", "interface_body", "method_spec_list",
            "assignment")


def run(ctx: RuleContext) -> list[Prediction]:
    home = ctx.by_uri.get(ctx.query.cursor_uri)
    if home is None or not home.doc.history:
        return []
    text = home.doc.text
    cursor = ctx.query.cursor
    if not 0 <= cursor <= len(text):
        return []  # a cursor past the text (a history that does not chain): nothing to finish
    lo = cursor
    while lo > 0 and is_ident_char(text[lo - 1]):
        lo -= 1
    prefix = text[lo:cursor]
    if len(prefix) < MIN_PREFIX_CHARS or prefix[0].isdigit() or (cursor < len(text) and is_ident_char(text[cursor])):
        return []
    if open_quote(text[text.rfind("\n", 0, lo) + 1:lo]) is not None or non_code(home, lo):
        return []
    start = home.b.byte(lo)
    node = home.tree.root_node.descendant_for_byte_range(start, home.b.byte(cursor))
    if node is None or node.type not in IDENTIFIER_TYPES and not node.type.endswith("identifier"):
        return []
    here = _names(text, lo, cursor)
    if prefix in here:
        return []  # a name in its own right
    name = _implied(ctx, home, lo, prefix, here)
    if name is None:
        return []
    out = [Prediction(home.doc.uri, cursor, cursor, name[len(prefix):], IMPLIED_NAME.value,
                      f"finishes the name '{name}' the edit implies", RULE.kind, "syntax", "")]
    return out + _replaced(ctx, home, lo, prefix, name)


def _names(text: str, lo: int, hi: int) -> set[str]:
    """The words of ``text`` but the one at ``[lo, hi)`` (a regular expression's scan: the tree's
    walk cost a large file ~0.3 s; a word in a comment counts as a name, erring towards no guess)."""
    return set(WORD.findall(text, 0, lo)) | set(WORD.findall(text, hi))


def _implied(ctx: RuleContext, home: ParsedDoc, lo: int, prefix: str, here: set[str]) -> str | None:
    """The one name of the first tier with exactly one candidate (module docstring)."""
    same = [p for p in ctx.parsed if p.doc in ctx.same_language(home.doc)]
    introduced = set()
    for d in same:
        oldest = d.doc.history[-1] if d.doc.history else None
        if oldest is None:
            continue
        named = {d.b.node_text(n) for n in captures(ctx.grammars, d)["definition"]}
        introduced |= {n for n in named if n.startswith(prefix) and not word_in(n, oldest)}
    tiers: list[Callable[[], set[str]]] = [lambda: introduced]  # each read only when the ones before fail
    q = QUALIFIER.search(home.doc.text, max(0, lo - 200), lo)
    if q is not None and q.end() == lo:
        owner = q.group("name")
        tiers += [lambda: _members(ctx, same, owner), lambda: _members_elsewhere(ctx, home, owner),
                  lambda: _remembered(ctx, home, lo)]
    elif not any(n.startswith(prefix) for n in here):
        tiers += [lambda: {n for d in same if d is not home for n in top_level(d, captures(ctx.grammars, d))},
                  lambda: _remembered(ctx, home, lo)]
    for tier in tiers:
        found = {n for n in tier() if n.startswith(prefix) and n != prefix and n not in KEYWORDS}
        if len(found) == 1:
            return found.pop()
        if len(found) > 1:
            return None  # several: no guess among them
    return None


def _members(ctx: RuleContext, docs: list[ParsedDoc], owner: str) -> set[str]:
    """The member names of the definitions of ``owner`` in ``docs``, or the top-level names of the
    document ``owner`` names (a module, a package)."""
    out: set[str] = set()
    spelt = re.compile(rb"(?<![\w$])" + re.escape(owner.encode()) + rb"(?![\w$])")
    for d in docs:
        if module_key(d.doc.uri) == owner or _package(d) == owner:
            out |= set(top_level(d, captures(ctx.grammars, d)))
        for m in spelt.finditer(d.b.data):  # the definitions spelling it: walked up to from the name
            n = d.tree.root_node.descendant_for_byte_range(m.start(), m.end())
            while n is not None and n.type not in OWNERS and n.end_byte - n.start_byte <= m.end() - m.start() + 2:
                n = n.parent
            if n is not None and n.type in OWNERS and _owner_name(d, n) == owner:
                out |= member_names(d, n)
    return out


def _members_elsewhere(ctx: RuleContext, home: ParsedDoc, owner: str) -> set[str]:
    """The members of ``owner`` where a file that is not open defines it (the memory says which
    file; it is read and parsed now)."""
    if ctx.memory is None:
        return set()
    found = ctx.memory.defining_file(owner, set(ctx.by_uri))
    if found is None or found.grammar != home.doc.grammar:
        return set()
    return _members(ctx, parse_all([found], ctx.grammars), owner)


def _remembered(ctx: RuleContext, home: ParsedDoc, lo: int) -> set[str]:
    """The one name the memory's continuations at the word's start imply (``recall.best_word``)."""
    if ctx.memory is None:
        return set()
    words = ctx.memory.words(home.doc.uri, home.doc.text, lo, ctx.query.cursor)
    word = best_word(words, ctx.memory.min_probability)
    return set() if word is None else {word}


def _package(d: ParsedDoc) -> str | None:
    m = re.match(r"\s*package\s+(\w+)", d.doc.text)
    return m.group(1) if m else None


def _owner_name(d: ParsedDoc, n) -> str | None:
    name = n.child_by_field_name("name") or n.child_by_field_name("type")
    return d.b.node_text(name) if name is not None else None


def member_names(d: ParsedDoc, owner) -> set[str]:
    """The names of a definition's members: its body's items (one wrapper deep: a decorated
    method, an assignment statement, a Go struct's field list)."""
    body = owner.child_by_field_name("body") or owner.child_by_field_name("type")
    if body is None:
        return set()
    items = list(body.named_children)
    for n in list(items):
        if n.type in WRAPPERS:
            items += n.named_children
    out = set()
    for n in items:
        name = n.child_by_field_name("name") or n.child_by_field_name("left")
        if name is None and n.type in ("property_identifier", "field_identifier"):
            name = n
        if name is not None and name.type.endswith("identifier"):
            out.add(d.b.node_text(name))
    return out


def _replaced(ctx: RuleContext, home: ParsedDoc, lo: int, prefix: str, name: str) -> list[Prediction]:
    """The other uses in the same function of the identifier the newest edit replaced by the word."""
    ex = next((e for e in ctx.examples if e.doc.uri == home.doc.uri and e.index == 0), None)
    if ex is None:
        return []
    p, eb, ea = diff_region(ex.before, ex.after)
    at = to_current(ex, p)
    old = ex.before[p:eb]
    if at is None or ex.after[p:ea] != prefix or at != lo or not re.fullmatch(r"[A-Za-z_$][\w$]*", old):
        return []
    if name.startswith(old) or old in KEYWORDS:
        return []
    text = home.doc.text
    lo_s, hi_s = scope_of(home, lo) or (0, len(text))
    word = re.compile(rf"(?<![\w$.]){re.escape(old)}(?![\w$])")
    sites = [m.start() for m in word.finditer(text, lo_s, hi_s)
             if not non_code(home, m.start()) and not binds(home, m.start(), old)]  # its binding stays
    if not sites or len(sites) > ctx.options.repeat_max_sites:
        return []
    return [Prediction(home.doc.uri, s, s + len(old), name, IMPLIED_RENAME.value,
                       f"'{old}' was being replaced by '{name}'", "rename", "syntax", old) for s in sites]


RULE = Rule("NE504", "implied-name", "complete", IMPLIED_NAME.value, run, __doc__, self_checked=True)
