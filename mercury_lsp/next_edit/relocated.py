"""Imports that follow a definition moved to another document.

A top-level definition (the language's query file, ``symbols``: ``@definition`` whose node is on
an unindented line) that an edited document gained since its oldest text in the history is a
definition on the move. Its module is the document's file name (``fshelper`` for
``src/fshelper/mod.rs``: ``PACKAGE_STEMS`` stand for their folder). For every other open document
of the grammar:

* **the old home is left** — another edited document lost the definition, and the document imports
  the name in a statement that names the old home's module: the name leaves that statement (it
  and its comma; the module is renamed instead when the name is all the statement brings:
  ``use internal::is_executable;`` -> ``use fshelper::is_executable;``), and joins a statement that
  names the new home's module, if the document has one;
* **a copy to be replaced** — the document itself defines the name with the very same text (the
  user pasted it into its new home; the old copy goes next, ``line_repeat``): the name joins the
  statement that names the new home's module.

A name joins a list before its first name, or at its place when the list is sorted. The names of
a statement are its words outside quotes that the document's code uses; the grammar's keywords
(its anonymous node types) are never names. Nothing is offered for a language whose imports bring
packages rather than names (Go): its statements list no names.
"""

from __future__ import annotations

import bisect
import re
from pathlib import PurePosixPath
from urllib.parse import unquote, urlparse

from mercury_lsp.next_edit.imports import QUOTED, WORD, code_words
from mercury_lsp.next_edit.query import NextEditQuery, Prediction
from mercury_lsp.next_edit.symbols import captures, parsed_before
from mercury_lsp.next_edit.tree import ParsedDoc, newest_edited
from mercury_lsp.syntax import Grammars

# Files that stand for their folder: Rust's mod.rs, Python's __init__.py, JavaScript's index.js.
PACKAGE_STEMS = ("mod", "__init__", "index")
MAX_EDITED_DOCS = 4  # edited documents read for definitions on the move (the newest edits)
MOVED_CONFIDENCE = 0.5


def module_key(uri: str) -> str:
    """The name other documents import ``uri``'s definitions by (its file name, or its folder's)."""
    path = PurePosixPath(unquote(urlparse(uri).path))
    return path.parent.name if path.stem in PACKAGE_STEMS else path.stem


def _top_level(doc: ParsedDoc, caps: dict) -> dict[str, str]:
    """Name -> definition text of the definitions on an unindented line (``export function f``)."""
    out: dict[str, str] = {}
    for n in caps["definition"]:
        node = n.parent if n.parent is not None else n
        line_start = node.start_byte - node.start_point[1]
        if doc.b.data[line_start:line_start + 1] not in (b" ", b"\t", b""):
            out.setdefault(doc.b.node_text(n), doc.b.node_text(node))
    return out


def _statements(doc: ParsedDoc, caps: dict) -> list[tuple[int, int, str]]:
    return [(doc.b.char(n.start_byte), doc.b.char(n.end_byte), doc.b.node_text(n)) for n in caps["import"]]


def _names(statement: str, used: set[str], language) -> list[tuple[int, str]]:
    """(offset, name) of the statement's words outside quotes that the code uses."""
    bare = QUOTED.sub(lambda m: " " * len(m.group()), statement)
    return [(m.start(), m.group()) for m in WORD.finditer(bare) if m.group() in used
            and (language is None or language.id_for_node_kind(m.group(), False) is None)]


def _names_module(statement: str, key: str) -> bool:
    return re.search(rf"(?<![\w$]){re.escape(key)}(?![\w$])", statement) is not None


def _join(doc: ParsedDoc, stmt: tuple[int, int, str], name: str, used: set[str], language) -> Prediction | None:
    s, _, text = stmt
    names = _names(text, used, language)
    if not names or any(n == name for _, n in names):
        return None
    keys = [n.lower() for _, n in names]
    at = bisect.bisect(keys, name.lower()) if keys == sorted(keys) else 0
    if at == 0:
        pos, new = s + names[0][0], f"{name}, "
    else:
        pos, new = s + names[at - 1][0] + len(names[at - 1][1]), f", {name}"
    return Prediction(doc.doc.uri, pos, pos, new, MOVED_CONFIDENCE,
                      f"'{name}' moved: it is imported from its new home", "import", "syntax", "")


def _leave(doc: ParsedDoc, stmt: tuple[int, int, str], name: str, old_key: str, new_key: str,
           used: set[str], language) -> Prediction | None:
    s, e, text = stmt
    names = [n for _, n in _names(text, used | {name}, language)]
    if names == [name]:  # all it brings: its module changes
        new = re.sub(rf"(?<![\w$]){re.escape(old_key)}(?![\w$])", new_key, text)
        return Prediction(doc.doc.uri, s, e, new, MOVED_CONFIDENCE,
                          f"'{name}' moved to '{new_key}': the import follows", "import", "syntax", text)
    m = re.search(rf"(?<![\w$.:]){re.escape(name)}\s*,\s*|\s*,\s*(?<![\w$.:]){re.escape(name)}(?![\w$.:])", text)
    if m is None:
        return None
    return Prediction(doc.doc.uri, s + m.start(), s + m.end(), "", MOVED_CONFIDENCE,
                      f"'{name}' moved to '{new_key}': it leaves this import", "import", "syntax", m.group())


def relocated_imports(query: NextEditQuery, parsed: list[ParsedDoc], grammars: Grammars) -> list[Prediction]:
    edited = newest_edited(parsed)[:MAX_EDITED_DOCS]
    gained: dict[str, list[tuple[ParsedDoc, str]]] = {}
    lost: dict[str, list[ParsedDoc]] = {}
    for doc in edited:
        old = parsed_before(grammars, doc.doc, doc.doc.history[-1])
        if old is None:
            continue
        now, then = _top_level(doc, captures(grammars, doc)), _top_level(old, captures(grammars, old))
        for name in now.keys() - then.keys():
            gained.setdefault(name, []).append((doc, now[name]))
        for name in then.keys() - now.keys():
            lost.setdefault(name, []).append(doc)
    out: list[Prediction] = []
    for name, homes in sorted(gained.items()):
        if len(homes) != 1:
            continue
        home, definition = homes[0]
        new_key = module_key(home.doc.uri)
        old_keys = {module_key(d.doc.uri) for d in lost.get(name, []) if d.doc.grammar == home.doc.grammar}
        for doc in parsed:
            if doc is home or doc.doc.grammar != home.doc.grammar:
                continue
            caps = captures(grammars, doc)
            stmts = _statements(doc, caps)
            if not stmts:
                continue
            language = grammars.language(doc.doc.grammar)
            used = code_words(doc, caps["import"])
            target = next((st for st in stmts if _names_module(st[2], new_key)), None)
            leaving = next((st for st in stmts for k in old_keys if _names_module(st[2], k)
                            and name in WORD.findall(QUOTED.sub(" ", st[2]))), None)
            if leaving is not None:
                k = next(k for k in old_keys if _names_module(leaving[2], k))
                left = _leave(doc, leaving, name, k, new_key, used, language)
                out += [left] if left is not None else []
                if left is not None and left.end - left.start == len(leaving[2]):
                    continue  # the statement itself now names the new home
            elif _top_level(doc, caps).get(name) != definition:
                continue
            joined = _join(doc, target, name, used, language) if target is not None else None
            out += [joined] if joined is not None else []
    return out
