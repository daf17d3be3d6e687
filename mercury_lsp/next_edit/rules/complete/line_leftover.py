"""NE505 line-leftover: the line the user just edited is corrected again — a value renamed whose
keyword (or field name) was left with the old name.

**What.** The newest edit switched one identifier for another in a line (``adopted_name``'s
reading: ``f(name=name)`` -> ``f(name=label)``), and the same line still names the old one as the
keyword of that very argument (``name=label``) or the field of that very initializer (Rust's
``S { name: label }``, Go's ``S{name: label}``, an object's ``{name: label}``). The keyword
follows the value when the thing it names was renamed too: the called function or the struct,
where an open document of the language defines it, has a parameter or field of the new name and
none of the old; or a recent edit renamed a parameter or field of that name to the new one. In
Rust and JavaScript the initializer becomes the shorthand (``S { label }``, ``{label}``), in
Python the keyword is renamed (``f(label=label)``).

**Why.** The user renamed the value and stopped: the keyword is the half left undone, and a call
with an unknown keyword breaks.

**Example.** ``def send(self, label)`` (was ``name``), then ``self.send(name=name)`` ->
``self.send(name=label)``: the keyword becomes ``label``.
"""

from __future__ import annotations

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.complete.implied_name import member_names
from mercury_lsp.next_edit.rules.confidence import LINE_LEFTOVER
from mercury_lsp.next_edit.rules.follow.adopted_name import switches
from mercury_lsp.next_edit.scopes import binds
from mercury_lsp.next_edit.symbols import captures
from mercury_lsp.next_edit.text import line_bounds
from mercury_lsp.next_edit.tree import ParsedDoc, walk

EXAMPLES = 3  # the newest edits read for a parameter or field renamed (the evidence)
# (node type, its name field, its value field) of a keyword argument or a field initializer.
KEYED = {"keyword_argument": ("name", "value"), "field_initializer": ("field", "value"),
         "keyed_element": (0, 1), "pair": ("key", "value")}
SHORTHAND = frozenset({"rust", "javascript", "typescript", "tsx"})
# Nodes that call or build the keyed thing: its name is what the keywords belong to.
CALLS = ("call", "call_expression", "struct_expression", "composite_literal")
PARAMETER_FIELDS = ("parameters", "parameter_list", "formal_parameters")


def run(ctx: RuleContext) -> list[Prediction]:
    ex = ctx.examples[0] if ctx.examples else None
    home = ctx.by_uri.get(ex.doc.uri) if ex is not None else None
    if home is None or ex.index != 0:
        return []
    out = []
    for sw in switches(ex):
        if sw.tail:
            continue
        lo, hi = line_bounds(home.doc.text, sw.at, sw.at)
        for key, keyed in _keyed_in_line(home, lo, hi, sw.old, sw.new, sw.at):
            if not _renamed_there(ctx, home, keyed, sw.old, sw.new):
                continue
            s, e = home.b.char(key.start_byte), home.b.char(key.end_byte)
            if home.doc.grammar in SHORTHAND and keyed.type in ("field_initializer", "pair"):
                s, e = s, home.b.char(keyed.end_byte)  # 'name: label' -> 'label'
            out.append(Prediction(home.doc.uri, s, e, sw.new, LINE_LEFTOVER.value,
                                  f"the keyword follows its value: '{sw.old}' was renamed '{sw.new}'",
                                  RULE.kind, "syntax", home.doc.text[s:e]))
    return out


def _keyed_in_line(home: ParsedDoc, lo: int, hi: int, old: str, new: str, at: int) -> list[tuple]:
    """(key node, keyed node) of the line's keyword arguments or initializers ``old: new`` whose
    value is the occurrence the edit switched."""
    b0, b1, bat = home.b.byte(lo), home.b.byte(hi), home.b.byte(at)
    out = []
    for n in walk(home.tree.root_node, prune=lambda x: x.end_byte < b0 or x.start_byte > b1):
        if n.type not in KEYED or n.start_byte < b0 or n.end_byte > b1:
            continue
        k, v = KEYED[n.type]
        key = n.named_children[k] if isinstance(k, int) and n.named_child_count > k else \
            n.child_by_field_name(k) if isinstance(k, str) else None
        value = n.named_children[v] if isinstance(v, int) and n.named_child_count > v else \
            n.child_by_field_name(v) if isinstance(v, str) else None
        if key is None or value is None:
            continue
        if home.b.node_text(key) == old and home.b.node_text(value) == new and value.start_byte == bat:
            out.append((key, n))
    return out


def _renamed_there(ctx: RuleContext, home: ParsedDoc, keyed, old: str, new: str) -> bool:
    """The keyword's owner was renamed too: its definition in an open document has ``new`` and not
    ``old``, or a recent edit renamed a binding ``old`` to ``new`` (a parameter, a field)."""
    for ex in ctx.examples[:EXAMPLES]:
        doc = ctx.by_uri.get(ex.doc.uri)
        if doc is None:
            continue
        for sw in switches(ex):
            if (sw.old, sw.new) == (old, new) and binds(doc, sw.at, new):
                return True
    owner = _owner(home, keyed)
    if owner is None:
        return False
    for d in (p for p in ctx.parsed if p.doc in ctx.same_language(home.doc)):
        for n in captures(ctx.grammars, d)["definition"]:
            if d.b.node_text(n) != owner or n.parent is None:
                continue
            names = _declared_names(d, n.parent)
            if new in names and old not in names:
                return True
    return False


def _owner(home: ParsedDoc, keyed) -> str | None:
    """The name of the function called or the struct built with the keyed argument."""
    n = keyed.parent
    while n is not None and n.type not in CALLS:
        if n.type in ("block", "statement_block", "module", "source_file"):
            return None
        n = n.parent
    if n is None:
        return None
    f = n.child_by_field_name("function") or n.child_by_field_name("name") or n.child_by_field_name("type")
    if f is None:
        return None
    last = f.child_by_field_name("attribute") or f.child_by_field_name("field") or f.child_by_field_name(
        "property") or f.child_by_field_name("name") or f
    return home.b.node_text(last)


def _declared_names(d: ParsedDoc, definition) -> set[str]:
    """The parameter names of a function, or the member names of a struct or class."""
    params = next((definition.child_by_field_name(f) for f in PARAMETER_FIELDS
                   if definition.child_by_field_name(f) is not None), None)
    if params is None:
        return member_names(d, definition)
    return {d.b.node_text(n) for n in walk(params) if n.type == "identifier"}


RULE = Rule("NE505", "line-leftover", "rename", LINE_LEFTOVER.value, run, __doc__)
