"""Members and the types that own them, for renaming a field, property, method or attribute.

A member's name is not a variable: ``x.name`` stands for it wherever ``x`` is a value of its type,
and the syntax does not say which type ``x`` has. Renaming every ``x.old`` of the open documents
is right while one type declares ``old``; once another type declares a member of the same name
(the test table's own ``maxNest`` field beside the ``Decoder``'s, another class's ``self.old``),
an ``x.old`` may be either, and only the occurrences the syntax *ties* to the renamed member's
type are followed (``tied``):

* the receiver of one of the type's own methods (Go's ``func (d *Decoder) ...`` ``d.old``),
  ``self`` inside the type's ``impl`` (Rust), ``this`` inside the class (JavaScript, TypeScript),
  ``self`` / ``cls`` inside the class (Python) — the subclasses' too (a base named in the class's
  own bases or ``extends``);
* the type named itself (Python's ``Decoder.old``);
* a literal of the type (Go's ``Decoder{old: 1}``, Rust's ``Decoder { old: 1 }``).

A member of an interface or trait has its implementations' members of the same name as its own:
those are never restricted. Go's struct literal keys are identifiers, not field names, so they are
found here for every renamed Go field (``literal_keys``).
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.text import declares as declares_name
from mercury_lsp.next_edit.tree import ParsedDoc, enclosing, field_is, in_class_body, walk

# Nodes that declare a member by their ``name`` field (any grammar but Python).
MEMBER_DECLARATIONS = ("field_declaration", "public_field_definition", "method_definition", "method_declaration",
                       "property_signature", "method_signature", "abstract_method_signature")
# Nodes that own the members declared inside them, and those whose members are declared again by
# their implementations (an interface's method is its implementers' method).
OWNERS = ("type_spec", "struct_item", "enum_item", "union_item", "class_declaration", "class",
          "abstract_class_declaration", "interface_declaration", "trait_item")
OPEN_OWNERS = ("interface_declaration", "trait_item")
GO_INTERFACE = "interface_type"
CLASSES = ("class_definition", "class_declaration", "class", "abstract_class_declaration")  # a class (any grammar)
ASSIGNMENTS = ("assignment", "augmented_assignment", "assignment_expression", "augmented_assignment_expression")
MEMBER_ACCESS = ("selector_expression", "field_expression", "member_expression", "attribute")  # x.name
CLASS_HEADS = ("class_heritage", "superclasses", "argument_list")  # where a class names its bases
TYPE_NAME = re.compile(r"[A-Za-z_$][\w$]*")


def _last_name(text: str) -> str | None:
    """``*pkg.Decoder[T]`` -> ``Decoder``: the type's own name, without pointer, path or generics."""
    names = TYPE_NAME.findall(text.split("<")[0].split("[")[0])
    return names[-1] if names else None


def _receiver_type(p: ParsedDoc, method) -> str | None:
    """A Go method's receiver type (``Decoder`` of ``func (d *Decoder) Name(...)``)."""
    receiver = method.child_by_field_name("receiver")
    return _last_name(p.b.node_text(receiver).split()[-1].rstrip(")")) if receiver is not None else None


def owner_of(p: ParsedDoc, node) -> tuple[str, bool] | None:
    """(the name of the type that declares the member named at ``node``, whether that type is
    open — an interface or trait, whose implementations declare the member again); None when
    ``node`` does not name a member where it is declared."""
    parent = node.parent
    if parent is None:
        return None
    if p.doc.grammar == "python":
        return _python_owner(p, node)
    if parent.type not in MEMBER_DECLARATIONS or not field_is(parent, "name", node):
        return None
    if parent.type == "method_declaration":  # Go: func (d *Decoder) Name(...)
        name = _receiver_type(p, parent)
        return (name, False) if name else None
    if enclosing(node, (GO_INTERFACE,)) is not None:
        return None
    owner = enclosing(node, OWNERS)
    if owner is None:
        return None
    name = owner.child_by_field_name("name")
    if name is None:
        return None
    return p.b.node_text(name), owner.type in OPEN_OWNERS


def _python_owner(p: ParsedDoc, node) -> tuple[str, bool] | None:
    """Python: ``def name`` in a class body, a class attribute ``name = ...``, ``self.name`` in a
    method."""
    parent = node.parent
    if parent.type == "function_definition" and field_is(parent, "name", node) and in_class_body(parent):
        cls = enclosing(parent, ("class_definition",))
    elif parent.type == "attribute" and field_is(parent, "attribute", node):
        obj = parent.child_by_field_name("object")
        if obj is None or p.b.node_text(obj) not in ("self", "cls"):
            return None
        cls = enclosing(node, ("class_definition",))
    else:
        return None
    name = cls.child_by_field_name("name") if cls is not None else None
    return (p.b.node_text(name), False) if name is not None else None


def declarations(parsed: list[ParsedDoc], grammar: str, old: str) -> list[tuple[ParsedDoc, object, str]]:
    """(document, node, owner) of each member named ``old`` that a type of ``grammar`` declares or
    uses as its own (``owner_at``: JavaScript's ``this.old = 0`` in a constructor declares it)."""
    out = []
    for p in parsed:
        if p.doc.grammar != grammar:
            continue
        for n in walk(p.tree.root_node):
            if n.type in ("field_identifier", "property_identifier", "identifier") and p.b.node_text(n) == old:
                got = owner_at(p, n)
                if got is not None:
                    out.append((p, n, got[0]))
    return out


def family(parsed: list[ParsedDoc], grammar: str, owner: str) -> set[str]:
    """``owner`` and the classes of ``grammar`` that name it among their bases (``class B(A)``,
    ``class B extends A``), transitively: the members they declare again are overrides."""
    bases: dict[str, str] = {}
    for p in parsed:
        if p.doc.grammar != grammar:
            continue
        for n in walk(p.tree.root_node):
            if n.type in CLASSES:
                name = n.child_by_field_name("name")
                head = n.child_by_field_name("superclasses") or next(
                    (c for c in n.named_children if c.type in CLASS_HEADS), None)
                if name is not None and head is not None:
                    bases[p.b.node_text(name)] = p.b.node_text(head)
    out, grew = {owner}, True
    while grew:
        grew = False
        for cls, head in bases.items():
            if cls not in out and any(re.search(rf"(?<![\w$]){re.escape(o)}(?![\w$])", head) for o in out):
                out.add(cls)
                grew = True
    return out


def ambiguous(parsed: list[ParsedDoc], grammar: str, old: str, owners: set[str]) -> bool:
    """Another type than ``owners`` declares a member named ``old``."""
    return any(o not in owners for _, _, o in declarations(parsed, grammar, old))


def _enclosing_type(p: ParsedDoc, node) -> str | None:
    """The type whose code ``node`` stands in: the class (Python, JavaScript, TypeScript) or
    ``impl`` (Rust) around it, a Go method's receiver type."""
    scope = enclosing(node, (*CLASSES, "impl_item", "method_declaration"))
    if scope is None:
        return None
    if scope.type == "impl_item":
        kind = scope.child_by_field_name("type")
        return _last_name(p.b.node_text(kind)) if kind is not None else None
    if scope.type == "method_declaration":
        return _receiver_type(p, scope)
    name = scope.child_by_field_name("name")
    return p.b.node_text(name) if name is not None else None


def _go_receiver(p: ParsedDoc, node) -> str | None:
    """The receiver variable of the Go method around ``node`` (``d`` of ``func (d *Decoder)``)."""
    method = enclosing(node, ("method_declaration",))
    receiver = method.child_by_field_name("receiver") if method is not None else None
    if receiver is None:
        return None
    decl = next((c for c in receiver.named_children if c.type == "parameter_declaration"), None)
    name = decl.child_by_field_name("name") if decl is not None else None
    return p.b.node_text(name) if name is not None else None


def tied(p: ParsedDoc, node, owners: set[str]) -> bool:
    """The occurrence of a member's name at ``node`` belongs to one of ``owners`` by the syntax
    alone (the module docstring's list)."""
    parent = node.parent
    if parent is None:
        return False
    declared = owner_of(p, node)
    if declared is not None:
        return declared[0] in owners
    if parent.type in MEMBER_ACCESS:
        obj = (parent.child_by_field_name("operand") or parent.child_by_field_name("value")
               or parent.child_by_field_name("object"))
        if obj is None:
            return False
        text = p.b.node_text(obj)
        if text in owners:  # Decoder.old
            return True
        here = _enclosing_type(p, node)
        if here not in owners:
            return False
        if parent.type == "selector_expression":
            return text == _go_receiver(p, node)
        if p.doc.grammar == "python":
            return text in ("self", "cls")
        return text in ("self", "this")
    if parent.type == "field_initializer":  # Rust: Decoder { old: 1 }
        literal = enclosing(node, ("struct_expression",))
        name = literal.child_by_field_name("name") if literal is not None else None
        return name is not None and _last_name(p.b.node_text(name)) in owners
    return False


def owner_at(p: ParsedDoc, node) -> tuple[str, bool] | None:
    """The owner of the member named at ``node``: where it is declared (``owner_of``), or at a
    use the syntax ties to a type (``self.old`` in a class, a Go method's ``d.old``)."""
    got = owner_of(p, node)
    if got is not None:
        return got
    parent = node.parent
    if parent is None or parent.type not in MEMBER_ACCESS:
        return None
    here = _enclosing_type(p, node)
    return (here, False) if here is not None and tied(p, node, {here}) else None


def literal_keys(p: ParsedDoc, owners: set[str], old: str) -> list:
    """Go: the keys ``old`` of the struct literals of ``owners`` (``&Decoder{old: 1}``) —
    identifiers, where the grammar's field names are ``field_identifier``."""
    out = []
    for n in walk(p.tree.root_node):
        if n.type != "composite_literal":
            continue
        kind = n.child_by_field_name("type")
        body = n.child_by_field_name("body")
        if kind is None or body is None or _last_name(p.b.node_text(kind)) not in owners:
            continue
        for element in body.named_children:
            key = element.child_by_field_name("key") if element.type == "keyed_element" else None
            ident = key.named_children[0] if key is not None and key.named_children else None
            if ident is not None and ident.type == "identifier" and p.b.node_text(ident) == old:
                out.append(ident)
    return out


def declares(p: ParsedDoc, offset: int) -> bool:
    """The name at character ``offset`` declares a member: a field, a method, or an attribute
    assigned on ``self`` / ``this`` inside its class (``self.total = 0``) — renaming it is a
    rename of the member (NE101's), never a switch of one use."""
    b = p.b.byte(offset)
    node = p.tree.root_node.descendant_for_byte_range(b, b + 1)
    if node is None or node.parent is None:
        return False
    parent = node.parent
    if parent.type in ("attribute", "member_expression"):
        obj = parent.child_by_field_name("object")
        owner = enclosing(node, CLASSES)
        assigned = parent.parent is not None and parent.parent.type in ASSIGNMENTS \
            and field_is(parent.parent, "left", parent)
        return obj is not None and p.b.node_text(obj) in ("self", "this") and owner is not None and assigned
    return owner_of(p, node) is not None


def defines_method(parsed: list[ParsedDoc], grammar: str | None, name: str) -> bool:
    """A Python document of ``parsed`` defines a function ``name`` now (``def name``): a use
    ``self.old`` switched to ``self.new`` while ``def old`` stands is a switch to another method
    (written next, or already), not a rename (heldout5: jinja's ``self.handle_name`` ->
    ``self.handle_assign_name`` in one dispatch table, ``def handle_assign_name`` written after)."""
    return grammar == "python" and any(declares_name(name, p.doc.text) for p in parsed if p.doc.grammar == grammar)
