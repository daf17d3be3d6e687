"""Step 2 of next-edit — **where** the user's change must be followed (tree-sitter decides).

Renames: the old name's occurrences tied to the edited binding (scope-aware for parameters and
locals; module-wide for module-level names, whose other documents ``exports`` reaches through the
language's import and export statements; ``x.name`` for attributes).
Signature changes: ``calls.signature_candidates``.
Otherwise the model-only path (``drop_candidates``) takes identifiers whose likelihood dropped.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.members import ambiguous, defines_method, family, literal_keys, owner_at, tied
from mercury_lsp.next_edit.query import Candidate, EditModel, NextEditQuery, check_cancelled
from mercury_lsp.next_edit.scopes import (
    FUNCTION_SCOPES,
    OTHER_NAMESPACES,
    declares_local,
    declaring_scopes,
    member_key,
    rebinding_spans,
)
from mercury_lsp.next_edit.text import diff_region, is_ident_char
from mercury_lsp.next_edit.tree import (
    PY_PARAM_WRAPPERS,
    ParsedDoc,
    enclosing,
    field_is,
    in_class_body,
    param_nodes,
    walk,
)
from mercury_lsp.text import TextIndex

# Scopes of Python that bind their own names.
PY_FUNCTION_SCOPES = ("function_definition", "lambda")
PY_COMPREHENSIONS = ("list_comprehension", "set_comprehension", "dictionary_comprehension",
                     "generator_expression")
PY_PATTERNS = ("pattern_list", "tuple_pattern", "list_pattern", "parenthesized_expression",
               "list_splat_pattern")
# Identifier node types of other grammars (generic, syntax-only scoping).
GENERIC_IDENTIFIERS = ("identifier", "field_identifier", "property_identifier", "type_identifier",
                       "shorthand_property_identifier", "shorthand_property_identifier_pattern")

# Definitions (a renamed name standing directly in one is the thing defined) and imports (a name
# there is another module's).
DEFINITIONS = ("struct_item", "enum_item", "function_item", "trait_item", "type_item", "union_item",
               "type_spec", "type_declaration", "function_declaration", "method_declaration",
               "class_declaration", "interface_declaration", "type_alias_declaration", "enum_declaration")
IMPORTS = ("use_declaration", "import_statement", "import_declaration", "import_spec")
# Rust: a method is a function of an ``impl`` or ``trait`` block; called as ``x.name(...)``
# (a field expression, the callee of a call) or by path (``Self::name``, ``Type::name``).
RUST_FUNCTIONS = ("function_item", "function_signature_item")
RUST_METHOD_BLOCKS = ("impl_item", "trait_item")

MIN_PROBABILITY = 1e-9  # floor of a "before" likelihood in a ratio (no division by zero)


# ---------------------------------------------------------------------------- python scoping
def _binding_position(node) -> bool:
    """An identifier assigned to (assignment/for/with/comprehension targets, imports, walrus)."""
    child, parent = node, node.parent
    while parent is not None and parent.type in PY_PATTERNS:
        child, parent = parent, parent.parent
    if parent is None:
        return False
    if parent.type in ("assignment", "augmented_assignment", "for_statement", "for_in_clause"):
        return field_is(parent, "left", child)
    if parent.type in ("as_pattern_target", "aliased_import", "named_expression", "global_statement",
                       "nonlocal_statement"):
        return True
    if parent.type == "dotted_name" and parent.parent is not None and parent.parent.type == "import_statement":
        return True
    return False


def _is_variable(node) -> bool:
    """An identifier node naming a variable (not ``x.attr``'s attr, not ``f(kw=...)``'s kw)."""
    parent = node.parent
    if parent is None:
        return True
    if parent.type == "attribute" and field_is(parent, "attribute", node):
        return False
    if parent.type == "keyword_argument" and field_is(parent, "name", node):
        return False
    if parent.type in ("function_definition", "class_definition") and field_is(parent, "name", node) \
            and in_class_body(parent):  # a method's name is an attribute of its class
        return False
    return True


def _scope_binds(scope, name: str, b: TextIndex) -> bool:
    """Does a nested function/lambda/comprehension bind ``name`` itself (shadowing the outer)?"""
    if scope.type in PY_FUNCTION_SCOPES:
        params = scope.child_by_field_name("parameters")
        if params is not None and any(b.node_text(n) == name for n, _, _ in param_nodes(params)):
            return True
        body = scope.child_by_field_name("body")
        if body is None:
            return False
        for n in walk(body, prune=lambda x: x.type in PY_FUNCTION_SCOPES + PY_COMPREHENSIONS + ("class_definition",)):
            if n.type in ("global_statement", "nonlocal_statement") and any(
                    b.node_text(c) == name for c in n.named_children):
                return False
            if n.type == "identifier" and b.node_text(n) == name and _binding_position(n):
                return True
        return False
    if scope.type in PY_COMPREHENSIONS:
        for clause in scope.named_children:
            if clause.type == "for_in_clause":
                left = clause.child_by_field_name("left")
                if left is not None and any(n.type == "identifier" and b.node_text(n) == name
                                            for n in walk(left)):
                    return True
    return False


def variable_occurrences(scope, name: str, b: TextIndex) -> list:
    """Identifiers naming variable ``name`` in ``scope``, skipping nested scopes that rebind it."""
    out = []
    own_name = scope.child_by_field_name("name") if scope.type == "function_definition" else None

    def prune(n) -> bool:
        return n.type in PY_FUNCTION_SCOPES + PY_COMPREHENSIONS and _scope_binds(n, name, b)

    for n in walk(scope, prune=prune):
        if n.type in PY_FUNCTION_SCOPES + PY_COMPREHENSIONS and n is not scope and prune(n):
            continue
        if n.type != "identifier" or b.node_text(n) != name or not _is_variable(n):
            continue
        if own_name is not None and n.start_byte == own_name.start_byte:
            continue
        out.append(n)
    return out


def _attribute_occurrences(root, name: str, b: TextIndex) -> list:
    out = []
    for n in walk(root):
        if n.type == "attribute":
            attr = n.child_by_field_name("attribute")
            if attr is not None and b.node_text(attr) == name:
                out.append(attr)
    return out


def rename_sites_python(parsed: list[ParsedDoc], home: ParsedDoc, node, old: str) -> tuple[list, str]:
    """(list of (parsed doc, identifier node), role) for renaming ``old`` at edited ``node``."""
    b = home.b
    parent = node.parent
    role = "variable"
    scope = None
    if parent is not None and (parent.type in ("parameters", "lambda_parameters")
                               or (parent.type in PY_PARAM_WRAPPERS and parent.parent is not None
                                   and parent.parent.type in ("parameters", "lambda_parameters"))):
        params = parent if parent.type in ("parameters", "lambda_parameters") else parent.parent
        role, scope = "parameter", params.parent
    elif parent is not None and parent.type == "function_definition" and field_is(parent, "name", node):
        if in_class_body(parent):
            role = "method"
        else:
            role, scope = "function", enclosing(parent, PY_FUNCTION_SCOPES)
    elif parent is not None and parent.type == "class_definition" and field_is(parent, "name", node):
        role, scope = "class", enclosing(parent, PY_FUNCTION_SCOPES)
    elif parent is not None and parent.type == "attribute" and field_is(parent, "attribute", node):
        role = "attribute"
    elif parent is not None and parent.type == "keyword_argument" and field_is(parent, "name", node):
        return [], "keyword"
    else:
        scope = enclosing(node, PY_FUNCTION_SCOPES + PY_COMPREHENSIONS)
        if _binding_position(node):
            role = "local" if scope is not None else "global"
        else:  # a use: the innermost enclosing scope that still binds the old name, else module
            while scope is not None and not _scope_binds(scope, old, b):
                scope = enclosing(scope, PY_FUNCTION_SCOPES + PY_COMPREHENSIONS)
            role = "local" if scope is not None else "global"
    sites: list = []
    if role == "attribute" and not _declared_attribute(parsed, home, old):
        return [], "attribute"  # another library's attribute (a mock's ``return_value``): not the user's to rename
    if role == "attribute" and defines_method(parsed, home.doc.grammar, old):
        return [], "attribute"  # one use switched while the old method stands: a new method to come, no rename
    if role in ("method", "attribute"):
        for p in parsed:
            if p.doc.grammar == home.doc.grammar:
                sites.extend((p, n) for n in _attribute_occurrences(p.tree.root_node, old, p.b))
        return member_sites(parsed, home, node, old, sites), role
    if scope is not None:
        return [(home, n) for n in variable_occurrences(scope, old, b)], role
    # module-level: the other documents are reached through the export machinery (``exports``)
    return [(home, n) for n in variable_occurrences(home.tree.root_node, old, b)], "module-level " + role


def _declared_attribute(parsed: list[ParsedDoc], home: ParsedDoc, name: str) -> bool:
    """Some open document of ``home``'s grammar (or ``home`` before the recent edits) declares the
    attribute ``name``: assigns it on ``self`` or ``cls`` (a type annotation between), defines a
    method of that name, or assigns or annotates it at a line's start (a class body's field, a
    dataclass's)."""
    rx = re.compile(rf"(?:\b(?:self|cls)\.{re.escape(name)}\s*(?::[^=\n]*)?=(?!=)|^[ \t]*(?:async\s+)?def\s+{re.escape(name)}\b"
                    rf"|^[ \t]+{re.escape(name)}\s*[:=](?!=))", re.M)
    texts = [p.doc.text for p in parsed if p.doc.grammar == home.doc.grammar] + list(home.doc.history[-1:])
    return any(rx.search(t) for t in texts)


def member_sites(parsed: list[ParsedDoc], home: ParsedDoc, node, old: str, sites: list) -> list:
    """A renamed member's ``sites`` (every ``x.old`` of the grammar's documents), kept to those the
    syntax ties to the renamed member's type and its subclasses once another type declares a member
    named ``old`` too (``members``); with the keys of the type's Go struct literals."""
    got = owner_at(home, node)
    if got is None or got[1]:  # no owner the syntax names, or an interface's / trait's member
        return sites
    grammar = home.doc.grammar
    owners = family(parsed, grammar, got[0])
    if ambiguous(parsed, grammar, old, owners):
        sites = [(p, n) for p, n in sites if tied(p, n, owners)]
    if grammar == "go":
        sites += [(p, n) for p in parsed if p.doc.grammar == grammar for n in literal_keys(p, owners, old)]
    return sites


def rust_method(node) -> bool:
    """``node`` names a function declared in an ``impl`` or ``trait`` block (a method, or an
    associated function such as ``new``)."""
    parent = node.parent
    block = parent.parent if parent is not None else None
    return (parent is not None and parent.type in RUST_FUNCTIONS and field_is(parent, "name", node)
            and block is not None and block.type == "declaration_list"
            and block.parent is not None and block.parent.type in RUST_METHOD_BLOCKS)


def rust_method_sites(parsed: list[ParsedDoc], node, old: str) -> list:
    """A renamed Rust method's uses across the Rust documents: its calls ``x.old(...)`` (never a
    field read ``x.old``, which is a struct field of that name), its paths ``Self::old`` /
    ``Type::old``, and the same method of the other blocks when it belongs to a trait (the trait's
    declaration and its ``impl Trait for`` blocks declare it again)."""
    block = node.parent.parent.parent
    trait = _rust_trait_name(block)
    owners = {"Self", *filter(None, (trait, _rust_last_segment(block.child_by_field_name(
        "name" if block.type == "trait_item" else "type"))))}
    sites = []
    for p in parsed:
        if p.doc.grammar != "rust":
            continue
        for n in walk(p.tree.root_node):
            if p.b.node_text(n) != old or n.parent is None:
                continue
            parent = n.parent
            if n.type == "field_identifier" and parent.type == "field_expression" \
                    and parent.parent is not None and parent.parent.type == "call_expression" \
                    and field_is(parent.parent, "function", parent):
                sites.append((p, n))
            elif n.type == "identifier" and parent.type == "scoped_identifier" and field_is(parent, "name", n) \
                    and _rust_last_segment(parent.child_by_field_name("path")) in owners \
                    and enclosing(n, IMPORTS) is None:
                sites.append((p, n))
            elif trait is not None and n.type == "identifier" and rust_method(n) \
                    and _rust_trait_name(n.parent.parent.parent) == trait:
                sites.append((p, n))
    return sites


def _rust_trait_name(block) -> str | None:
    """The trait a ``trait`` block declares or an ``impl Trait for Type`` block implements (its
    last path segment); None for an inherent ``impl Type`` block."""
    return _rust_last_segment(block.child_by_field_name("name" if block.type == "trait_item" else "trait"))


def _rust_last_segment(node) -> str | None:
    """A path's or type's last segment, generics aside (``crate::a::Tuple<T>`` -> ``Tuple``)."""
    if node is None:
        return None
    return node.text.decode("utf-8", "replace").split("<", 1)[0].rsplit("::", 1)[-1].strip() or None


def rename_sites_generic(parsed: list[ParsedDoc], home: ParsedDoc, node, old: str) -> tuple[list, str]:
    """Other grammars: same identifier type; inside the enclosing function when the edited name is
    declared there (a parameter/declaration ancestor), else the document (and, for members, the
    other documents of the grammar)."""
    kind = node.type
    func = node.parent
    declared = declares_local(home.doc.text, home.b.char(node.start_byte), home.b.char(node.end_byte))
    while func is not None and func.type not in FUNCTION_SCOPES \
            and not (("function" in func.type or "method" in func.type) and "call" not in func.type):
        if any(w in func.type for w in ("parameter", "declarat", "declarator")):
            declared = True
        func = func.parent
    if home.doc.grammar == "rust" and rust_method(node):
        return rust_method_sites(parsed, node, old), "method"
    if kind in ("field_identifier", "property_identifier"):
        docs = [p for p in parsed if p.doc.grammar == home.doc.grammar]
        sites = [(p, n) for p in docs for n in walk(p.tree.root_node) if n.type == kind and p.b.node_text(n) == old]
        return member_sites(parsed, home, node, old, sites), "member"
    scope = func if declared and func is not None else home.tree.root_node
    # a variable, never the name of a struct literal's field (``Report{title: title}``)
    sites = [(home, n) for n in walk(scope) if n.type == kind and home.b.node_text(n) == old
             and enclosing(n, OTHER_NAMESPACES) is None and not member_key(n)]
    if scope is func:
        shadowed = rebinding_spans(func, old, home.b, node.start_byte)
        return [(p, n) for p, n in sites if not any(lo <= n.start_byte < hi for lo, hi in shadowed)], "local"
    # a document-wide name: not where a function binds the same name itself; where the edited
    # function is one of those, the name is its own
    at = home.b.char(node.start_byte)
    local = declaring_scopes(home, old)
    own = [(lo, hi) for lo, hi in local if lo <= at < hi]
    if own:
        lo, hi = max(own)
        return [(p, n) for p, n in sites if lo <= home.b.char(n.start_byte) < hi], "local"
    if node.parent is not None and node.parent.type in DEFINITIONS:  # a definition renamed: an imported namesake is another thing
        sites = [(p, n) for p, n in sites if enclosing(n, IMPORTS) is None]
    return [(p, n) for p, n in sites if not any(lo <= home.b.char(n.start_byte) < hi for lo, hi in local)], "document"



# ---------------------------------------------------------------------------- model only
def drop_candidates(model: EditModel, query: NextEditQuery, parsed: list[ParsedDoc], edited: list[ParsedDoc],
                    cancel) -> list[Candidate]:
    """Model-only: identifiers near the newest edit (``edited``: the documents with a history, the
    newest edited first) whose likelihood dropped because of it."""
    opts = query.options
    docs = edited or [p for p in parsed if p.doc.uri == query.cursor_uri]
    if not docs or not docs[0].doc.history:
        return []
    doc = docs[0].doc
    before, after = doc.history[0], doc.text
    p, eb, ea = diff_region(before, after)
    lo_b, hi_b = max(0, p - opts.drop_window_chars), min(len(before), eb + opts.drop_window_chars)
    lo_a, hi_a = lo_b, min(len(after), ea + opts.drop_window_chars)
    old = model.token_probs(before[lo_b:hi_b], opts.score_stride, cancel)
    check_cancelled(cancel)
    new = model.token_probs(after[lo_a:hi_a], opts.score_stride, cancel)
    delta = ea - eb
    old_at = {}
    for s, e, pr in old:
        s, e = s + lo_b, e + lo_b
        if e <= p:
            old_at[(s, e)] = pr
        elif s >= eb:
            old_at[(s + delta, e + delta)] = pr
    drops = []
    for s, e, pr in new:
        s, e = s + lo_a, e + lo_a
        if p <= e and s <= ea:  # the edit itself
            continue
        prev = old_at.get((s, e))
        if prev is None or pr >= opts.drop_max_probability or pr >= opts.drop_ratio * prev:
            continue
        drops.append((pr / max(prev, MIN_PROBABILITY), s, e))
    cands: list[Candidate] = []
    taken: list[tuple[int, int]] = []
    for ratio, s, e in sorted(drops):
        while s > 0 and is_ident_char(after[s - 1]) and is_ident_char(after[s]):
            s -= 1
        while e < len(after) and is_ident_char(after[e]) and e > 0 and is_ident_char(after[e - 1]):
            e += 1
        word = after[s:e]
        if not word.strip() or any(s < b and a < e for a, b in taken):
            continue
        taken.append((s, e))
        cands.append(Candidate(doc.uri, s, e, word, "model", None,
                               f"'{word.strip()}' became unlikely after the edit "
                               f"(likelihood x{ratio:.2g})"))
        if len(cands) >= opts.drop_max_candidates:
            break
    return cands
