"""``didOpen``, ``didChange`` (incremental, all or nothing: ``sync``) and ``didClose``: the server's
``DocumentStore``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from mercury_lsp.server.handlers.sync import apply_change
from mercury_lsp.text import PositionError


def prefetch_after(ls: MercuryServer, uri: str, change: tuple[tuple[int, int, int, int], str]) -> None:
    """Start the completion for where the edit leaves the cursor: the end of the inserted text."""
    doc = ls.docs.get(uri)
    if doc is None:
        return
    try:
        start = doc.offset_at(change[0][0], change[0][1], ls.position_encoding, strict=True)
    except PositionError:
        return
    ls.spawn(ls.completions.prefetch(uri, start + len(change[1])))


if TYPE_CHECKING:
    from mercury_lsp.server.app import MercuryServer


def did_open(ls: MercuryServer, params: lsp.DidOpenTextDocumentParams) -> None:
    d = params.text_document
    ls.docs.open(d.uri, d.language_id, d.version, d.text)


def did_change(ls: MercuryServer, params: lsp.DidChangeTextDocumentParams) -> None:
    changes = []
    for ch in params.content_changes:
        rng = getattr(ch, "range", None)
        key = None if rng is None else (rng.start.line, rng.start.character, rng.end.line, rng.end.character)
        changes.append((key, ch.text))
    apply_change(ls, params.text_document.uri, params.text_document.version, changes,
                 ls.position_encoding)
    if ls.current.prefetch and changes and changes[-1][0] is not None:
        prefetch_after(ls, params.text_document.uri, changes[-1])


def did_close(ls: MercuryServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.completions.cancel(uri)
    ls.next_edits.cancel(uri)
    ls.docs.close(uri)
