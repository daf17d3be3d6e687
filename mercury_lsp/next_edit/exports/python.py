"""Python's export machinery for a renamed module-level definition (``exports.reach``).

A module is named by its file's path (``pkg/sub/m.py`` is ``…pkg.sub.m``, ``pkg/__init__.py`` is
``…pkg``). A relative import (``from ..m import old``) names one module exactly; an absolute one
(``from pkg.m import old``) the document whose path ends with it, nearest the importer's own
source root. The modules that *expose* the definition start with its own and grow to a fixed
point: a module exposes it when it imports it from a module that does, under its own name
(``from .m import old``, ``from .m import old as old``) or by ``from .m import *`` when the name
is public there (in its ``__all__``, or not ``_private`` without one).

Then, in every document:

* a module that exposes it — its uses of the name (the scoping of ``locate``), its ``__all__``
  strings (``queries/python.scm``'s ``@export.list``: ``__all__ = [...]``, ``(...)``, ``+=``,
  ``.append``/``.extend``);
* ``from <a module that exposes it> import old as x`` — the imported name alone (``x`` stays);
* ``import pkg.m`` / ``import pkg.m as m`` / ``from pkg import m`` / ``m = importlib.import_module(
  "pkg.m")`` (``pytest.importorskip``: ``@import.dynamic``) — ``pkg.m.old`` / ``m.old``;
* strings: ``getattr``/``hasattr``/``setattr``/``delattr`` with the name (``@note.string``), and a
  dotted path to it (``"pkg.m.old"``, ``"pkg.m:old"``: ``mock.patch``, entry points) — notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from mercury_lsp.next_edit.exports.base import Reach, doc_path, node_text, spelled
from mercury_lsp.next_edit.steps.locate import variable_occurrences
from mercury_lsp.next_edit.symbols import captures
from mercury_lsp.next_edit.tree import ParsedDoc, enclosing, field_is, walk
from mercury_lsp.syntax import Grammars

SUFFIXES = (".py", ".pyi")
PACKAGE_STEM = "__init__"
# Scopes whose statements are not the module's: an ``__all__`` or a definition inside them is
# another namespace's.
NOT_MODULE_LEVEL = ("function_definition", "class_definition", "lambda")
# Nodes an ``__all__`` entry may stand in, below the list the query captured.
LIST_NODES = ("list", "tuple", "set", "argument_list", "expression_list", "parenthesized_expression",
              "binary_operator")
STAR_IMPORT = "import *"
IMPORTS = ("import_statement", "import_from_statement", "future_import_statement")
DOTTED_PATH = re.compile(r"([A-Za-z_][\w.]*)[.:]([A-Za-z_]\w*)")  # "pkg.m.old", "pkg.m:old"

Parts = tuple[str, ...]


def handles(grammar: str | None) -> bool:
    return grammar == "python"


def defines(node) -> bool:
    """``node`` names a module-level function, class or assigned name."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type in ("function_definition", "class_definition") and field_is(parent, "name", node):
        pass
    elif not (parent.type == "assignment" and field_is(parent, "left", node)):
        return False
    return enclosing(parent, NOT_MODULE_LEVEL) is None


def module_parts(doc: ParsedDoc) -> Parts | None:
    path = doc_path(doc)
    if path is None or path.suffix not in SUFFIXES:
        return None
    parts = path.parent.parts[1:]
    return parts if path.stem == PACKAGE_STEM else (*parts, path.stem)


def _package_of(doc: ParsedDoc) -> Parts | None:
    """The package a document's relative imports start from: its folder."""
    path = doc_path(doc)
    return None if path is None else path.parent.parts[1:]


@dataclass
class FromImport:
    """``from <target> import <names>`` (``star``: ``import *``)."""
    target: Parts | None
    names: list[tuple[str, Any, Any]]  # (name, its node, its alias node or None)
    star: bool


@dataclass
class Imports:
    """One document's imports: its ``from`` statements, and the local names that stand for a
    module (``import a.b`` binds ``a``; ``import a.b as m`` and ``from a import b`` bind a
    module's full path)."""
    froms: list[FromImport] = field(default_factory=list)
    modules: dict[str, Parts] = field(default_factory=dict)


class Modules:
    """The Python documents by module path, and how an import statement's module resolves."""

    def __init__(self, docs: list[ParsedDoc]) -> None:
        self.docs = [(p, parts) for p in docs if (parts := module_parts(p)) is not None]
        self.by_parts = {parts: p for p, parts in self.docs}

    def absolute(self, importer: Parts, dotted: Parts) -> Parts | None:
        """The module an absolute import names: a path (of a document, or of a package above
        one) ending with ``dotted``, under the source root nearest the importer (the root that
        shares the longest leading folders with it: ``src/`` beside ``tests/`` included), the
        deepest such root first."""
        n = len(dotted)
        if not n:
            return None
        best: tuple[int, int, Parts] | None = None
        for _, parts in self.docs:
            for k in range(len(parts) - n, -1, -1):
                if parts[k:k + n] == dotted:
                    score = (_common(importer, parts[:k]), k, parts[:k + n])
                    best = score if best is None or score[:2] > best[:2] else best
                    break
        return None if best is None else best[2]

    def resolve(self, doc: ParsedDoc, level: int, dotted: Parts) -> Parts | None:
        base = _package_of(doc)
        if base is None:
            return None
        if not level:
            return self.absolute(base, dotted)
        if level - 1 > len(base):
            return None
        return (*base[: len(base) - (level - 1)], *dotted)

    def is_module(self, parts: Parts) -> bool:
        return parts in self.by_parts or any(p[:len(parts)] == parts and len(p) > len(parts) for _, p in self.docs)


def _common(a: Parts, b: Parts) -> int:
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return k


def _dotted(doc: ParsedDoc, node) -> Parts:
    return tuple(node_text(doc, c) for c in node.named_children if c.type == "identifier")


def read_imports(doc: ParsedDoc, mods: Modules, caps: dict) -> Imports:
    """The document's imports (``caps``: its captures, ``symbols``)."""
    out = Imports()
    for stmt in caps["import"]:
        if stmt.type == "import_statement":
            for item in stmt.children_by_field_name("name"):
                if item.type == "aliased_import":
                    name, alias = item.child_by_field_name("name"), item.child_by_field_name("alias")
                    dotted = _dotted(doc, name) if name is not None else ()
                    target = mods.resolve(doc, 0, dotted)
                    if alias is not None and target is not None:
                        out.modules[node_text(doc, alias)] = target
                elif item.type == "dotted_name":
                    dotted = _dotted(doc, item)
                    target = mods.resolve(doc, 0, dotted[:1])
                    if dotted and target is not None:
                        out.modules[dotted[0]] = target
        elif stmt.type == "import_from_statement":
            module = stmt.child_by_field_name("module_name")
            if module is None:
                continue
            if module.type == "relative_import":
                prefix = next((c for c in module.children if c.type == "import_prefix"), None)
                level = len(node_text(doc, prefix)) if prefix is not None else 0
                inner = next((c for c in module.named_children if c.type == "dotted_name"), None)
                target = mods.resolve(doc, level, _dotted(doc, inner) if inner is not None else ())
            else:
                target = mods.resolve(doc, 0, _dotted(doc, module))
            imp = FromImport(target, [], any(c.type == "wildcard_import" for c in stmt.children))
            for item in stmt.children_by_field_name("name"):
                name = item.child_by_field_name("name") if item.type == "aliased_import" else item
                alias = item.child_by_field_name("alias") if item.type == "aliased_import" else None
                if name is None or name.type != "dotted_name" or len(name.named_children) != 1:
                    continue
                ident = name.named_children[0]
                imp.names.append((node_text(doc, ident), ident, alias))
                if target is not None and mods.is_module((*target, node_text(doc, ident))):
                    out.modules[node_text(doc, alias if alias is not None else ident)] = (*target, node_text(doc, ident))
            out.froms.append(imp)
    for assign in caps["import.dynamic"]:  # ``m = importlib.import_module("a.b")``
        name, call = assign.child_by_field_name("left"), assign.child_by_field_name("right")
        args = call.child_by_field_name("arguments") if call is not None else None
        content = _content(args.named_children[0]) if args is not None and args.named_children else None
        if name is not None and content is not None:
            target = mods.resolve(doc, 0, tuple(node_text(doc, content).split(".")))
            if target is not None:
                out.modules[node_text(doc, name)] = target
    return out


def _module_level(node) -> bool:
    return enclosing(node, NOT_MODULE_LEVEL) is None


def _content(string) -> Any:
    """A plain string's one content node (None for an f-string, a concatenation, an empty one)."""
    parts = [c for c in string.named_children if c.type not in ("string_start", "string_end")]
    return parts[0] if len(parts) == 1 and parts[0].type == "string_content" else None


def all_entries(caps: dict) -> list:
    """The string-content nodes of the module's ``__all__`` (module level only)."""
    out = []
    for lst in caps["export.list"]:
        if not _module_level(lst):
            continue
        for n in walk(lst, prune=lambda x: x.type not in LIST_NODES and x.type != "string"):
            if n.type == "string" and n.parent is not None and n.parent.type in LIST_NODES:
                content = _content(n)
                if content is not None:
                    out.append(content)
    return out


def _has_all(caps: dict) -> bool:
    return any(_module_level(n) for n in caps["export.list"])


def _attribute_chain(doc: ParsedDoc, node) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]`` (None for anything but names joined by dots)."""
    out: list[str] = []
    while node.type == "attribute":
        attr = node.child_by_field_name("attribute")
        if attr is None:
            return None
        out.insert(0, node_text(doc, attr))
        node = node.child_by_field_name("object")
        if node is None:
            return None
    return [node_text(doc, node), *out] if node.type == "identifier" else None


def reach(docs: list[ParsedDoc], home: ParsedDoc, node, old: str, new: str, grammars: Grammars) -> Reach:
    out = Reach()
    mods = Modules(docs)
    home_parts = module_parts(home)
    if home_parts is None:
        return out
    # the documents that can matter: those that spell the name, and those with a star import (a
    # re-export that does not); the others are read for their paths alone
    relevant = [(p, parts) for p, parts in mods.docs if old in p.doc.text or STAR_IMPORT in p.doc.text]
    read: dict[str, dict] = {}

    def caps(p: ParsedDoc) -> dict:  # each document's captures, once (the cache keeps a few)
        if p.doc.uri not in read:
            read[p.doc.uri] = captures(grammars, p)
        return read[p.doc.uri]

    imports = {p.doc.uri: read_imports(p, mods, caps(p)) for p, _ in relevant}
    exposing: set[Parts] = {home_parts}

    def exposes(parts: Parts | None) -> bool:
        """A module that exposes the definition; a package above one that the request has no
        document for is taken to (its star imports would not mention the name)."""
        if parts is None:
            return False
        return parts in exposing or (parts not in mods.by_parts and any(
            e[:len(parts)] == parts and len(e) > len(parts) for e in exposing))

    def public(parts: Parts) -> bool:
        doc = mods.by_parts.get(parts)
        if doc is None or not _has_all(caps(doc)):
            return not old.startswith("_")
        return any(node_text(doc, s) in (old, new) for s in all_entries(caps(doc)))

    grew = True
    while grew:  # the modules that re-export it, to a fixed point
        grew = False
        for p, parts in relevant:
            if parts in exposing:
                continue
            if any(exposes(imp.target) and ((imp.star and public(imp.target)) or any(
                    n == old and (a is None or node_text(p, a) == old) for n, _, a in imp.names))
                   for imp in imports[p.doc.uri].froms):
                exposing.add(parts)
                grew = True
    for p, parts in relevant:
        own = parts in exposing
        where = "its module" if p is home else f"'{'.'.join(parts[-2:])}'"
        for imp in imports[p.doc.uri].froms:
            if not exposes(imp.target):
                continue
            for name, ident, alias in imp.names:
                if name != old:
                    continue
                out.site(p, ident, "imported by name")
                if alias is not None and node_text(p, alias) == old:  # ``old as old``: re-exported
                    out.site(p, alias, "imported under its name")
                if alias is None or node_text(p, alias) == old:
                    out.binds(p, new)
                else:
                    out.binds(p, node_text(p, alias))
        if own and p is not home:  # its uses (its imports' names were read above)
            for n in variable_occurrences(p.tree.root_node, old, p.b):
                if enclosing(n, IMPORTS) is None:
                    out.site(p, n, f"re-exported by {where}")
        if own:
            for s in all_entries(caps(p)):
                if node_text(p, s) == old:
                    out.site(p, s, f"listed in the __all__ of {where}")
        aliases = imports[p.doc.uri].modules
        reached = own or any(exposes(t) for t in aliases.values()) or any(
            exposes(imp.target) for imp in imports[p.doc.uri].froms)
        places = spelled(p, old)
        for attr in places:
            n = attr.parent
            if attr.type != "identifier" or n is None or n.type != "attribute" or not field_is(n, "attribute", attr):
                continue
            chain = _attribute_chain(p, n.child_by_field_name("object"))
            if chain and chain[0] in aliases and exposes((*aliases[chain[0]], *chain[1:])):
                out.site(p, attr, f"'{'.'.join(chain)}.{old}'")
        if reached:
            for s in caps(p)["note.string"]:
                content = _content(s)
                if content is not None and node_text(p, content) == old:
                    out.note(p, content, f"a string names '{old}' (renamed to '{new}'): "
                                         "the attribute it looks up is not renamed")
        for content in (n for n in places if n.type == "string_content"):
            m = DOTTED_PATH.fullmatch(node_text(p, content))
            if m is None or m.group(2) != old:
                continue
            path = tuple(m.group(1).split("."))
            target = mods.absolute(_package_of(p) or (), path)
            if target is not None and exposes(target):
                out.note(p, content, f"a string names '{m.group(1)}.{old}' (renamed to '{new}'): "
                                     "not renamed in strings")
    return out
