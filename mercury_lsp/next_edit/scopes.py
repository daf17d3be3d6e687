"""Scopes and names for next-edit's rules: the function enclosing an offset, how a renamed
identifier is bound, whether a name is new or distinctive."""

from __future__ import annotations

import re

from mercury_lsp.next_edit.query import DocState
from mercury_lsp.next_edit.text import IMPORT_LINE, QUOTED, TOKEN, diff_region, line_bounds
from mercury_lsp.next_edit.tree import ParsedDoc, enclosing, field_is, walk

# Node types (any grammar) that open a function scope.
FUNCTION_SCOPES = ("function_definition", "function_declaration", "method_declaration", "function_item",
                   "arrow_function", "method_definition", "function_expression", "closure_expression",
                   "func_literal", "lambda", "function")
DECLARATION_LOOKBACK = 40  # characters before a renamed identifier read for a declaring keyword
DEFINITION_KEYWORDS = frozenset(("def", "class", "func", "fn", "function", "struct", "enum", "trait",
                                 "interface", "type", "mod", "impl"))
LOCAL_KEYWORDS = frozenset(("let", "const", "var", "mut", "for"))
DECLARING_KEYWORDS = frozenset(("let", "const", "var", "mut"))
# Nodes whose names live in another namespace than the code's (Rust's ``#[derive(Error)]`` names
# a macro, not the ``enum Error`` beside it).
OTHER_NAMESPACES = ("attribute_item", "inner_attribute_item")
DISTINCTIVE_CHARS = 6
ASSIGNED = re.compile(r"\s*(?::=|=(?!=)|\+=|-=)")
# A short variable declaration after a name (Go's ``x := ...``, ``a, b :=``, ``for _, v := range``):
# always a new local, never an assignment to an outer name.
SHORT_DECLARATION = re.compile(r"\s*(?:,\s*[A-Za-z_$][\w$]*\s*)*:=")
# Identifier nodes (any grammar) that name a field or a property, never a variable.
FIELD_NAMES = ("field_identifier", "property_identifier")
# Composite literals (Go) whose keys are expressions (a map's), not the fields of a struct.
MAP_LITERAL_TYPES = ("map_type",)

# Nested scopes that bind a name of their own inside a function (the other grammars): a closure's or
# a nested function's parameters, a Rust match arm's pattern, an ``if let`` / ``while let``
# pattern (its block), a JavaScript ``catch (e)``. The function's local of that name is not the
# one used inside them.
PATTERN_SCOPES = ("match_arm",)
LET_CONDITIONS = ("let_condition",)
CATCH_CLAUSES = ("catch_clause",)


def scope_of(parsed: ParsedDoc | None, start: int, *, outside_its_name: bool = False) -> tuple[int, int] | None:
    """Code-point span of the innermost function enclosing ``start`` (None: module level). With
    ``outside_its_name``, a function whose own name stands at ``start`` does not count: a
    definition's name belongs to the scope around it (``fn foo`` is a name of its module)."""
    if parsed is None:
        return None
    b = parsed.b.byte(start)
    node = parsed.tree.root_node.descendant_for_byte_range(b, b + 1)
    while node is not None:
        if node.type in FUNCTION_SCOPES:
            name = node.child_by_field_name("name") if outside_its_name else None
            if name is None or not name.start_byte <= b < name.end_byte:
                break
        node = node.parent
    if node is None:
        return None
    return parsed.b.char(node.start_byte), parsed.b.char(node.end_byte)


def inside(parsed: ParsedDoc | None, offset: int, types: tuple[str, ...]) -> bool:
    """The character at ``offset`` lies in a node of one of ``types``."""
    if parsed is None:
        return False
    b = parsed.b.byte(offset)
    leaf = parsed.tree.root_node.descendant_for_byte_range(b, b + 1)
    return leaf is not None and enclosing(leaf, types) is not None


def member_key(node) -> bool:
    """``node`` (an identifier) is the key of a keyed element of a struct literal (Go's
    ``Report{title: t}``, ``[]T{{title: t}}``): the name of a field, not a variable. A key
    directly in a map literal's braces is an expression (``map[string]int{title: 1}``)."""
    element = node.parent
    keyed = element.parent if element is not None else None
    if element is None or element.type != "literal_element" or keyed is None or keyed.type != "keyed_element":
        return False
    if keyed.named_children[0].id != element.id:
        return False
    literal = keyed.parent.parent if keyed.parent is not None else None  # literal_value -> composite_literal
    if literal is not None and literal.type == "composite_literal":
        kind = literal.child_by_field_name("type")
        return kind is None or kind.type not in MAP_LITERAL_TYPES
    return True  # a literal nested in another's braces: a struct's element


def names_field(parsed: ParsedDoc | None, offset: int) -> bool:
    """The identifier at ``offset`` names a field or a keyword, not a variable: a field or property
    identifier (``R { title: t }``, ``{title: t}``), a keyword argument's name (``f(title=t)``), a
    struct literal's key (``member_key``)."""
    if parsed is None:
        return False
    b = parsed.b.byte(offset)
    leaf = parsed.tree.root_node.descendant_for_byte_range(b, b + 1)
    if leaf is None:
        return False
    if leaf.type in FIELD_NAMES:
        return True
    parent = leaf.parent
    if parent is not None and parent.type == "keyword_argument" and field_is(parent, "name", leaf):
        return True
    return member_key(leaf)


def declares_local(text: str, start: int, end: int) -> bool:
    """The name at ``[start, end)`` declares a local: a declaring keyword before it (``let``,
    ``const``, ``for``...), or Go's short variable declaration after it (``v := ...``)."""
    return _word_before(text, start) in LOCAL_KEYWORDS or SHORT_DECLARATION.match(text, end) is not None


def fresh_name(new: str, home: DocState, scope: tuple[int, int] | None) -> bool:
    """``new`` was not in use before the recent edits — in the enclosing function (``scope``, in the
    current text) outside the recently edited region, or anywhere in the oldest text of the
    history when the rename is not inside a function. Otherwise the edit switched to another
    existing thing (``this.request`` -> ``this.options``): not a rename to follow. A string
    literal that spells the name is no use of it (``compile('options')``)."""
    oldest = home.history[-1] if home.history else home.text
    if scope is None:
        return not word_in(new, QUOTED.sub('""', oldest))
    p, _, ea = diff_region(oldest, home.text)
    p, ea = line_bounds(home.text, p, ea)
    lo, hi = scope
    outside = home.text[lo:max(lo, min(p, hi))] + "\n" + home.text[min(max(ea, lo), hi):hi]
    return not word_in(new, QUOTED.sub('""', outside))


def word_in(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text) is not None


def distinctive(name: str) -> bool:
    """A name unlikely to be an ordinary word: long and compound (snake_case or camelCase)."""
    return len(name) >= DISTINCTIVE_CHARS and ("_" in name.strip("_") or any(c.isupper() for c in name[1:]))


def binding_kind(parsed: ParsedDoc | None, text: str, offset: int) -> str:
    """How the renamed identifier at ``offset`` is bound: "definition" (a function, type, ... name:
    renamed wherever it is used), "local" (a parameter or a declared local: its function only),
    or "use"."""
    keyword = _word_before(text, offset)
    if keyword in DEFINITION_KEYWORDS:
        return "definition"
    if keyword in LOCAL_KEYWORDS:
        return "local"
    if parsed is not None:
        b = parsed.b.byte(offset)
        node = parsed.tree.root_node.descendant_for_byte_range(b, b + 1)
        while node is not None and node.type not in FUNCTION_SCOPES:
            if "parameter" in node.type:
                return "local"
            node = node.parent
    return "use"


def _word_before(text: str, offset: int) -> str | None:
    """The token just before ``offset`` (a declaring keyword, if any: ``let``, ``def``)."""
    before = TOKEN.findall(text[max(0, offset - DECLARATION_LOOKBACK):offset])
    return before[-1] if before else None


def declaring_scopes(parsed: ParsedDoc | None, name: str, *, assignments: bool = True) -> list[tuple[int, int]]:
    """Spans of the functions that bind ``name`` themselves — a parameter, a declared local, a
    definition of their own (a test's ``struct Error``) and, with ``assignments``, a local
    assigned (``c := ...``, ``for _, c := range``): the occurrences inside them are those
    bindings', not a module-level name's. (A repeated rename goes without ``assignments``: the
    same locals renamed in a sibling function, ``l, s, r = ...`` -> ``left, sep, right``, is the
    change repeated.)"""
    if parsed is None:
        return []
    text = parsed.doc.text

    def bound(offset: int) -> bool:
        return binds(parsed, offset, name) if assignments else binding_kind(parsed, text, offset) != "use"

    spans = {scope_of(parsed, m.start(), outside_its_name=True)
             for m in re.finditer(rf"(?<![\w$.]){re.escape(name)}(?![\w$])", text) if bound(m.start())}
    return sorted(s for s in spans if s is not None)


def local_only_scopes(parsed: ParsedDoc, name: str) -> list[tuple[int, int]]:
    """Spans of the functions that bind ``name`` when every binding of it in the document is such
    a function's (a parameter ``t``, a local); [] when the name is bound at the top level or not
    at all. An identifier switched to such a name is that function's value, never a rename of a
    module-level name (``log.Fatal`` -> ``t.Fatal`` in a test that takes ``t``)."""
    text = parsed.doc.text
    spans = {scope_of(parsed, m.start(), outside_its_name=True)
             for m in re.finditer(rf"(?<![\w$.]){re.escape(name)}(?![\w$])", text) if binds(parsed, m.start(), name)}
    return [] if None in spans else sorted(spans)


def binds(home: ParsedDoc, offset: int, name: str) -> bool:
    """The occurrence of ``name`` at ``offset`` defines, declares or is assigned to."""
    if binding_kind(home, home.doc.text, offset) != "use":
        return True
    line_start = home.doc.text.rfind("\n", 0, offset) + 1
    head = home.doc.text[line_start:offset].strip()
    return (head == "" or head.endswith(",")) and ASSIGNED.match(home.doc.text, offset + len(name)) is not None


def declared_elsewhere(home: ParsedDoc, name: str, skip: int) -> bool:
    """``name`` is bound in the function enclosing ``skip`` (the document at the top level) at
    another place than ``skip``."""
    lo, hi = scope_of(home, skip) or (0, len(home.doc.text))
    word = re.compile(rf"(?<![\w$.]){re.escape(name)}(?![\w$])")
    return any(binds(home, m.start(), name) for m in word.finditer(home.doc.text, lo, hi) if m.start() != skip)


def redeclared(home: ParsedDoc, name: str, skip: int) -> bool:
    """``name`` is declared again (``let``, ``const``, ``var``; not an assignment, nor a loop's
    variable) in the function enclosing ``skip``, at another place: ``function parse(str, opt)`` renamed to
    ``options`` and then ``var opt = options || {}`` written keeps ``opt`` alive."""
    scope = scope_of(home, skip)
    lo, hi = scope or (0, len(home.doc.text))
    word = re.compile(rf"(?<![\w$.]){re.escape(name)}(?![\w$])")
    text = home.doc.text

    def declares(at: int) -> bool:
        return _word_before(text, at) in DECLARING_KEYWORDS and scope_of(home, at) == scope  # not a nested function's

    return any(declares(m.start()) for m in word.finditer(text, lo, hi) if m.start() != skip)


def both_imported(home: DocState, old: str, new: str) -> bool:
    """``old`` and ``new`` were both brought by the document's import lines before the recent edits
    (``use core::fmt::{self, Debug, Display};``): an occurrence of one switched to the other is
    the user choosing the other import there, not renaming it — renaming would rewrite the import
    line to a duplicate and every other use of the first. (``fresh_name`` reads only the function
    around a rename: the module's imports are outside it.)"""
    return imported(home, old) and imported(home, new)


def imported(home: DocState, name: str) -> bool:
    """``name`` was brought by the document's import lines before the recent edits (a module, or a
    name from one: no definition of the document's own)."""
    oldest = home.history[-1] if home.history else home.text
    return word_in(name, "\n".join(line for line in oldest.split("\n") if IMPORT_LINE.match(line)))


def _binds_in(node, old: str, b) -> bool:
    """``node`` (a parameter list or a pattern) binds ``old``: an identifier of that name in it that
    names no type or constructor (``Some`` of ``Some(x)``, ``T`` of ``x: T``)."""
    for n in walk(node):
        if n.type != "identifier" or b.node_text(n) != old:
            continue
        parent = n.parent
        if parent is not None and (field_is(parent, "type", n) or parent.type in ("scoped_identifier", "type_arguments")):
            continue
        return True
    return False


def rebinding_spans(func, old: str, b, inside: int) -> list[tuple[int, int]]:
    """Byte spans inside ``func`` where a nested scope binds ``old`` anew (``PATTERN_SCOPES``...):
    the occurrences there are that binding's; never a scope holding the byte ``inside`` (the
    edited occurrence: that scope is its binding's own)."""
    spans: list[tuple[int, int]] = []
    for n in walk(func, prune=lambda n: any(lo <= n.start_byte < hi for lo, hi in spans)):
        if n is func or n.start_byte <= inside < n.end_byte:
            continue
        params = n.child_by_field_name("parameters") if n.type in FUNCTION_SCOPES else None
        if params is not None and _binds_in(params, old, b):
            spans.append((n.start_byte, n.end_byte))
        elif n.type in PATTERN_SCOPES and (pat := n.child_by_field_name("pattern")) is not None and _binds_in(pat, old, b):
            spans.append((n.start_byte, n.end_byte))
        elif n.type in LET_CONDITIONS and (pat := n.child_by_field_name("pattern")) is not None \
                and _binds_in(pat, old, b) and n.parent is not None:
            body = n.parent.child_by_field_name("consequence") or n.parent.child_by_field_name("body")
            spans.append((pat.start_byte, pat.end_byte))
            if body is not None:
                spans.append((body.start_byte, body.end_byte))
        elif n.type in CATCH_CLAUSES and (par := n.child_by_field_name("parameter")) is not None and _binds_in(par, old, b):
            spans.append((n.start_byte, n.end_byte))
    return spans
