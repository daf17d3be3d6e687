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

from mercury_lsp.next_edit.exports.base import Reach, doc_path, node_text, spelled
from mercury_lsp.next_edit.exports.occurrences import bare_occurrences
from mercury_lsp.next_edit.symbols import captures
from mercury_lsp.next_edit.tree import ParsedDoc, enclosing, field_is
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
NOT_MODULE_LEVEL = ("function_item", "impl_item", "trait_item", "closure_expression")
NAMES = ("identifier", "type_identifier")  # how an item's name is spelled at its uses
PATHS = ("scoped_identifier", "scoped_type_identifier")
PATH_STARTS = ("crate", "self", "super")
GLOB = "::*"

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


def inline_path(doc: ParsedDoc, node) -> Parts:
    """The inline modules (``mod structs { ... }``) around ``node``, outermost first."""
    out: list[str] = []
    up = node.parent
    while up is not None:
        if up.type == "mod_item" and up.child_by_field_name("body") is not None:
            name = up.child_by_field_name("name")
            out.insert(0, node_text(doc, name) if name is not None else "")
        up = up.parent
    return tuple(out)


def _inline_body(node):
    """The body of the innermost inline module around ``node`` (None: the file's top level)."""
    up = node.parent
    while up is not None and not (up.type == "mod_item" and up.child_by_field_name("body") is not None):
        up = up.parent
    return None if up is None else up.child_by_field_name("body")


@dataclass
class Leaf:
    """One name a ``use`` tree brings in: ``prefix::name [as alias]``, or ``prefix::*``; ``at``:
    the module the ``use`` stands in, ``scope`` the inline module body it binds in (None: the
    file)."""
    prefix: Parts
    name: str
    node: Any  # the name's node (None for a glob and for ``self``)
    alias: Any
    glob: bool
    public: bool
    at: Parts = ()
    scope: Any = None


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


def use_leaves(doc: ParsedDoc, module: Parts, grammars: Grammars) -> list[Leaf]:
    """The names the file's module-level ``use`` declarations bring in (``module``: the file's)."""
    out: list[Leaf] = []
    for decl in captures(grammars, doc)["import"]:
        if decl.type != "use_declaration" or enclosing(decl, NOT_MODULE_LEVEL) is not None:
            continue
        arg = decl.child_by_field_name("argument")
        if arg is None:
            continue
        mine: list[Leaf] = []
        _leaves(doc, arg, (), any(c.type == "visibility_modifier" for c in decl.children), mine)
        at, scope = (*module, *inline_path(doc, decl)), _inline_body(decl)
        for leaf in mine:
            leaf.at, leaf.scope = at, scope
        out += mine
    return out


def _inline_modules(doc: ParsedDoc, module: Parts) -> set[Parts]:
    mods = [k.parent for k in spelled(doc, "mod") if k.parent is not None and k.parent.type == "mod_item"]
    return {(*module, *inline_path(doc, n), node_text(doc, name)) for n in mods
            if n.child_by_field_name("body") is not None and (name := n.child_by_field_name("name")) is not None}


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
    # the package's files that spell the name, or may pass it on unspelled (a glob)
    files = [(p, m) for p in docs if (m := module_of(p)) is not None and m.package == where.package
             and (old in p.doc.text or GLOB in p.doc.text or m.library and "mod " in p.doc.text)]
    crate = Crate(where.package)
    for p, m in files:
        if m.library:
            crate.modules.update(m.path[:k] for k in range(len(m.path) + 1))
            crate.modules |= _inline_modules(p, m.path)
    leaves = {p.doc.uri: use_leaves(p, m.path, grammars) for p, m in files}
    bound: dict[str, dict[str, Parts]] = {}  # per file: names its ``use`` binds to a module

    def at(m: Module, module: Parts) -> Module:
        return Module(m.package, m.library, module)

    for p, m in files:
        names = bound.setdefault(p.doc.uri, {})
        for leaf in leaves[p.doc.uri]:
            target = crate.resolve(at(m, leaf.at), (*leaf.prefix, leaf.name), names) if not leaf.glob else None
            if target is not None and target in crate.modules:
                names[node_text(p, leaf.alias) if leaf.alias is not None else leaf.name] = target
    exposing: set[Parts] = {(*where.path, *inline_path(home, node))}

    def reaches(p: ParsedDoc, m: Module, leaf: Leaf) -> bool:
        return crate.resolve(at(m, leaf.at), leaf.prefix, bound[p.doc.uri]) in exposing

    def brings(p: ParsedDoc, leaf: Leaf) -> bool:
        """The leaf brings the item in under its own name."""
        return leaf.glob or (leaf.name == old and (leaf.alias is None or node_text(p, leaf.alias) == old))

    grew = True
    while grew:  # the modules that re-export it, to a fixed point
        grew = False
        for p, m in files:
            for leaf in leaves[p.doc.uri] if m.library else ():
                if leaf.at not in exposing and (leaf.public or not leaf.glob) and brings(p, leaf) \
                        and reaches(p, m, leaf):
                    exposing.add(leaf.at)
                    grew = True
    for p, m in files:
        names = bound[p.doc.uri]
        scopes = [(0, len(p.b.data))] if p is home else []  # where the file binds the item's name
        for leaf in leaves[p.doc.uri]:
            if not reaches(p, m, leaf):
                continue
            if leaf.name == old and leaf.node is not None:
                out.site(p, leaf.node, "brought in by a use")
                if leaf.alias is not None and node_text(p, leaf.alias) != old:
                    out.binds(p, node_text(p, leaf.alias))
            if brings(p, leaf):
                scopes.append((0, len(p.b.data)) if leaf.scope is None else (leaf.scope.start_byte, leaf.scope.end_byte))
        if scopes:
            out.binds(p, new)

            def elsewhere(n, scopes=scopes) -> bool:
                """Not a bare use of the item here: a path's last name, a use, outside its scopes."""
                return _qualified(n) or enclosing(n, ("use_declaration",)) is not None or not any(
                    lo <= n.start_byte < hi for lo, hi in scopes)

            for n in bare_occurrences(p, old, NAMES, elsewhere):
                out.site(p, n, "its module" if p is home else "a use of the item it brings in")
        for name in spelled(p, old):
            n = name.parent
            if n is None or n.type not in PATHS or not field_is(n, "name", name) \
                    or enclosing(n, ("use_declaration",)) is not None:
                continue
            path = n.child_by_field_name("path")
            if path is None:
                continue
            segs = _segments(p, path)
            if segs is not None and crate.resolve(at(m, (*m.path, *inline_path(p, n))), segs, names) in exposing:
                out.site(p, name, f"the path {'::'.join(segs)}::{old}")
    return out


def _qualified(n) -> bool:
    """``n`` is the last name of a path with a prefix (``m::old``: resolved apart)."""
    parent = n.parent
    return parent is not None and parent.type in PATHS and field_is(parent, "name", n) \
        and parent.child_by_field_name("path") is not None
