"""Rust's export machinery for a renamed module-level item (``exports.reach``).

A file's module comes from its path under the package's ``src/`` (``src/lib.rs`` and
``src/main.rs`` are the crate root, ``src/a/mod.rs`` and ``src/a.rs`` are ``a``, ``src/a/b.rs`` is
``a::b``); the files under ``tests/``, ``benches/``, ``examples/`` and ``src/bin/`` are crates of
their own that name the library by the package's folder name (``-`` read as ``_``, as Cargo does).
A path resolves through ``crate::``, ``self::``, ``super::``, the crate's own name, a module the
file's ``use`` brought in (``use crate::adaptors; adaptors::f()``), a child module, or a
top-level one (2015 paths).

The modules that *expose* the item start with its own and grow to a fixed point: a module
exposes it when a ``use`` brings it in under its own name (``pub use crate::m::old``,
``use super::m::{old, Other}``) or a public glob brings in a module that does. Then, in every
file: the ``use`` tree's names that resolve to such a module (an alias's ``as x`` stays); where
a file binds the name that way, its bare uses (identifiers and type identifiers: ``Old::new()``,
``Old { .. }``, ``-> Old``); and anywhere, a path ``m::old(...)`` / ``crate::m::Old`` through such
a module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mercury_lsp.next_edit.exports.base import Reach, doc_path, node_text
from mercury_lsp.next_edit.exports.occurrences import bare_occurrences
from mercury_lsp.next_edit.symbols import captures
from mercury_lsp.next_edit.tree import ParsedDoc, enclosing, field_is, walk
from mercury_lsp.syntax import Grammars

SOURCE_DIR = "src"
ROOT_FILES = ("lib", "main")  # a crate root's file stems
MODULE_FILE = "mod"  # a folder's module
OWN_CRATE_DIRS = ("tests", "benches", "examples")  # each file there is a crate of its own
BIN_DIR = "bin"  # src/bin/*.rs: binaries, crates of their own
# The items a renamed name can define (their ``name`` field), and where they must stand: not in
# a function, an impl, a trait or an inline module (another path).
ITEMS = ("function_item", "struct_item", "enum_item", "trait_item", "type_item", "union_item",
         "const_item", "static_item", "macro_definition")
NOT_MODULE_LEVEL = ("function_item", "impl_item", "trait_item", "mod_item", "closure_expression")
NAMES = ("identifier", "type_identifier")  # how an item's name is spelled at its uses
PATHS = ("scoped_identifier", "scoped_type_identifier")
PATH_STARTS = ("crate", "self", "super")

Parts = tuple[str, ...]


def handles(grammar: str | None) -> bool:
    return grammar == "rust"


def defines(node) -> bool:
    parent = node.parent
    return parent is not None and parent.type in ITEMS and field_is(parent, "name", node) \
        and enclosing(parent, NOT_MODULE_LEVEL) is None


@dataclass(frozen=True)
class Module:
    """Where a file sits: its package's folder, whether it belongs to the package's library
    crate, and its module path there."""
    package: tuple[str, ...]
    library: bool
    path: Parts

    @property
    def crate_name(self) -> str:
        return self.package[-1].replace("-", "_") if self.package else ""


def module_of(doc: ParsedDoc) -> Module | None:
    path = doc_path(doc)
    if path is None or path.suffix != ".rs":
        return None
    parts = path.parts[1:]
    if SOURCE_DIR in parts[:-1]:
        i = len(parts) - 1 - parts[::-1].index(SOURCE_DIR)
        package, rel = parts[:i], parts[i + 1:]
        if rel[0] == BIN_DIR and len(rel) > 1:
            return Module(package, False, ())
    else:
        own = [i for i, p in enumerate(parts[:-1]) if p in OWN_CRATE_DIRS]
        if own:
            return Module(parts[:own[-1]], False, ())
        package, rel = parts[:-1], parts[-1:]
    stem = rel[-1][: -len(".rs")]
    if len(rel) == 1 and stem in ROOT_FILES:
        return Module(package, True, ())
    return Module(package, True, rel[:-1] if stem == MODULE_FILE else (*rel[:-1], stem))


def _segments(doc: ParsedDoc, node) -> Parts | None:
    """``a::b::c`` as its names (None for a generic or bracketed path)."""
    if node.type in ("identifier", *PATH_STARTS, "metavariable"):
        return (node_text(doc, node),)
    if node.type in PATHS:
        path, name = node.child_by_field_name("path"), node.child_by_field_name("name")
        head = _segments(doc, path) if path is not None else ()
        return None if head is None or name is None else (*head, node_text(doc, name))
    return None


@dataclass
class Leaf:
    """One name a ``use`` tree brings in: ``prefix::name [as alias]``, or ``prefix::*``."""
    prefix: Parts
    name: str
    node: Any  # the name's node (None for a glob and for ``self``)
    alias: Any
    glob: bool
    public: bool


def _leaves(doc: ParsedDoc, n, prefix: Parts, public: bool, out: list[Leaf], alias=None) -> None:
    t = n.type
    if t == "self" and prefix:  # ``a::{self}``: the module ``a`` itself
        out.append(Leaf(prefix[:-1], prefix[-1], None, alias, False, public))
    elif t in ("identifier", *PATH_STARTS, "metavariable"):
        out.append(Leaf(prefix, node_text(doc, n), n, alias, False, public))
    elif t in PATHS:
        path, name = n.child_by_field_name("path"), n.child_by_field_name("name")
        head = _segments(doc, path) if path is not None else ()
        if head is not None and name is not None:
            out.append(Leaf((*prefix, *head), node_text(doc, name), name, alias, False, public))
    elif t == "use_as_clause":
        inner = n.child_by_field_name("path")
        if inner is not None:
            _leaves(doc, inner, prefix, public, out, n.child_by_field_name("alias"))
    elif t == "scoped_use_list":
        path, items = n.child_by_field_name("path"), n.child_by_field_name("list")
        head = _segments(doc, path) if path is not None else ()
        if head is not None and items is not None:
            for c in items.named_children:
                _leaves(doc, c, (*prefix, *head), public, out)
    elif t == "use_list":
        for c in n.named_children:
            _leaves(doc, c, prefix, public, out)
    elif t == "use_wildcard":
        inner = next(iter(n.named_children), None)
        head = _segments(doc, inner) if inner is not None else ()
        if head is not None:
            out.append(Leaf((*prefix, *head), "*", None, None, True, public))


def use_leaves(doc: ParsedDoc, grammars: Grammars) -> list[Leaf]:
    out: list[Leaf] = []
    for decl in captures(grammars, doc)["import"]:
        if decl.type != "use_declaration" or enclosing(decl, NOT_MODULE_LEVEL) is not None:
            continue
        arg = decl.child_by_field_name("argument")
        if arg is not None:
            _leaves(doc, arg, (), any(c.type == "visibility_modifier" for c in decl.children), out)
    return out


@dataclass
class Crate:
    """The library crate's modules (with every module above one), for resolving paths."""
    package: tuple[str, ...]
    modules: set[Parts] = field(default_factory=set)

    def resolve(self, at: Module, path: Parts, bound: dict[str, Parts]) -> Parts | None:
        """The library module ``path`` names from a file at ``at`` (None: another crate's)."""
        if not path or at.package != self.package:
            return None
        first, rest = path[0], path[1:]
        if first == "crate" and at.library:
            base: Parts = ()
        elif first == "self" and at.library:
            base = at.path
        elif first == "super" and at.library:
            base = at.path
            while path and path[0] == "super":
                base, path = base[:-1], path[1:]
            return (*base, *path)
        elif first == at.crate_name or first == "$crate":
            base = ()
        elif first in bound:
            base = bound[first]
        elif at.library and (*at.path, first) in self.modules:
            base, rest = (*at.path, first), path[1:]
        elif at.library and (first,) in self.modules:
            base, rest = (first,), path[1:]
        else:
            return None
        return (*base, *rest)


def reach(docs: list[ParsedDoc], home: ParsedDoc, node, old: str, new: str, grammars: Grammars) -> Reach:
    out = Reach()
    where = module_of(home)
    if where is None or not where.library:
        return out
    files = [(p, m) for p in docs if (m := module_of(p)) is not None and m.package == where.package]
    crate = Crate(where.package)
    for _, m in files:
        if m.library:
            crate.modules.update(m.path[:k] for k in range(len(m.path) + 1))
    leaves = {p.doc.uri: use_leaves(p, grammars) for p, _ in files}
    bound: dict[str, dict[str, Parts]] = {}  # per file: names its ``use`` binds to a module
    for p, m in files:
        names = bound.setdefault(p.doc.uri, {})
        for leaf in leaves[p.doc.uri]:
            target = crate.resolve(m, (*leaf.prefix, leaf.name), names) if not leaf.glob else None
            if target is not None and target in crate.modules:
                names[node_text(p, leaf.alias) if leaf.alias is not None else leaf.name] = target
    exposing: set[Parts] = {where.path}

    def brings(p: ParsedDoc, m: Module, leaf: Leaf) -> bool:
        """The leaf brings the item in under its own name."""
        target = crate.resolve(m, leaf.prefix, bound[p.doc.uri])
        if target not in exposing:
            return False
        return leaf.glob or (leaf.name == old and (leaf.alias is None or node_text(p, leaf.alias) == old))

    grew = True
    while grew:
        grew = False
        for p, m in files:
            if m.library and m.path not in exposing and any(
                    brings(p, m, leaf) and (leaf.public or not leaf.glob) for leaf in leaves[p.doc.uri]):
                exposing.add(m.path)
                grew = True
    for p, m in files:
        names = bound[p.doc.uri]
        binds = p is home
        for leaf in leaves[p.doc.uri]:
            if crate.resolve(m, leaf.prefix, names) not in exposing:
                continue
            if leaf.glob:
                binds = True
            elif leaf.name == old and leaf.node is not None:
                out.site(p, leaf.node, "brought in by a use")
                if leaf.alias is None or node_text(p, leaf.alias) == old:
                    binds = True
                else:
                    out.binds(p, node_text(p, leaf.alias))
        if binds:
            out.binds(p, new)
            for n in bare_occurrences(p, old, NAMES, lambda n: _qualified(n) or enclosing(n, ("use_declaration",))
                                      is not None):
                out.site(p, n, "its module" if p is home else "a use of the item it brings in")
        for n in walk(p.tree.root_node):
            if n.type not in PATHS or enclosing(n, ("use_declaration",)) is not None:
                continue
            name, path = n.child_by_field_name("name"), n.child_by_field_name("path")
            if name is None or path is None or node_text(p, name) != old:
                continue
            segs = _segments(p, path)
            if segs is not None and crate.resolve(m, segs, names) in exposing:
                out.site(p, name, f"the path {'::'.join(segs)}::{old}")
    return out


def _qualified(n) -> bool:
    """``n`` is the last name of a path with a prefix (``m::old``: resolved apart)."""
    parent = n.parent
    return parent is not None and parent.type in PATHS and field_is(parent, "name", n) \
        and parent.child_by_field_name("path") is not None
