"""NE110 extracted-function: a helper the user just wrote replaces the copies of its body elsewhere
— a call with the helper's parameters bound to what each copy has in their place.

**What.** The newest edits (``EXAMPLES``) are read for a function they wrote whose name is new to
the document (``def``, ``function``, ``const f = (...) =>``, ``func``, ``fn``; a method of a
class or impl too, called through its receiver: ``self.``, ``this.``). Its body — one expression
(a lone ``return``, an arrow's expression, Rust's tail expression) or a run of statements — is
turned into a clone pattern (``clones``): its tokens, any spacing and comments between them, each
parameter a hole that matches an operand and the same text at its other uses. Every match in
code of the document that is one node of the tree (or whole statements of one block), outside
the helper itself, becomes the call: ``helper(args)`` for an expression, the call as a statement
for statements (``return helper(args)`` when both end by returning). A method's copies count in
its own class or impl only. A multi-line value bound to a new name (``const readOptions = {...}``
over several lines; one line is NE104's) is a helper without parameters: its copies become the
name. A body must be specific (``MIN_LITERALS`` tokens that are no parameter); more copies than
``nextEdit.repeatMaxSites``: none is offered.

**Why.** Extracting a function is half of the refactoring; the other half is calling it where the
same code stands, which a text search for the body misses as soon as the arguments differ.

**Example.** ``const isEventKeyType = key => typeof key === 'string' || typeof key === 'symbol';``
written: ``const k = typeof eventName === 'string' || typeof eventName === 'symbol' ? eventName
: x;`` becomes ``const k = isEventKeyType(eventName) ? eventName : x;``.
"""

from __future__ import annotations

from dataclasses import dataclass

from mercury_lsp.next_edit.examples import to_current
from mercury_lsp.next_edit.prose import COMMENTS, non_code
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import EXTRACTED_FUNCTION, REPEAT_AGE_PENALTY
from mercury_lsp.next_edit.rules.follow.clones import Pattern, node_spanning, pattern, statements_spanning
from mercury_lsp.next_edit.scopes import word_in
from mercury_lsp.next_edit.text import diff_region, line_bounds
from mercury_lsp.next_edit.tree import ParsedDoc, walk

EXAMPLES = 3  # the newest edits read (as the token rules)
MIN_LITERALS = 6  # tokens of the body besides its parameters: 'return x + 1' agrees with any sum
MIN_VALUE_LINES = 2  # a value on one line is NE104's
# Function nodes per grammar: how each names its name, parameters and body.
FUNCTIONS = ("function_definition", "function_declaration", "function_item", "method_definition",
             "method_declaration", "arrow_function", "function_expression")
PARAMETER_LISTS = ("parameters", "formal_parameters", "parameter_list", "lambda_parameters")
CONTAINERS = ("class_definition", "class_declaration", "class_body", "impl_item", "class")
BINDINGS = ("assignment", "variable_declarator", "let_declaration", "short_var_declaration")
STATEMENT_END = ";"


@dataclass(frozen=True)
class Helper:
    name: str
    span: tuple[int, int]  # the definition (never searched)
    params: tuple[str, ...]
    body: list  # the nodes whose copies are looked for
    expression: bool  # the body is an expression (else statements)
    returns: bool  # the statements end by returning
    receiver: str | None  # a method's receiver ('self', 'this', 'r'), None for a function
    container: tuple[int, int] | None  # a method's class or impl: its copies are there only
    value: bool = False  # a value bound to a name: its copies become the name


def run(ctx: RuleContext) -> list[Prediction]:
    """The copies of the bodies of the helpers the newest edits wrote (module docstring)."""
    out: list[Prediction] = []
    seen: set[tuple[str, int]] = set()
    for ex in ctx.examples[:EXAMPLES]:
        home = ctx.by_uri.get(ex.doc.uri)
        region = _written(ex)
        if home is None or region is None:
            continue
        oldest = home.doc.history[-1] if home.doc.history else home.doc.text
        for helper in _helpers(home, region):
            if word_in(helper.name, oldest):
                continue  # not a new name: a function edited, not extracted
            pat = pattern(home, helper.body, helper.params)
            if pat is None or pat.tokens < MIN_LITERALS or len(pat.holes) != len(helper.params):
                continue
            sites = _copies(home, helper, pat)
            if not sites or len(sites) > ctx.options.repeat_max_sites:
                continue
            for s, e, new in sites:
                if (home.doc.uri, s) in seen:
                    continue
                seen.add((home.doc.uri, s))
                conf = EXTRACTED_FUNCTION.value - REPEAT_AGE_PENALTY.value * ex.age
                out.append(Prediction(home.doc.uri, s, e, new, round(max(conf, 0.0), 6),
                                      f"the same code as '{helper.name}': a call of it", RULE.kind, "syntax",
                                      home.doc.text[s:e]))
    return out


def _written(ex) -> tuple[int, int] | None:
    """The whole lines of the current text the example wrote (None: it only deleted)."""
    p, _, ea = diff_region(ex.before, ex.after)
    if ea <= p:
        return None
    lo, hi = to_current(ex, p), to_current(ex, ea)
    if lo is None or hi is None or hi <= lo:
        return None
    return line_bounds(ex.doc.text, lo, hi)


def _helpers(doc: ParsedDoc, region: tuple[int, int]) -> list[Helper]:
    """The functions (and multi-line values) written in ``region``, as helpers."""
    b0, b1 = doc.b.byte(region[0]), doc.b.byte(region[1])
    out = []
    for node in walk(doc.tree.root_node, prune=lambda n: n.end_byte < b0 or n.start_byte > b1):
        if node.end_byte < b0 or node.start_byte > b1 or not (b0 <= node.start_byte and node.end_byte <= b1 + 1):
            continue
        helper = _function(doc, node) if node.type in FUNCTIONS else _value(doc, node) if node.type in BINDINGS \
            else None
        if helper is not None:
            out.append(helper)
    return out


def _name_of(doc: ParsedDoc, node) -> str | None:
    name = node.child_by_field_name("name")
    if name is None and node.type in ("arrow_function", "function_expression") and node.parent is not None \
            and node.parent.type == "variable_declarator":
        name = node.parent.child_by_field_name("name")
    return doc.b.node_text(name) if name is not None and name.type in ("identifier", "property_identifier") else None


def _function(doc: ParsedDoc, node) -> Helper | None:
    name = _name_of(doc, node)
    body = node.child_by_field_name("body")
    if name is None or body is None:
        return None
    params, receiver = _parameters(doc, node)
    if params is None:
        return None
    container = _container(node)
    if receiver is None and doc.doc.grammar in ("javascript", "typescript", "tsx") and node.type == "method_definition":
        receiver = "this"
    if receiver is not None and container is None:
        return None
    statements = [c for c in body.named_children if c.type not in COMMENTS] if body.type in (
        "block", "statement_block") else None
    if statements is None:  # an arrow's expression
        return Helper(name, _span(doc, node), params, [body], True, False, receiver, container)
    if statements and statements[0].type == "expression_statement" and statements[0].named_child_count == 1 \
            and statements[0].named_children[0].type == "string":
        statements = statements[1:]  # a docstring
    if len(statements) == 1 and statements[0].type == "statement_list":
        statements = [c for c in statements[0].named_children if c.type not in COMMENTS]  # Go's block
    if not statements:
        return None
    if len(statements) == 1:
        only = statements[0]
        value = _returned(only)
        if value is not None:
            return Helper(name, _span(doc, node), params, [value], True, False, receiver, container)
        if doc.doc.grammar == "rust" and only.type.endswith("expression") and not doc.b.node_text(body).rstrip(
                "} \n\t").endswith(";"):
            return Helper(name, _span(doc, node), params, [only], True, False, receiver, container)
    returns = statements[-1].type == "return_statement"
    if any(_returned(s) is not None or s.type == "return_statement" for s in statements[:-1]):
        return None  # an early return: the copies would not return there
    return Helper(name, _span(doc, node), params, statements, False, returns, receiver, container)


def _returned(statement):
    """The expression a lone ``return EXPR`` returns (None: another statement)."""
    if statement.type != "return_statement":
        return None
    values = [c for c in statement.named_children if c.type not in COMMENTS]
    if len(values) != 1:
        return None
    value = values[0]
    if value.type == "expression_list" and value.named_child_count == 1:
        value = value.named_children[0]
    return value


def _parameters(doc: ParsedDoc, node) -> tuple[tuple[str, ...] | None, str | None]:
    """The parameter names (None: a shape not read) and a method's receiver."""
    params = node.child_by_field_name("parameters") or node.child_by_field_name("parameter")
    receiver = None
    if node.type == "method_declaration":  # Go: func (r *T) name(...)
        rec = node.child_by_field_name("receiver")
        names = [doc.b.node_text(c) for d in (rec.named_children if rec else []) for c in d.named_children
                 if c.type == "identifier"]
        receiver = names[0] if names else None
        if receiver is None:
            return None, None
    if params is None:
        return (), receiver
    if params.type == "identifier":  # an arrow's lone parameter
        return (doc.b.node_text(params),), receiver
    names: list[str] = []
    for i, p in enumerate(c for c in params.named_children if c.type not in COMMENTS):
        if p.type == "self_parameter":
            receiver = "self"
            continue
        ids = [p] if p.type == "identifier" else [c for c in _pattern_ids(p)]
        if not ids:
            return None, None
        if p.type == "parameter_declaration":
            names += [doc.b.node_text(c) for c in ids]
        else:
            names.append(doc.b.node_text(ids[0]))
        if i == 0 and doc.doc.grammar == "python" and names[0] in ("self", "cls") and _container(node) is not None:
            receiver = names.pop()
    return tuple(names), receiver


def _pattern_ids(p) -> list:
    """The names a parameter node binds (``x: int``, ``b = 2``, Go's ``a, b int``)."""
    name = p.child_by_field_name("name") or p.child_by_field_name("pattern") or p.child_by_field_name("left")
    if name is not None and name.type == "identifier":
        return [name]
    if p.type == "parameter_declaration":
        return [c for c in p.named_children if c.type == "identifier"]
    return [c for c in p.named_children if c.type == "identifier"][:1]


def _container(node) -> tuple[int, int] | None:
    n = node.parent
    while n is not None and n.type not in CONTAINERS:
        if n.type in FUNCTIONS:
            return None
        n = n.parent
    return (n.start_byte, n.end_byte) if n is not None else None


def _span(doc: ParsedDoc, node) -> tuple[int, int]:
    top = node
    while top.parent is not None and top.parent.type in ("decorated_definition", "variable_declarator",
                                                          "lexical_declaration", "export_statement"):
        top = top.parent
    return doc.b.char(top.start_byte), doc.b.char(top.end_byte)


def _value(doc: ParsedDoc, node) -> Helper | None:
    """A multi-line value bound to a name: a helper without parameters (its copies become the name)."""
    name = node.child_by_field_name("left") or node.child_by_field_name("name") or node.child_by_field_name(
        "pattern")
    value = node.child_by_field_name("right") or node.child_by_field_name("value")
    if node.type == "short_var_declaration":
        name, value = (node.child_by_field_name("left"), node.child_by_field_name("right"))
        name = name.named_children[0] if name is not None and name.named_child_count == 1 else None
        value = value.named_children[0] if value is not None and value.named_child_count == 1 else None
    if name is None or value is None or name.type != "identifier" or value.type in FUNCTIONS:
        return None
    if value.end_point[0] - value.start_point[0] + 1 < MIN_VALUE_LINES:
        return None
    return Helper(doc.b.node_text(name), _span(doc, node), (), [value], True, False, None, None, value=True)


def _copies(doc: ParsedDoc, helper: Helper, pat: Pattern) -> list[tuple[int, int, str]]:
    """(start, end, call) of the helper's copies in ``doc``."""
    text = doc.doc.text
    out = []
    lo, hi = helper.span
    for m in pat.regex.finditer(text):
        s, e = m.span()
        if s < hi and lo < e or non_code(doc, s):
            continue
        if helper.container is not None and not (helper.container[0] <= doc.b.byte(s) < helper.container[1]):
            continue
        if helper.expression:
            if node_spanning(doc, s, e) is None:
                continue
        elif not statements_spanning(doc, s, e, len(helper.body)):
            continue
        args = ", ".join(" ".join(m.group(f"p{pat.holes.index(p)}").split()) for p in helper.params)
        call = helper.name if helper.value else f"{helper.name}({args})"
        if helper.receiver is not None:
            call = f"{helper.receiver}.{call}"
        if not helper.expression:
            ends = text[:e].rstrip().endswith(STATEMENT_END)
            call = ("return " if helper.returns else "") + call + (STATEMENT_END if ends else "")
        out.append((s, e, call))
    return out


RULE = Rule("NE110", "extracted-function", "repeat", EXTRACTED_FUNCTION.value, run, __doc__)
