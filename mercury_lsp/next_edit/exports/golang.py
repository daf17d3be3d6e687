"""Go's export machinery for a renamed package-level name (``exports.reach``).

A package is a folder: the other files of the renamed name's folder with the same ``package``
clause use it bare (identifiers and type identifiers: ``Old(x)``, ``Old{}``, ``var v Old``; not a
struct literal's field key ``T{Old: 1}``, nor another package's ``pkg.Old``). An exported name
(capitalised) is also used by the other packages of the module, package-qualified under the
name their import gives the package (``pkg.Old``, ``alias.Old``, ``pkg.Old`` as a type; a dot
import uses it bare). An import path names the renamed name's folder when the path's last
elements are the folder's last ones and no other folder of the request matches more of them:
one element or more for a path whose first element has a dot (``github.com/...``), two or more
otherwise (``errors`` is the standard library's, not a folder named so). ``reflect`` lookups by
name (``MethodByName("Old")``, ``FieldByName``: ``queries/go.scm``'s ``@note.string``) are notes.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from mercury_lsp.next_edit.exports.base import Reach, doc_path, node_text, spelled
from mercury_lsp.next_edit.exports.occurrences import bare_occurrences
from mercury_lsp.next_edit.symbols import captures
from mercury_lsp.next_edit.tree import ParsedDoc, enclosing, field_is
from mercury_lsp.syntax import Grammars

# Package-level definitions (their ``name`` fields) and what they must not stand in.
DEFINITIONS = ("function_declaration", "type_spec", "type_alias", "const_spec", "var_spec")
NOT_PACKAGE_LEVEL = ("function_declaration", "method_declaration", "func_literal")
NAMES = ("identifier", "type_identifier")
DOT_IMPORT = "."
# Matching elements an import path needs with a folder: a module path's first element has a
# dot (a host); one without is the standard library's unless more of it matches.
HOSTED_MIN_MATCH = 1
UNHOSTED_MIN_MATCH = 2


def handles(grammar: str | None) -> bool:
    return grammar == "go"


def defines(node) -> bool:
    parent = node.parent
    if parent is None or parent.type not in DEFINITIONS:
        return False
    if not any(c.start_byte == node.start_byte for c in parent.children_by_field_name("name")):
        return False
    return enclosing(parent, NOT_PACKAGE_LEVEL) is None


def package_name(doc: ParsedDoc) -> str | None:
    clause = next((c for c in doc.tree.root_node.named_children if c.type == "package_clause"), None)
    name = next((c for c in clause.named_children if c.type == "package_identifier"), None) if clause else None
    return node_text(doc, name) if name is not None else None


def _common_tail(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    k = 0
    while k < min(len(a), len(b)) and a[-1 - k] == b[-1 - k]:
        k += 1
    return k


def names_folder(import_path: str, folder: PurePosixPath, folders: set[PurePosixPath]) -> bool:
    elements = tuple(e for e in import_path.split("/") if e)
    k = _common_tail(elements, folder.parts)
    if not elements or k < (HOSTED_MIN_MATCH if "." in elements[0] else UNHOSTED_MIN_MATCH):
        return False
    return all(_common_tail(elements, f.parts) <= k for f in folders if f != folder)


def _field_key(n) -> bool:
    """A struct literal's field key (``T{Old: 1}``; a map's key is an expression)."""
    element = n.parent
    keyed = element.parent if element is not None else None
    if keyed is None or keyed.type != "keyed_element" or element.type != "literal_element":
        return False
    key = keyed.child_by_field_name("key")
    if key is None or key.start_byte != element.start_byte:
        return False
    literal = enclosing(keyed, ("composite_literal",))
    kind = literal.child_by_field_name("type") if literal is not None else None
    return kind is None or kind.type != "map_type"


def _foreign(n) -> bool:
    """Not the package's own name: another package's qualified type, or a field key."""
    parent = n.parent
    return (parent is not None and parent.type == "qualified_type") or _field_key(n)


def _imports(doc: ParsedDoc, grammars: Grammars) -> list[tuple[str, str | None]]:
    """(path, the name the import gives: an alias, ``.``, ``_``, or None for the package's own)."""
    out = []
    for spec in captures(grammars, doc)["import"]:
        path, name = spec.child_by_field_name("path"), spec.child_by_field_name("name")
        if path is None:
            continue
        out.append((node_text(doc, path).strip('"`'), node_text(doc, name) if name is not None else None))
    return out


def reach(docs: list[ParsedDoc], home: ParsedDoc, node, old: str, new: str, grammars: Grammars) -> Reach:
    out = Reach()
    home_path, package = doc_path(home), package_name(home)
    if home_path is None or package is None:
        return out
    folder = home_path.parent
    folders = {path.parent for p in docs if (path := doc_path(p)) is not None}
    exported = old[:1].isupper()
    for p in docs:
        path = doc_path(p)
        if path is None or old not in p.doc.text:
            continue
        local: str | None = None
        if path.parent == folder and package_name(p) == package:
            local = DOT_IMPORT
        elif exported:
            for import_path, name in _imports(p, grammars):
                if names_folder(import_path, folder, folders):
                    local = name or package
        if local is None or local == "_":
            continue
        if local == DOT_IMPORT:
            why = "its package" if p is home else "another file of its package"
            for n in bare_occurrences(p, old, NAMES, _foreign):
                out.site(p, n, why)
            out.binds(p, new)
        else:
            for name in spelled(p, old):
                n = name.parent
                if n is not None and n.type == "selector_expression" and field_is(n, "field", name):
                    operand = n.child_by_field_name("operand")
                elif n is not None and n.type == "qualified_type" and field_is(n, "name", name):
                    operand = n.child_by_field_name("package")
                else:
                    continue
                if operand is not None and node_text(p, operand) == local:
                    out.site(p, name, f"qualified by its package, '{local}.{old}'")
        for s in captures(grammars, p)["note.string"]:
            content = next(iter(s.named_children), s)
            if node_text(p, content) == old:
                out.note(p, content, f"a reflect lookup names '{old}' (renamed to '{new}') in a string: not renamed")
    return out
