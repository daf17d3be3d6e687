"""``didOpen``, ``didChange`` (incremental) and ``didClose``: the server's ``DocumentStore``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

if TYPE_CHECKING:
    from mercury_lsp.server.app import MercuryServer


def register(server: MercuryServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MercuryServer, params: lsp.DidOpenTextDocumentParams) -> None:
        d = params.text_document
        ls.docs.open(d.uri, d.language_id, d.version, d.text)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MercuryServer, params: lsp.DidChangeTextDocumentParams) -> None:
        changes = []
        for ch in params.content_changes:
            rng = getattr(ch, "range", None)
            key = None if rng is None else (rng.start.line, rng.start.character, rng.end.line, rng.end.character)
            changes.append((key, ch.text))
        ls.docs.change(params.text_document.uri, params.text_document.version, changes, ls.position_encoding)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MercuryServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.completions.cancel(uri)
        ls.next_edits.cancel(uri)
        ls.docs.close(uri)
