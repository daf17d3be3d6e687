"""Import statements read as lists of names (shared by the import rules, ``rules.imports``).

A document's *module key* is the name other documents import its definitions by: its file name,
or its folder's for a file that stands for its folder (``PACKAGE_STEMS``). A statement *names* a
module when the key is one of its words (``use internal::{a, b};``, ``from pkg.internal import a``,
``import {a} from './internal'``). Its *names* are its words outside quotes that the document's
code uses, never a keyword of the grammar (its anonymous node types). A name *joins* a statement
before its first name, or at its place when the names are sorted; the syntax guard drops a join
the statement's form does not allow (``use internal::A;``).

Names are identifier tokens outside the import statements (``code_words``). An import's *own*
name is its last identifier outside quotes (``from x import name``, ``use a::name;``), or inside
them for a path (Go's ``"net/http"`` brings ``http``). ``edited_imports`` reads the newest edited
document's imports before and after its newest edit.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import unquote, urlparse

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.symbols import captures, parsed_before
from mercury_lsp.next_edit.text import QUOTED, is_identifier
from mercury_lsp.next_edit.tree import ParsedDoc
from mercury_lsp.syntax import Grammars

WORD = re.compile(r"[A-Za-z_$][\w$]*")
# Files that stand for their folder: Rust's mod.rs, Python's __init__.py, JavaScript's index.js.
PACKAGE_STEMS = ("mod", "__init__", "index")


def module_key(uri: str) -> str:
    """The name other documents import ``uri``'s definitions by (its file name, or its folder's)."""
    path = PurePosixPath(unquote(urlparse(uri).path))
    return path.parent.name if path.stem in PACKAGE_STEMS else path.stem


def top_level(doc: ParsedDoc, caps: dict) -> dict[str, str]:
    """Name -> definition text of the definitions on an unindented line (``export function f``)."""
    out: dict[str, str] = {}
    for n in caps["definition"]:
        node = n.parent if n.parent is not None else n
        line_start = node.start_byte - node.start_point[1]
        if doc.b.data[line_start:line_start + 1] not in (b" ", b"\t", b""):
            out.setdefault(doc.b.node_text(n), doc.b.node_text(node))
    return out


def statements(doc: ParsedDoc, caps: dict) -> list[tuple[int, int, str]]:
    """(start, end, text) of the document's import statements."""
    return [(doc.b.char(n.start_byte), doc.b.char(n.end_byte), doc.b.node_text(n)) for n in caps["import"]]


def statement_names(statement: str, used: set[str], language) -> list[tuple[int, str]]:
    """(offset, name) of the statement's words outside quotes that the code uses."""
    bare = QUOTED.sub(lambda m: " " * len(m.group()), statement)
    return [(m.start(), m.group()) for m in WORD.finditer(bare) if m.group() in used
            and (language is None or language.id_for_node_kind(m.group(), False) is None)]


def names_module(statement: str, key: str) -> bool:
    return re.search(rf"(?<![\w$]){re.escape(key)}(?![\w$])", statement) is not None


def join(doc: ParsedDoc, stmt: tuple[int, int, str], name: str, used: set[str], language,
         reason: str, confidence: float) -> Prediction | None:
    """``name`` added to the statement's names; None when it has none or already brings it."""
    s, _, text = stmt
    names = statement_names(text, used, language)
    if not names or any(n == name for _, n in names):
        return None
    keys = [n.lower() for _, n in names]
    at = bisect.bisect(keys, name.lower()) if keys == sorted(keys) else 0
    if at == 0:
        pos, new = s + names[0][0], f"{name}, "
    else:
        pos, new = s + names[at - 1][0] + len(names[at - 1][1]), f", {name}"
    return Prediction(doc.doc.uri, pos, pos, new, confidence, reason, "import", "syntax", "")


def code_words(doc: ParsedDoc, nodes) -> set[str]:
    """Identifier-like words of ``doc`` outside ``nodes`` (byte offsets: no character map needed)."""
    data, out, pos = doc.b.data, set(), 0
    for n in sorted(nodes, key=lambda n: n.start_byte) + [None]:
        s = len(data) if n is None else n.start_byte
        out.update(WORD.findall(data[pos:s].decode("utf-8", errors="replace")))
        pos = max(pos, len(data) if n is None else n.end_byte)
    return out


def own_name(statement: str) -> str | None:
    outside = [w for w in WORD.findall(QUOTED.sub(" ", statement)) if is_identifier(w)
               and w not in ("import", "from", "use", "as", "extern", "crate", "pub", "include")]
    if outside:
        return outside[-1]
    inside = WORD.findall(statement)
    return inside[-1] if inside else None


def line_span(text: str, s: int, e: int) -> tuple[int, int] | None:
    """The whole lines of ``text[s:e]`` (with the line break) when nothing else is on them."""
    lo = text.rfind("\n", 0, s) + 1
    hi = text.find("\n", e)
    hi = len(text) if hi < 0 else hi + 1
    if text[lo:s].strip() or text[e:hi].strip(" \t\n;"):
        return None
    return lo, hi


def spans(doc: ParsedDoc, nodes) -> list[tuple[int, int]]:
    return [(doc.b.char(n.start_byte), doc.b.char(n.end_byte)) for n in nodes]


@dataclass(frozen=True)
class EditedImports:
    """The newest edited document's import statements, now and before its newest edit."""
    home: ParsedDoc
    caps: dict  # its captures (``symbols``) now
    imports: list[tuple[int, int]]  # its import statements' spans now
    before: str  # its text before the newest edit
    old: ParsedDoc  # that text parsed


def edited_imports(edited: list[ParsedDoc], grammars: Grammars) -> EditedImports | None:
    """The imports of ``edited[0]`` (the newest edited document) before and after its newest
    edit; None without an edited document, import statements or a parser."""
    if not edited:
        return None
    home = edited[0]
    caps = captures(grammars, home)
    imports = spans(home, caps["import"])
    if not imports:
        return None
    before = home.doc.history[0]
    old = parsed_before(grammars, home.doc, before)
    return None if old is None else EditedImports(home, caps, imports, before, old)
