"""LSP glue for next-edit suggestions (``register(server)``); the work is in ``next_edit``.

* ``mercury/nextEdit`` — params ``{textDocument: {uri, version?}, position}``; result: the
  structured ``NextEditResult`` (schema.py), ranges in the session's position encoding.
* ``textDocument/copilotInlineEdit`` — Copilot's request and result shape
  (``{edits: [{text, range, textDocument: {uri, version}}]}``), edits of the requested document,
  so next-edit clients written for Copilot (sidekick.nvim) can use this server.
* ``textDocument/codeAction`` — "Apply predicted edits": one ``WorkspaceEdit`` with every
  location, ``documentChanges`` carrying each document's version, so a client refuses it once a
  document moved on. Locations in workspace files that are not open (``refactor.workspace``)
  come with version ``null`` (the file on disk).
* ``mercury.applyEdits`` (``workspace/executeCommand``) — applies structured edits after checking
  all of them (open document, current version, range inside the document, no overlaps); any
  problem refuses the whole request with a clear error and nothing is applied.

A request whose document moved on while the model worked answers no edits (never stale ones).
"""

from __future__ import annotations

import asyncio
import logging
import time
from functools import partial
from typing import Any

import msgspec
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from mercury_lsp import __version__
from mercury_lsp.documents import Document, PositionEncoding, PositionError, units_len
from mercury_lsp.engine_client import CancelToken, EngineCancelled, EngineError, EngineSession
from mercury_lsp.next_edit import DocState, EngineEdits, NextEditOptions, NextEditQuery, predict, to_result
from mercury_lsp.refactor.workspace import WorkspaceFiles, workspace_roots
from mercury_lsp.schema import (
    APPLY_EDITS_COMMAND,
    COPILOT_INLINE_EDIT_REQUEST,
    NEXT_EDIT_REQUEST,
    ApplyEditsParams,
    NextEditParams,
    NextEditResult,
    PredictedEdit,
)

log = logging.getLogger(__name__)

CODE_ACTION_TITLE = "Apply predicted edits"
CODE_ACTION_KIND = lsp.CodeActionKind.RefactorRewrite
CONTENT_MODIFIED = -32801  # LSP ErrorCodes.ContentModified
NEXT_EDIT_TIMEOUT_S = 30.0
CACHE_DOCUMENTS = 32
# Notifications Copilot clients send about inline edits: accepted and ignored.
COPILOT_NOTIFICATIONS = ("textDocument/didShowInlineEdit", "textDocument/didFocus")


class StaleVersion(JsonRpcException):
    CODE = CONTENT_MODIFIED
    MESSAGE = "ContentModified"


def _params(raw: Any, cls: type) -> Any:
    """pygls hands custom params over as plain objects; convert (InvalidParams when malformed)."""
    if not isinstance(raw, dict | list):
        raw = _builtins(raw)
    try:
        return msgspec.convert(raw, cls)
    except msgspec.ValidationError as exc:
        raise JsonRpcInvalidParams(f"invalid params: {exc}") from None


def _builtins(obj: Any) -> Any:
    if obj is None or isinstance(obj, str | int | float | bool):
        return obj
    if isinstance(obj, dict):
        return {k: _builtins(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple) and not hasattr(obj, "_fields"):
        return [_builtins(v) for v in obj]
    if hasattr(obj, "_asdict"):
        return {k: _builtins(v) for k, v in obj._asdict().items()}
    if hasattr(obj, "__dict__"):
        return {k: _builtins(v) for k, v in vars(obj).items()}
    return obj


def doc_state(doc: Document, history_records, max_records: int) -> DocState:
    """A document plus its texts before its newest edit records (undone newest first)."""
    texts: list[str] = []
    text = doc.text
    edited_at = 0.0
    for r in history_records[:max_records]:
        if r.clipped or text[r.offset:r.offset + len(r.new_text)] != r.new_text:
            break
        text = text[: r.offset] + r.old_text + text[r.offset + len(r.new_text):]
        texts.append(text)
        edited_at = max(edited_at, r.time)
    return DocState(doc.uri, doc.text, doc.grammar, doc.version, tuple(texts), edited_at)


class NextEditService:
    def __init__(self, server) -> None:
        self.server = server
        self._cache: dict[str, tuple[int, NextEditOptions, NextEditResult]] = {}
        self._slots: dict[str, CancelToken] = {}
        self.workspace_files = WorkspaceFiles()

    @property
    def options(self) -> NextEditOptions:
        """The ``nextEdit`` part of the current settings (read per request)."""
        return self.server.current.next_edit

    # ------------------------------------------------------------------ predict
    def _query(self, doc: Document, cursor: int) -> NextEditQuery:
        store = self.server.docs
        settings = self.server.current
        opts = self.options
        states = []
        for d in store:
            if d.grammar is None or d.grammar != doc.grammar or len(d.text) > settings.syntax_max_bytes:
                if d is not doc:
                    continue
            states.append(doc_state(d, store.history.recent(d.uri, opts.max_history_records),
                                    opts.max_history_records))
        states.sort(key=lambda s: s.uri != doc.uri)
        return NextEditQuery(tuple(states), doc.uri, cursor, self.server.position_encoding, opts)

    async def predict(self, uri: str, version: int | None, line: int, character: int) -> NextEditResult:
        ls = self.server
        doc = ls.docs.get(uri)
        if doc is None:
            raise JsonRpcInvalidParams(f"document not open: {uri}")
        if version is not None and version != doc.version:
            raise StaleVersion(f"document version {version} is stale: {uri} is at version {doc.version}")
        try:
            cursor = doc.offset_at(line, character, ls.position_encoding, strict=True)
        except PositionError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        empty = NextEditResult(edits=[], version=__version__, position_encoding=ls.position_encoding.value)
        if not ls.engine.ready or not ls.current.language_enabled(doc.language_id):
            return empty
        cached = self._cache.get(uri)
        if cached is not None and cached[0] == doc.version and cached[1] == self.options:
            return cached[2]
        query = self._query(doc, cursor)
        old = self._slots.pop(uri, None)
        if old is not None:
            old.cancel()
        token = CancelToken(deadline=time.monotonic() + NEXT_EDIT_TIMEOUT_S)
        self._slots[uri] = token
        grammars = ls.grammars
        roots = workspace_roots(ls.workspace)

        def job(session: EngineSession) -> NextEditResult:
            # files of the workspace that are not open, read here on the worker
            q = self.workspace_files.extend(query, roots, query.options.max_workspace_files)
            outcome = predict(q, EngineEdits(session.engine), grammars, token)
            return to_result(outcome, q, session.info.model)

        try:
            result = await ls.engine.run(partial(job), token)
        except EngineCancelled:
            return empty
        except EngineError as exc:
            log.warning("next edit failed: %s", exc)
            return empty
        finally:
            if self._slots.get(uri) is token:
                del self._slots[uri]
        if ls.current.debug_log_user_code:
            log.info("next edit %s v%d: %s", uri, doc.version, msgspec.json.encode(result).decode())
        current = ls.docs.get(uri)
        if current is not doc or doc.version != query.docs[0].version:
            return empty  # the document moved on: no stale edits
        self._cache[uri] = (doc.version, query.options, result)
        while len(self._cache) > CACHE_DOCUMENTS:
            self._cache.pop(next(iter(self._cache)))
        return result

    # ------------------------------------------------------------------ LSP shapes
    def workspace_edit(self, edits: list[PredictedEdit]) -> lsp.WorkspaceEdit:
        by_uri: dict[str, list[PredictedEdit]] = {}
        for e in edits:
            by_uri.setdefault(e.uri, []).append(e)
        changes = []
        for uri, mine in by_uri.items():
            version = mine[0].document_version
            changes.append(lsp.TextDocumentEdit(
                text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                edits=[lsp.TextEdit(range=_lsp_range(e), new_text=e.new_text) for e in mine]))
        return lsp.WorkspaceEdit(document_changes=changes)

    def validate(self, edits: list[PredictedEdit]) -> None:
        """Refuse (JSON-RPC error, nothing applied) unless every edit can be applied as is."""
        ls = self.server
        enc = ls.position_encoding
        spans: dict[str, list[tuple[int, int]]] = {}
        for i, e in enumerate(edits):
            doc = ls.docs.get(e.uri)
            if doc is None:
                raise JsonRpcInvalidParams(f"edit {i}: document not open: {e.uri}")
            if e.document_version is not None and e.document_version != doc.version:
                raise StaleVersion(f"edit {i}: computed for version {e.document_version} of {e.uri}, "
                                   f"which is now at version {doc.version}; nothing was applied")
            start = _offset(doc, e.range.start.line, e.range.start.character, enc, i)
            end = _offset(doc, e.range.end.line, e.range.end.character, enc, i)
            if end < start:
                raise JsonRpcInvalidParams(f"edit {i}: range ends before it starts; nothing was applied")
            spans.setdefault(e.uri, []).append((start, end))
        for uri, mine in spans.items():
            mine.sort()
            for (s0, e0), (s1, e1) in zip(mine, mine[1:], strict=False):
                if s1 < e0 or (s1 == s0 and e1 == e0):
                    raise JsonRpcInvalidParams(f"overlapping edits in {uri}; nothing was applied")


def _lsp_range(e: PredictedEdit) -> lsp.Range:
    r = e.range
    return lsp.Range(lsp.Position(r.start.line, r.start.character), lsp.Position(r.end.line, r.end.character))


def _offset(doc: Document, line: int, character: int, enc: PositionEncoding, i: int) -> int:
    if line >= doc.line_count:
        raise JsonRpcInvalidParams(f"edit {i}: line {line} is beyond the end of the document "
                                   f"({doc.line_count} lines); nothing was applied")
    if character > units_len(doc.line_text(line), enc):
        raise JsonRpcInvalidParams(f"edit {i}: character {character} is beyond the end of line {line}; "
                                   f"nothing was applied")
    try:
        return doc.offset_at(line, character, enc, strict=True)
    except PositionError as exc:
        raise JsonRpcInvalidParams(f"edit {i}: {exc}; nothing was applied") from None


def register(server) -> None:
    """Add next-edit features to a ``MercuryServer`` (called by ``build_server``)."""
    service = NextEditService(server)
    server.next_edits = service

    @server.feature(NEXT_EDIT_REQUEST)
    async def next_edit(ls, params) -> dict:
        p = _params(params, NextEditParams)
        result = await service.predict(p.text_document.uri, p.text_document.version,
                                       p.position.line, p.position.character)
        return msgspec.to_builtins(result)

    @server.feature(COPILOT_INLINE_EDIT_REQUEST)
    async def copilot_inline_edit(ls, params) -> dict:
        p = _params(params, NextEditParams)
        result = await service.predict(p.text_document.uri, p.text_document.version,
                                       p.position.line, p.position.character)
        edits = []
        for e in result.edits:
            if e.uri != p.text_document.uri:
                continue
            edits.append({"text": e.new_text, "range": msgspec.to_builtins(e.range),
                          "textDocument": {"uri": e.uri, "version": e.document_version}})
        return {"edits": edits}

    for method in COPILOT_NOTIFICATIONS:
        server.feature(method)(lambda ls, params: None)

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                    lsp.CodeActionOptions(code_action_kinds=[CODE_ACTION_KIND], resolve_provider=False))
    async def code_action(ls, params: lsp.CodeActionParams):
        only = params.context.only if params.context is not None else None
        if only and not any(CODE_ACTION_KIND.value.startswith(k.value if hasattr(k, "value") else str(k))
                            for k in only):
            return []
        doc = ls.docs.get(params.text_document.uri)
        if doc is None or len(ls.docs.history) == 0:  # nothing edited yet: no model work
            return []
        pos = params.range.start
        try:
            result = await service.predict(doc.uri, None, pos.line, pos.character)
        except JsonRpcException:
            return []
        if not result.edits:
            return []
        uris = {e.uri for e in result.edits}
        where = f"{len(result.edits)} location{'s' if len(result.edits) != 1 else ''}"
        if len(uris) > 1:
            where += f" in {len(uris)} files"
        return [lsp.CodeAction(title=f"{CODE_ACTION_TITLE} ({where})", kind=CODE_ACTION_KIND,
                               edit=service.workspace_edit(result.edits))]

    @server.command(APPLY_EDITS_COMMAND)
    async def apply_edits(ls, *args):
        raw = args[0] if len(args) == 1 else list(args)
        if isinstance(raw, list | tuple) and len(raw) == 1:
            raw = raw[0]
        raw = _builtins(raw)
        if isinstance(raw, list):
            raw = {"edits": raw}
        p = _params(raw, ApplyEditsParams)
        service.validate(p.edits)
        if not p.edits:
            return {"applied": True}
        resp = await asyncio.wait_for(ls.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(
            edit=service.workspace_edit(p.edits), label=CODE_ACTION_TITLE)), NEXT_EDIT_TIMEOUT_S)
        return {"applied": bool(getattr(resp, "applied", False)),
                "failureReason": getattr(resp, "failure_reason", None)}
