"""NE113 named-fields: a tuple or positional type turned into a struct or record — its positional
uses follow, ``.0`` becoming the field's name.

**What.** The newest edits (``EXAMPLES``) are read for a type they turned from positional fields
into as many named ones (Rust's ``struct P(u32, String);`` -> ``struct P { id: u32, name: String
}``, TypeScript's ``type Pair = [string, number]`` -> ``type Pair = { name: string; count: number
}``): the i-th position is the i-th name. In the open documents of the
language, the positional uses of the type become named ones: Rust's ``self.0`` in an ``impl P``,
``x.0`` on a binding of type ``P`` (a parameter ``x: &P``, ``let x = P(...)``), the constructor
``P(a, b)`` and the pattern ``P(a, b)`` (``P { id: a, name: b }``, a field shorthand where the
value is the field's name); TypeScript's ``x[0]`` on a binding annotated with the type. At most
``nextEdit.repeatMaxSites`` times the positions of the type's fields: more are a rework of their own.

**Why.** The positions mean nothing any more; every ``.0`` and ``P(a, b)`` left breaks the build.

**Example.** ``struct Span(usize, usize);`` -> ``struct Span { start: usize, end: usize }``:
``self.1 - self.0`` in ``impl Span`` becomes ``self.end - self.start``.
"""

from __future__ import annotations

from mercury_lsp.next_edit.examples import to_current
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import NAMED_FIELDS
from mercury_lsp.next_edit.symbols import parsed_before
from mercury_lsp.next_edit.text import diff_region
from mercury_lsp.next_edit.tree import ParsedDoc, walk

EXAMPLES = 3  # the newest edits read (as the token rules)
NAMED = {"rust": ("struct_item", "field_declaration_list"),
         "typescript": ("type_alias_declaration", "object_type"), "tsx": ("type_alias_declaration", "object_type")}
POSITIONAL = {"rust": "ordered_field_declaration_list", "typescript": "tuple_type", "tsx": "tuple_type"}
FUNCTIONS = ("function_item", "function_declaration", "arrow_function", "method_definition", "function_expression")


def run(ctx: RuleContext) -> list[Prediction]:
    out: list[Prediction] = []
    seen: set[tuple[str, int]] = set()
    for ex in ctx.examples[:EXAMPLES]:
        home = ctx.by_uri.get(ex.doc.uri)
        grammar = ex.doc.grammar or ""
        if home is None or grammar not in NAMED:
            continue
        turned = _turned(ctx, ex, home, grammar)
        if turned is None:
            continue
        name, fields = turned
        sites = []
        for d in (p for p in ctx.parsed if p.doc in ctx.same_language(home.doc)):
            sites += [(d, *s) for s in (_rust_sites(d, name, fields) if grammar == "rust" else _ts_sites(d, name, fields))]
        if len(sites) > ctx.options.repeat_max_sites * len(fields):
            continue
        for d, s, e, new in sites:
            if (d.doc.uri, s) in seen:
                continue
            seen.add((d.doc.uri, s))
            out.append(Prediction(d.doc.uri, s, e, new, NAMED_FIELDS.value,
                                  f"'{name}' has named fields now", RULE.kind, "syntax", d.doc.text[s:e]))
    return out


def _turned(ctx: RuleContext, ex, home: ParsedDoc, grammar: str) -> tuple[str, list[str]] | None:
    """(type name, field names in order) of a type the example turned from positional to named."""
    p, eb, ea = diff_region(ex.before, ex.after)
    at = to_current(ex, p)
    if at is None:
        return None
    kind, named = NAMED[grammar]
    node = _enclosing(home, at, kind)
    if node is None:
        return None
    name = node.child_by_field_name("name")
    body = node.child_by_field_name("body") or node.child_by_field_name("value")
    if name is None or body is None or body.type != named:
        return None
    fields = [home.b.node_text(f.child_by_field_name("name")) for f in body.named_children
              if f.child_by_field_name("name") is not None]
    old = parsed_before(ctx.grammars, ex.doc, ex.before)
    was = _enclosing(old, p, kind) if old is not None else None
    was_body = (was.child_by_field_name("body") or was.child_by_field_name("value")) if was is not None else None
    if was_body is None or was_body.type != POSITIONAL[grammar] or len(was_body.named_children) != len(fields):
        return None
    return home.b.node_text(name), fields


def _enclosing(doc: ParsedDoc, at: int, kind: str):
    b = doc.b.byte(at)
    n = doc.tree.root_node.descendant_for_byte_range(b, b)
    while n is not None and n.type != kind:
        n = n.parent
    return n


def _rust_sites(d: ParsedDoc, name: str, fields: list[str]) -> list[tuple[int, int, str]]:
    text = d.b.node_text
    out = []
    typed = _typed_bindings(d, name)
    for n in walk(d.tree.root_node):
        if n.type == "field_expression":
            value, field = n.child_by_field_name("value"), n.child_by_field_name("field")
            if field is None or field.type != "integer_literal" or not text(field).isdigit():
                continue
            i = int(text(field))
            if i >= len(fields):
                continue
            if (value.type == "self" and _in_impl_of(n, d, name)) or (value.type == "identifier"
                                                                       and (_scope(n), text(value)) in typed):
                out.append((d.b.char(field.start_byte), d.b.char(field.end_byte), fields[i]))
        elif n.type in ("call_expression", "tuple_struct_pattern"):
            head = n.child_by_field_name("function") or n.child_by_field_name("type") or n.named_children[0]
            if head is None or text(head).split("::")[-1] != name:
                continue
            args = [c for c in (n.child_by_field_name("arguments").named_children if n.type == "call_expression"
                                else n.named_children[1:]) if c.type not in ("line_comment", "block_comment")]
            if len(args) != len(fields):
                continue
            inits = ", ".join(f if text(a) == f else f"{f}: {text(a)}" for f, a in zip(fields, args, strict=True))
            s, e = d.b.char(n.start_byte), d.b.char(n.end_byte)
            out.append((s, e, f"{text(head)} {{ {inits} }}"))
    return out


def _scope(n):
    while n is not None and n.type not in FUNCTIONS:
        n = n.parent
    return None if n is None else (n.start_byte, n.end_byte)


def _typed_bindings(d: ParsedDoc, name: str) -> set[tuple]:
    """(function span, name) of the bindings of type ``name``: parameters ``x: &P``, ``let x: P``,
    ``let x = P(...)``."""
    text = d.b.node_text
    out = set()
    for n in walk(d.tree.root_node):
        if n.type in ("parameter", "let_declaration"):
            pat = n.child_by_field_name("pattern")
            typ = n.child_by_field_name("type")
            value = n.child_by_field_name("value")
            typed = typ is not None and text(typ).lstrip("&").replace("mut ", "").strip() == name
            built = value is not None and value.type in ("call_expression", "struct_expression") and \
                text(value.child_by_field_name("function") or value.child_by_field_name("name") or value).split(
                    "(")[0].split("::")[-1].strip() == name
            if pat is not None and pat.type == "identifier" and (typed or built):
                out.add((_scope(n), text(pat)))
    return out


def _in_impl_of(n, d: ParsedDoc, name: str) -> bool:
    while n is not None and n.type != "impl_item":
        n = n.parent
    if n is None:
        return False
    typ = n.child_by_field_name("type")
    return typ is not None and d.b.node_text(typ).split("<")[0] == name


def _ts_sites(d: ParsedDoc, name: str, fields: list[str]) -> list[tuple[int, int, str]]:
    text = d.b.node_text
    typed = set()
    for n in walk(d.tree.root_node):
        if n.type in ("required_parameter", "optional_parameter", "variable_declarator"):
            pat = n.child_by_field_name("pattern") or n.child_by_field_name("name")
            ann = n.child_by_field_name("type")
            if pat is not None and pat.type == "identifier" and ann is not None and text(ann).lstrip(": ").strip() == name:
                typed.add((_scope(n), text(pat)))
    out = []
    for n in walk(d.tree.root_node):
        if n.type != "subscript_expression":
            continue
        obj, index = n.child_by_field_name("object"), n.child_by_field_name("index")
        if obj is None or index is None or obj.type != "identifier" or index.type != "number" \
                or not text(index).isdigit() or int(text(index)) >= len(fields):
            continue
        if (_scope(n), text(obj)) in typed or (None, text(obj)) in typed:
            s, e = d.b.char(obj.end_byte), d.b.char(n.end_byte)
            out.append((s, e, "." + fields[int(text(index))]))
    return out


RULE = Rule("NE113", "named-fields", "rename", NAMED_FIELDS.value, run, __doc__)
