"""NE112 implemented-member: a member added to an interface, trait or abstract class gets a stub in
each of its implementations — the test doubles too — in the open documents of the language.

**What.** The newest edits (``EXAMPLES``) are read for a member they wrote into a definition other
types implement: a Rust ``trait``'s method without a body, a Go ``interface``'s method, a
TypeScript ``interface``'s method or an ``abstract`` method of an abstract class, a Python
``@abstractmethod``. Its implementations are the types that say so — Rust's ``impl Trait for
X``, TypeScript's ``class X implements I`` / ``extends A``, Python's ``class X(Base)`` — and, for
Go's structural interfaces, the receiver types whose methods cover all the interface's other
methods (at least one; with fewer than ``MIN_GO_METHODS``, only where the type's document names
the interface: an assertion ``var _ Store = (*memStore)(nil)``, a constructor returning it). Each that lacks the member gets a stub after its last member, in the
language's own form of "not written yet", its signature copied from the new member:
``todo!()`` (rust-analyzer's), ``panic("unimplemented")`` (gopls'), ``throw new Error("Method not
implemented.")`` (TypeScript's quick fix), ``raise NotImplementedError``. At most
``nextEdit.repeatMaxSites`` implementations: more say the member is meant to have a default.

**Why.** A new required member breaks every implementation until it has one; the stubs make the
code compile (or import) again and show the user each place to fill, mocks and fakes included.

**Example.** ``fn flush(&mut self) -> io::Result<()>;`` added to ``trait Sink``: ``impl Sink for
FileSink { ... }`` gets ``fn flush(&mut self) -> io::Result<()> {\\n        todo!()\\n    }``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mercury_lsp.next_edit.examples import to_current
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import IMPLEMENTED_MEMBER, LINES_OTHER_DOCUMENT_PENALTY
from mercury_lsp.next_edit.scopes import word_in
from mercury_lsp.next_edit.text import diff_region, indent_of, line_bounds
from mercury_lsp.next_edit.tree import ParsedDoc, walk

EXAMPLES = 3  # the newest edits read (as the token rules)
# A Go type implements an interface of this few other methods only where its document names the
# interface (``var _ Store = (*memStore)(nil)``, a constructor returning it).
MIN_GO_METHODS = 2
INDENT = {"go": "\t", "rust": "    ", "python": "    ", "typescript": "  ", "tsx": "  ", "javascript": "  "}
STUB_BODY = {"rust": "todo!()", "go": 'panic("unimplemented")', "python": "raise NotImplementedError",
             "typescript": 'throw new Error("Method not implemented.");',
             "tsx": 'throw new Error("Method not implemented.");'}


@dataclass(frozen=True)
class Member:
    owner: str  # the interface's (trait's, class's) name
    name: str
    signature: str  # the member's head, as the stub repeats it (no body, no ';', no 'abstract')
    others: frozenset[str]  # the owner's other members


@dataclass(frozen=True)
class Implementation:
    doc: ParsedDoc
    members: frozenset[str]
    at: int  # where a new member goes (after the last one)
    indent: str  # a member's indentation there
    receiver: str = ""  # Go: the receiver a method of the type is written with ('(m *memStore)')
    empty: bool = False  # the body has no member yet: the stub opens and closes its own lines


def run(ctx: RuleContext) -> list[Prediction]:
    """Stubs of the members the newest edits added, in the implementations lacking them."""
    out: list[Prediction] = []
    seen: set[tuple[str, int, str]] = set()
    for ex in ctx.examples[:EXAMPLES]:
        home = ctx.by_uri.get(ex.doc.uri)
        grammar = ex.doc.grammar or ""
        if home is None or grammar not in STUB_BODY:
            continue
        p, _, ea = diff_region(ex.before, ex.after)
        lo, hi = to_current(ex, p), to_current(ex, ea)
        if lo is None or hi is None or hi <= lo:
            continue
        lo, hi = line_bounds(home.doc.text, lo, hi)
        docs = [d for d in ctx.parsed if d.doc in ctx.same_language(home.doc)]
        for member in _new_members(home, lo, hi):
            impls = [i for i in _implementations(docs, member, grammar) if member.name not in i.members]
            if len(impls) > ctx.options.repeat_max_sites:
                continue
            for impl in impls:
                key = (impl.doc.doc.uri, impl.at, member.name)
                if key in seen:
                    continue
                seen.add(key)
                conf = IMPLEMENTED_MEMBER.value - (LINES_OTHER_DOCUMENT_PENALTY.value if impl.doc is not home else 0)
                out.append(Prediction(impl.doc.doc.uri, impl.at, impl.at, _stub(member, impl, grammar),
                                      round(conf, 6), f"'{member.owner}' has a new member '{member.name}'",
                                      RULE.kind, "syntax", ""))
    return out


def _new_members(doc: ParsedDoc, lo: int, hi: int) -> list[Member]:
    """The members written on the lines ``[lo, hi)`` into a definition others implement."""
    b0, b1 = doc.b.byte(lo), doc.b.byte(hi)
    out = []
    for n in walk(doc.tree.root_node, prune=lambda x: x.end_byte < b0 or x.start_byte > b1):
        if n.start_byte < b0 or n.end_byte > b1 + 1:
            continue
        found = _member(doc, n)
        if found is not None:
            out.append(found)
    return out


def _member(doc: ParsedDoc, n) -> Member | None:
    """``n`` as a required member of an interface-like definition, or None."""
    text = doc.b.node_text
    g = doc.doc.grammar
    owner = None
    if g == "rust" and n.type == "function_signature_item":
        owner = _up(n, "trait_item")
    elif g == "go" and n.type in ("method_elem", "method_spec"):
        owner = _up(n, "type_spec")
    elif g in ("typescript", "tsx") and n.type == "method_signature":
        owner = _up(n, "interface_declaration")
    elif g in ("typescript", "tsx") and n.type == "abstract_method_signature":
        owner = _up(n, "abstract_class_declaration")
    elif g == "python" and n.type == "decorated_definition" and any(
            text(d).lstrip("@").split("(")[0].split(".")[-1] == "abstractmethod" for d in n.named_children
            if d.type == "decorator"):
        owner = _up(n, "class_definition")
        n = n.child_by_field_name("definition")
    if owner is None or n is None:
        return None
    name_node = n.child_by_field_name("name")
    owner_name = owner.child_by_field_name("name")
    if name_node is None or owner_name is None:
        return None
    siblings = [c for c in _body_members(owner) if c.start_byte != n.start_byte]
    others = frozenset(text(c.child_by_field_name("name")) for c in siblings if c.child_by_field_name("name"))
    if g == "python":
        body = n.child_by_field_name("body")
        signature = doc.doc.text[doc.b.char(n.start_byte):doc.b.char(body.start_byte)].rstrip() if body else text(n)
    else:
        signature = re.sub(r"^abstract\s+", "", text(n).rstrip().rstrip(";,").rstrip())
    return Member(text(owner_name), text(name_node), signature, others)


def _up(n, kind: str):
    p = n.parent
    while p is not None and p.type != kind:
        p = p.parent
    return p


def _body_members(owner) -> list:
    body = owner.child_by_field_name("body") or owner.child_by_field_name("type")
    if body is None:
        return []
    out = []
    for c in body.named_children:
        out.append(c.child_by_field_name("definition") if c.type == "decorated_definition" else c)
    return [c for c in out if c is not None]


def _implementations(docs: list[ParsedDoc], member: Member, grammar: str) -> list[Implementation]:
    if grammar == "go":
        return _go_implementations(docs, member)
    out = []
    for d in docs:
        for n in walk(d.tree.root_node):
            body = _implementing_body(d, n, member.owner)
            if body is not None:
                out.append(_after_last(d, body))
    return out


def _implementing_body(d: ParsedDoc, n, owner: str):
    """The body of ``n`` when ``n`` implements ``owner`` (None otherwise)."""
    text = d.b.node_text
    g = d.doc.grammar
    if g == "rust" and n.type == "impl_item":
        trait = n.child_by_field_name("trait")
        if trait is not None and re.split(r"::", text(trait).split("<")[0])[-1] == owner:
            return n.child_by_field_name("body")
    elif g in ("typescript", "tsx") and n.type in ("class_declaration", "class", "abstract_class_declaration"):
        heritage = next((c for c in n.named_children if c.type == "class_heritage"), None)
        names = {text(t).split("<")[0] for c in (heritage.named_children if heritage else [])
                 for t in c.named_children} if heritage else set()
        if owner in names:
            return n.child_by_field_name("body")
    elif g == "python" and n.type == "class_definition":
        bases = n.child_by_field_name("superclasses")
        if bases is not None and owner in {text(b).split("[")[0].split(".")[-1] for b in bases.named_children}:
            return n.child_by_field_name("body")
    return None


def _members_of(d: ParsedDoc, body) -> frozenset[str]:
    names = []
    for c in body.named_children:
        c = c.child_by_field_name("definition") if c.type == "decorated_definition" else c
        name = c.child_by_field_name("name") if c is not None else None
        if name is not None:
            names.append(d.b.node_text(name))
    return frozenset(names)


def _after_last(d: ParsedDoc, body) -> Implementation:
    """Where a member goes in ``body``: after its last member, at its indentation."""
    members = [c for c in body.named_children if c.type not in ("comment", "line_comment", "block_comment")]
    text = d.doc.text
    grammar = d.doc.grammar or ""
    if members:
        last = members[-1]
        at = d.b.char(last.end_byte)
        line_start = text.rfind("\n", 0, d.b.char(last.start_byte)) + 1
        indent = indent_of(text[line_start:])
        return Implementation(d, _members_of(d, body), at, indent)
    at = d.b.char(body.start_byte) + (1 if text[d.b.char(body.start_byte)] == "{" else 0)
    line_start = text.rfind("\n", 0, d.b.char(body.start_byte)) + 1
    return Implementation(d, frozenset(), at, indent_of(text[line_start:]) + INDENT.get(grammar, "    "), empty=True)


def _go_implementations(docs: list[ParsedDoc], member: Member) -> list[Implementation]:
    """Go's structural implementations: receiver types whose methods cover the interface's others."""
    methods: dict[str, list] = {}
    for d in docs:
        for n in d.tree.root_node.named_children:
            if n.type != "method_declaration":
                continue
            rec = n.child_by_field_name("receiver")
            names = [t for t in walk(rec) if t.type == "type_identifier"] if rec is not None else []
            if names:
                methods.setdefault(d.b.node_text(names[0]), []).append((d, n))
    out = []
    for decls in methods.values():
        names = frozenset(d.b.node_text(n.child_by_field_name("name")) for d, n in decls)
        if not member.others or not member.others <= names:
            continue
        d, last = max(((d, n) for d, n in decls), key=lambda x: (x[0].doc.uri, x[1].end_byte))
        if len(member.others) < MIN_GO_METHODS and not word_in(member.owner, d.doc.text):
            continue  # one common method ('Get') in common is no evidence; an assertion or a use is
        receiver = d.b.node_text(last.child_by_field_name("receiver"))
        out.append(Implementation(d, names, d.b.char(last.end_byte), "", receiver))
    return out


def _stub(member: Member, impl: Implementation, grammar: str) -> str:
    """The member's stub as the text inserted at ``impl.at``."""
    step = INDENT[grammar]
    body = STUB_BODY[grammar]
    if grammar == "go":
        return f"\n\nfunc {impl.receiver} {member.signature} {{\n{step}{body}\n}}"
    if grammar == "python":
        return f"\n\n{impl.indent}{member.signature}\n{impl.indent}{step}{body}"
    stub = f"{impl.indent}{member.signature} {{\n{impl.indent}{step}{body}\n{impl.indent}}}"
    if impl.empty:  # '{}' -> '{\n    stub\n}'
        return f"\n{stub}\n{impl.indent[:-len(step)] if impl.indent.endswith(step) else ''}"
    return f"\n\n{stub}"


RULE = Rule("NE112", "implemented-member", "signature", IMPLEMENTED_MEMBER.value, run, __doc__)
