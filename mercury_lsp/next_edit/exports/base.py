"""What ``exports`` returns: the sites a rename reaches (``Site``), with the notes and the names
the definition is bound to in each document (``Reach``), and the helpers the families share."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from mercury_lsp.next_edit.query import Note
from mercury_lsp.next_edit.tree import ParsedDoc

NEW_NAME = "{new}"  # a site's replacement: the new name itself


@dataclass(frozen=True)
class Site:
    """One more place a rename reaches: ``node`` (whose text is the old name) of ``doc`` becomes
    ``template`` with ``{old}`` and ``{new}`` filled in (``old: {new}`` keeps a JavaScript
    object's key where a shorthand property stood for the renamed binding)."""
    doc: ParsedDoc
    node: Any
    why: str
    template: str = NEW_NAME

    def text(self, old: str, new: str) -> str:
        return self.template.format(old=old, new=new)


@dataclass
class Reach:
    """The export machinery's sites of one rename, the notes where only a string names it, and
    the names the definition is bound to in each document that imports it (by URI: a call of an
    alias is a call of the definition)."""
    sites: list[Site] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    bound: dict[str, set[str]] = field(default_factory=dict)

    def site(self, doc: ParsedDoc, node, why: str, template: str = NEW_NAME) -> None:
        self.sites.append(Site(doc, node, why, template))

    def note(self, doc: ParsedDoc, node, message: str) -> None:
        self.notes.append(Note(doc.doc.uri, doc.b.char(node.start_byte), doc.b.char(node.end_byte), message))

    def binds(self, doc: ParsedDoc, name: str) -> None:
        self.bound.setdefault(doc.doc.uri, set()).add(name)


def doc_path(doc: ParsedDoc) -> PurePosixPath | None:
    """The document's path, for a ``file:`` URI (others name no module)."""
    parsed = urlparse(doc.doc.uri)
    return PurePosixPath(unquote(parsed.path)) if parsed.scheme == "file" else None


def node_text(doc: ParsedDoc, node) -> str:
    return doc.b.node_text(node)


def spelled(doc: ParsedDoc, name: str) -> list:
    """The smallest node at each place ``name`` stands as a whole word in ``doc`` (an identifier,
    a string's content, a keyword): found from the text, so that a document is not walked node by
    node for a name it mentions a few times."""
    word = re.compile(rb"(?<![\w$])" + re.escape(name.encode("utf-8")) + rb"(?![\w$])")
    root = doc.tree.root_node
    return [n for m in word.finditer(doc.b.data) if (n := root.descendant_for_byte_range(m.start(), m.end())) is not None]
