"""JavaScript's and TypeScript's export machinery for a renamed module-level binding
(``exports.reach``; the three grammars import each other).

A specifier starting with a dot resolves against the importer's folder as Node and TypeScript
do (the exact file, then with each extension, then ``index`` with each; ``./m.js`` also names
``m.ts``); a bare one names the package itself when its name is a folder above the importer
(``jotai/vanilla`` from inside ``jotai/``: that folder, its ``src/``, its ``lib/``). Other
packages are not followed.

The documents that *export* the binding under its name start with its own — when it exports it
as ``old`` there: ``export function old``, ``export { old }``, ``module.exports = { old }``,
``exports.old = ...`` — and grow to a fixed point: ``export { old } from './m'``, ``export * from
'./m'`` (an ``index.ts``), or ``old`` imported from such a document and exported again. Then:

* where ``old`` is imported by its name (``import { old }``, ``const { old } = require(...)``) —
  the imported name and the document's uses (identifiers and, in TypeScript, type identifiers;
  a shorthand property ``{ old }`` becomes ``{ old: new }``, and ``{ new }`` in ``module.exports``);
* ``import { old as x }``, ``const { old: x } = require(...)``, ``export { old as x } from`` — the
  imported name alone;
* a namespace (``import * as ns``, ``const ns = require(...)``, a CommonJS module's default
  import) — ``ns.old``; ``require('./m').old``; ``ns["old"]`` is a note;
* the defining document's own ``module.exports = { old }`` / ``{ old: old }`` / ``exports.old``
  spellings (the export follows the binding; its importers follow the export).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from mercury_lsp.next_edit.exports.base import Reach, doc_path, node_text, spelled
from mercury_lsp.next_edit.exports.occurrences import bare_occurrences
from mercury_lsp.next_edit.symbols import captures
from mercury_lsp.next_edit.tree import ParsedDoc, enclosing, field_is
from mercury_lsp.syntax import Grammars

GRAMMARS = ("javascript", "typescript", "tsx")
EXTENSIONS = (".ts", ".tsx", ".d.ts", ".mts", ".cts", ".js", ".mjs", ".cjs", ".jsx")
# TypeScript resolves an import written with the emitted file's extension to its source.
SOURCE_FOR = {".js": (".ts", ".tsx", ".d.ts"), ".mjs": (".mts",), ".cjs": (".cts",), ".jsx": (".tsx",)}
INDEX = "index"
PACKAGE_SOURCE_DIRS = ("", "src", "lib")  # where a package's own name may point
REQUIRE = "require"
STAR_EXPORT = "export *"
# Definitions whose name a renamed binding may be, and where: at the top of the module, or in an
# ``export`` statement there.
DEFINITIONS = ("function_declaration", "generator_function_declaration", "class_declaration",
               "abstract_class_declaration", "interface_declaration", "type_alias_declaration",
               "enum_declaration", "variable_declarator")
TOP_LEVEL = ("program", "export_statement", "lexical_declaration", "variable_declaration")
NAMES = ("identifier", "type_identifier")
SHORTHAND = "shorthand_property_identifier"
PATTERN = "shorthand_property_identifier_pattern"


def handles(grammar: str | None) -> bool:
    return grammar in GRAMMARS


def defines(node) -> bool:
    parent = node.parent
    if parent is None or parent.type not in DEFINITIONS or not field_is(parent, "name", node):
        return False
    up = parent.parent
    while up is not None and up.type in TOP_LEVEL[1:]:
        up = up.parent
    return up is not None and up.type == "program"


def _normal(path: str) -> PurePosixPath:
    return PurePosixPath(posixpath.normpath(path))


class Files:
    def __init__(self, docs: list[ParsedDoc]) -> None:
        self.by_path = {path: p for p in docs if (path := doc_path(p)) is not None}

    def _file(self, base: PurePosixPath) -> ParsedDoc | None:
        tries = [base, *(base.with_name(base.name + e) for e in EXTENSIONS)]
        tries += [base.with_suffix(e) for e in SOURCE_FOR.get(base.suffix, ())]
        tries += [base / (INDEX + e) for e in EXTENSIONS]
        return next((self.by_path[t] for t in tries if t in self.by_path), None)

    def resolve(self, importer: ParsedDoc, spec: str) -> ParsedDoc | None:
        path = doc_path(importer)
        if path is None or not spec:
            return None
        if spec.startswith("."):
            return self._file(_normal(str(path.parent / spec)))
        elements = spec.split("/")
        size = 2 if spec.startswith("@") else 1
        name, rest = elements[size - 1], "/".join(elements[size:])
        for folder in path.parents:
            if folder.name == name:
                for d in PACKAGE_SOURCE_DIRS:
                    found = self._file(_normal(str(folder / d / rest)) if rest or d else folder / INDEX)
                    if found is not None:
                        return found
                return None
        return None


@dataclass
class Spec:
    """One name a statement spells: ``name [as alias]`` (an object pattern's ``key: value``)."""
    name: str
    node: Any
    alias: Any = None


@dataclass
class ModuleView:
    """What one document imports from others and exports."""
    named: list[tuple[ParsedDoc, Spec]] = field(default_factory=list)  # import { a }, { a } = require()
    binds: list[tuple[ParsedDoc, Any]] = field(default_factory=list)  # a destructured { a } (its node)
    namespaces: dict[str, ParsedDoc] = field(default_factory=dict)  # import * as ns, ns = require()
    reexports: list[tuple[ParsedDoc, Spec]] = field(default_factory=list)  # export { a } from
    stars: list[ParsedDoc] = field(default_factory=list)  # export * from
    members: list[tuple[ParsedDoc, Any]] = field(default_factory=list)  # require('./m').a (the property)
    exported: list[tuple[str, str, Any]] = field(default_factory=list)  # (local, public, node spelling public)
    declared: set[str] = field(default_factory=set)  # names declared in an export statement
    commonjs: bool = False  # has module.exports / exports.x


def _source(doc: ParsedDoc, stmt) -> str | None:
    src = stmt.child_by_field_name("source")
    if src is None:
        return None
    frag = next((c for c in src.named_children if c.type == "string_fragment"), None)
    return node_text(doc, frag) if frag is not None else ""


def _require(doc: ParsedDoc, call) -> str | None:
    """The specifier of ``require('./m')``."""
    if call is None or call.type != "call_expression":
        return None
    fn, args = call.child_by_field_name("function"), call.child_by_field_name("arguments")
    if fn is None or args is None or node_text(doc, fn) != REQUIRE or len(args.named_children) != 1:
        return None
    arg = args.named_children[0]
    frag = next((c for c in arg.named_children if c.type == "string_fragment"), None) if arg.type == "string" else None
    return node_text(doc, frag) if frag is not None else None


def _declared(doc: ParsedDoc, decl) -> set[str]:
    if decl.type in ("lexical_declaration", "variable_declaration"):
        return {node_text(doc, n) for c in decl.named_children if c.type == "variable_declarator"
                and (n := c.child_by_field_name("name")) is not None and n.type == "identifier"}
    name = decl.child_by_field_name("name")
    return {node_text(doc, name)} if name is not None else set()


def read_module(doc: ParsedDoc, files: Files, grammars: Grammars) -> ModuleView:
    view = ModuleView()
    caps = captures(grammars, doc)
    for stmt in caps["import"]:
        src = files.resolve(doc, _source(doc, stmt) or "")
        clause = next((c for c in stmt.named_children if c.type == "import_clause"), None)
        if src is None or clause is None:
            continue
        for c in clause.named_children:
            if c.type == "namespace_import" and c.named_children:
                view.namespaces[node_text(doc, c.named_children[0])] = src
            elif c.type == "identifier" and _commonjs(src, grammars):  # a CommonJS module's object
                view.namespaces[node_text(doc, c)] = src
            elif c.type == "named_imports":
                for s in c.named_children:
                    name = s.child_by_field_name("name")
                    if s.type == "import_specifier" and name is not None:
                        view.named.append((src, Spec(node_text(doc, name), name, s.child_by_field_name("alias"))))
    for stmt in (n for n in doc.tree.root_node.named_children if n.type == "export_statement"):
        spec = _source(doc, stmt)
        decl = stmt.child_by_field_name("declaration")
        if decl is not None:
            view.declared |= _declared(doc, decl)
        clause = next((c for c in stmt.named_children if c.type == "export_clause"), None)
        src = files.resolve(doc, spec) if spec is not None else None
        if spec is not None and clause is None and not any(c.type == "namespace_export" for c in stmt.named_children):
            if src is not None:
                view.stars.append(src)
            continue
        for s in clause.named_children if clause is not None else ():
            name, alias = s.child_by_field_name("name"), s.child_by_field_name("alias")
            if s.type != "export_specifier" or name is None:
                continue
            if spec is not None:
                if src is not None:
                    view.reexports.append((src, Spec(node_text(doc, name), name, alias)))
            else:
                view.exported.append((node_text(doc, name), node_text(doc, alias if alias is not None else name),
                                      alias if alias is not None else name))
    for obj in caps["export.object"]:
        view.commonjs = True
        for c in obj.named_children:
            if c.type == SHORTHAND:
                view.exported.append((node_text(doc, c), node_text(doc, c), c))
            elif c.type == "pair":
                key, value = c.child_by_field_name("key"), c.child_by_field_name("value")
                if key is not None and key.type == "property_identifier" and value is not None:
                    local = node_text(doc, value) if value.type == "identifier" else ""
                    view.exported.append((local, node_text(doc, key), key))
    for prop in caps["export.name"]:
        view.commonjs = True
        assign = enclosing(prop, ("assignment_expression",))
        value = assign.child_by_field_name("right") if assign is not None else None
        local = node_text(doc, value) if value is not None and value.type == "identifier" else ""
        view.exported.append((local, node_text(doc, prop), prop))
    for call in (n.parent for n in spelled(doc, REQUIRE) if n.parent is not None and n.parent.type == "call_expression"):
        spec = _require(doc, call)
        src = files.resolve(doc, spec) if spec is not None else None
        parent = call.parent
        if src is None or parent is None:
            continue
        if parent.type == "member_expression" and field_is(parent, "object", call):
            prop = parent.child_by_field_name("property")
            if prop is not None:
                view.members.append((src, prop))
        elif parent.type == "variable_declarator" and field_is(parent, "value", call):
            target = parent.child_by_field_name("name")
            if target is None:
                continue
            if target.type == "identifier":
                view.namespaces[node_text(doc, target)] = src
            elif target.type == "object_pattern":
                for c in target.named_children:
                    if c.type == PATTERN:
                        view.named.append((src, Spec(node_text(doc, c), c)))
                        view.binds.append((src, c))
                    elif c.type == "pair_pattern":
                        key, value = c.child_by_field_name("key"), c.child_by_field_name("value")
                        if key is not None and key.type == "property_identifier":
                            view.named.append((src, Spec(node_text(doc, key), key, value)))
    return view


def _reexport(n) -> bool:
    stmt = enclosing(n, ("export_statement",))
    return stmt is not None and stmt.child_by_field_name("source") is not None


def _commonjs(doc: ParsedDoc, grammars: Grammars) -> bool:
    caps = captures(grammars, doc)
    return bool(caps["export.object"] or caps["export.name"])


def _unaliased(doc: ParsedDoc, spec: Spec, old: str) -> bool:
    return spec.alias is None or node_text(doc, spec.alias) == old


def reach(docs: list[ParsedDoc], home: ParsedDoc, node, old: str, new: str, grammars: Grammars) -> Reach:
    out = Reach()
    files = Files(docs)
    # the documents that spell the name, or may pass it on unspelled (``export * from``)
    docs = [p for p in docs if old in p.doc.text or STAR_EXPORT in p.doc.text]
    views = {p.doc.uri: read_module(p, files, grammars) for p in docs}
    uri = home.doc.uri
    home_view = views[uri]
    exporting: set[str] = set()
    if enclosing(node, ("export_statement",)) is not None or any(
            local == old and public == old for local, public, _ in home_view.exported):
        exporting.add(uri)

    def imports_it(p: ParsedDoc) -> bool:
        return any(src.doc.uri in exporting and spec.name == old and _unaliased(p, spec, old)
                   for src, spec in views[p.doc.uri].named)

    grew = bool(exporting)
    while grew:
        grew = False
        for p in docs:
            v = views[p.doc.uri]
            if p.doc.uri in exporting:
                continue
            if any(s.doc.uri in exporting for s in v.stars) or any(
                    src.doc.uri in exporting and spec.name == old and _unaliased(p, spec, old)
                    for src, spec in v.reexports) or (
                    imports_it(p) and any(local == old and public == old for local, public, _ in v.exported)):
                exporting.add(p.doc.uri)
                grew = True
    for p in docs:
        v = views[p.doc.uri]
        binds = p is home
        for src, spec in v.named + v.reexports:
            if src.doc.uri in exporting and spec.name == old:
                out.site(p, spec.node, "imported by name")
                if _unaliased(p, spec, old) and (src, spec) in v.named:
                    binds = True
                elif spec.alias is not None:
                    out.binds(p, node_text(p, spec.alias))
        for src, prop in v.members:
            if src.doc.uri in exporting and node_text(p, prop) == old:
                out.site(p, prop, "a member of the module it requires")
        if p is home or p.doc.uri in exporting:
            for local, public, spelling in v.exported:
                if local == old and public == old and spelling.type not in (*NAMES, SHORTHAND):
                    out.site(p, spelling, "exported under its name")
        if binds:
            out.binds(p, new)
            destructured = {(b.start_byte, b.end_byte) for _, b in v.binds}
            exported = {(n.start_byte, n.end_byte) for _, _, n in v.exported}
            def other_binding(n, destructured=destructured) -> bool:
                """A pattern not from the import, or a name in an import or re-export statement
                (those that are the binding's were read above)."""
                return (n.type == PATTERN and (n.start_byte, n.end_byte) not in destructured) \
                    or enclosing(n, ("import_statement",)) is not None or _reexport(n)

            for n in bare_occurrences(p, old, (*NAMES, SHORTHAND, PATTERN), other_binding):
                shorthand = n.type == SHORTHAND and (n.start_byte, n.end_byte) not in exported
                out.site(p, n, "its module" if p is home else "a use of the binding it imports",
                         "{old}: {new}" if shorthand else "{new}")
        for name, src in v.namespaces.items():
            if src.doc.uri not in exporting:
                continue
            for at in spelled(p, old):
                n = at.parent
                if at.type == "property_identifier" and n is not None and n.type == "member_expression":
                    obj = n.child_by_field_name("object")
                    if obj is not None and node_text(p, obj) == name:
                        out.site(p, at, f"'{name}.{old}' of the module it imports")
                elif at.type == "string_fragment" and n is not None and n.parent is not None \
                        and n.parent.type == "subscript_expression" and node_text(p, at) == old:
                    obj = n.parent.child_by_field_name("object")
                    if obj is not None and node_text(p, obj) == name:
                        out.note(p, at, f"'{name}[\"{old}\"]' names '{old}' (renamed to '{new}') in a string: "
                                        "not renamed")
    return out
