"""Text synchronisation that cannot diverge silently (a handler family of the server).

* ``apply_change``: a didChange is applied whole or not at all (``edits``); a refused one marks
  the document out of sync, and the client is told once (``window/logMessage``). Features treat
  an out-of-sync document as not open until the editor sends its whole text again.
* ``unreadable_notification``: a didOpen/didChange that the LSP types refuse (a version past
  2^31, a negative position) is read again with plain Structs and handled the same way, so it
  is neither dropped silently nor half-applied.
* ``mercury/documentState``: version, sync state, length and hash of a document, so that a
  client can check it agrees with the server.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import msgspec
from lsprotocol import types as lsp

from mercury_lsp.documents import PositionEncoding, utf16_len
from mercury_lsp.edits import EditRejected
from mercury_lsp.schema import DocumentState, DocumentStateParams
from mercury_lsp.server.handlers.next_edit import params_as
from mercury_lsp.server.jsonrpc import unencodable

log = logging.getLogger(__name__)


class _Position(msgspec.Struct):
    line: int
    character: int


class _Range(msgspec.Struct):
    start: _Position
    end: _Position


class _Change(msgspec.Struct):
    text: str
    range: _Range | None = None


class _Versioned(msgspec.Struct):
    uri: str
    version: int


class _DidChange(msgspec.Struct, rename="camel"):
    text_document: _Versioned
    content_changes: list[_Change]


class _Item(msgspec.Struct, rename="camel"):
    uri: str
    version: int
    text: str
    language_id: str = ""


class _DidOpen(msgspec.Struct, rename="camel"):
    text_document: _Item


def apply_change(ls, uri: str, version: int, changes: list, enc: PositionEncoding) -> None:
    try:
        ls.docs.change(uri, version, changes, enc)
    except EditRejected as exc:
        out_of_sync(ls, uri, str(exc))


def out_of_sync(ls, uri: str, reason: str) -> None:
    if ls.docs.desync(uri):
        log.warning("document out of sync: %s", reason)
        ls.window_log_message(lsp.LogMessageParams(
            type=lsp.MessageType.Warning,
            message=f"mercury-lsp: an edit to {uri} could not be applied ({reason}); suggestions for "
                    "it are paused until the editor sends its whole text again (reopen it)"))


def unreadable_notification(ls, method: str | None, params: Any) -> None:
    """A didOpen/didChange whose params the LSP types refused: read them again, plainly. One
    that holds a string UTF-8 cannot encode (outside the texts) is not read: a change is lost,
    so its document is out of sync."""
    clean = unencodable({"method": method, "params": params}) is None
    if method == lsp.TEXT_DOCUMENT_DID_OPEN:
        if (opened := _plain(params, _DidOpen) if clean else None) is not None:
            d = opened.text_document
            ls.docs.open(d.uri, d.language_id, d.version, d.text)
    elif method == lsp.TEXT_DOCUMENT_DID_CHANGE:
        if (p := _plain(params, _DidChange) if clean else None) is None:
            doc = params.get("textDocument") if isinstance(params, dict) else None
            uri = doc.get("uri") if isinstance(doc, dict) else None
            if isinstance(uri, str) and unencodable({"uri": uri}) is None:
                out_of_sync(ls, uri, "its params are malformed")
            return
        changes = [(None if c.range is None else (c.range.start.line, c.range.start.character,
                                                   c.range.end.line, c.range.end.character), c.text)
                   for c in p.content_changes]
        apply_change(ls, p.text_document.uri, p.text_document.version, changes, ls.position_encoding)


def _plain(params: Any, cls: type):
    try:
        return msgspec.convert(params, cls)
    except ValueError:  # msgspec.ValidationError, and UnicodeEncodeError
        return None


def document_state(ls, uri: str) -> DocumentState | None:
    doc = next((d for d in ls.docs if d.uri == uri), None)  # in sync or not
    if doc is None:
        return None
    return DocumentState(uri=uri, version=doc.version, in_sync=ls.docs.get(uri) is not None,
                         utf16_length=utf16_len(doc.text),
                         sha256=hashlib.sha256(doc.text.encode("utf-8")).hexdigest())


def state(ls, params) -> dict | None:
    p = params_as(params, DocumentStateParams)
    return msgspec.to_builtins(document_state(ls, p.text_document.uri))
