"""Next-edit requests of one client connection (``NextEditService``): the query from the open
documents and their edit history, one prediction at a time per document on the engine worker, a
cache keyed by the versions of every document a prediction read, and the checks that refuse edits
which cannot be applied as is.

Workspace files that are not open (``more_documents``) are read in one of two ways: inline (the
answer waits for them: a code action is one ``WorkspaceEdit``), or, for ``mercury/nextEdit``,
after the answer — the answer has the open documents' edits and ``updatePending``, and one
``mercury/nextEditUpdate`` (``send_update``) follows from the background with the edits of the
files that are not open, for the request's document version; none is sent once that document
moved on or a newer request for it superseded the old one.

LSP-free except for the shapes it returns (``WorkspaceEdit``) and the JSON-RPC errors it raises
(``StaleVersion``: ContentModified; InvalidParams); the handlers are in ``server.handlers.next_edit``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from mercury_lsp import __version__
from mercury_lsp.config import NextEditOptions, Settings
from mercury_lsp.documents import Document, DocumentStore, PositionEncoding, PositionError, units_len
from mercury_lsp.engine_client import CancelToken, EngineCancelled, EngineClient, EngineError
from mercury_lsp.exclusion import Exclusion
from mercury_lsp.next_edit.pipeline import predict, to_result
from mercury_lsp.next_edit.query import DocState, NextEditQuery
from mercury_lsp.next_edit.recall import Recall
from mercury_lsp.schema import NextEditNote, NextEditResult, NextEditUpdate, PredictedEdit, VersionedDocument
from mercury_lsp.syntax import Grammars, family

if TYPE_CHECKING:
    from mercury_lsp.backend.session import Session

log = logging.getLogger(__name__)

CONTENT_MODIFIED = -32801  # LSP ErrorCodes.ContentModified
CACHE_DOCUMENTS = 32  # documents whose last result is kept (one entry each, newest versions)
CROSS_FILE_UPDATE = 2  # the answer is part 1 of a next-edit result; the workspace files' edits part 2


class StaleVersion(JsonRpcException):
    CODE = CONTENT_MODIFIED
    MESSAGE = "ContentModified"


def run_prediction(session: Session, query: NextEditQuery, grammars: Grammars, cancel: CancelToken | None,
                   model: str | None = None, memory: Recall | None = None) -> NextEditResult:
    """One prediction on a worker: the backend's own when it predicts next edits, else the
    pipeline here with the session's edit model (None: the syntax alone) and the repository
    memory (None: the open documents alone); ``model``: the name the result gives (default: the
    session's)."""
    if session.capabilities.next_edit:
        remote = session.next_edit(query, cancel)
        if remote is not None:
            return remote
    outcome = predict(query, session.edit_model, grammars, cancel, memory)
    return to_result(outcome, query, model if model is not None else session.info.model)


def doc_state(doc: Document, history_records, max_records: int) -> DocState:
    """A document plus its texts before its newest edit records (undone newest first)."""
    texts: list[str] = []
    times: list[float] = []
    text = doc.text
    edited_at = 0.0
    for r in history_records[:max_records]:
        if r.clipped or text[r.offset:r.offset + len(r.new_text)] != r.new_text:
            break
        text = text[: r.offset] + r.old_text + text[r.offset + len(r.new_text):]
        texts.append(text)
        times.append(r.time)
        edited_at = max(edited_at, r.time)
    return DocState(doc.uri, doc.text, doc.grammar, doc.version, tuple(texts), edited_at, tuple(times))


class NextEditService:
    """One per client connection: predictions (one running per document; a newer request
    cancels the older), a cache per document version, and the checks before applying edits."""

    def __init__(self, engine: EngineClient, docs: DocumentStore, grammars: Grammars,
                 settings: Callable[[], Settings], encoding: Callable[[], PositionEncoding],
                 more_documents: Callable[[NextEditQuery], NextEditQuery] | None = None,
                 send_update: Callable[[NextEditUpdate], None] | None = None) -> None:
        self.engine = engine
        # run on the worker before predicting: adds documents that are not open (workspace files)
        self.more_documents = more_documents
        self.send_update = send_update  # sends ``mercury/nextEditUpdate`` (the second part)
        self.docs = docs
        self.grammars = grammars
        self.settings = settings
        self.encoding = encoding
        # uri -> (the (uri, version) of every document the prediction read, options, result)
        self._cache: dict[str, tuple[tuple, NextEditOptions, NextEditResult]] = {}
        self._slots: dict[str, CancelToken] = {}
        # Content exclusion (the server sets one that knows the workspace roots).
        self.exclusion: Callable[[], Exclusion] = lambda: Exclusion.from_settings(self.settings())
        # The repository memory as a request for this document may ask it (the server sets one
        # when it has a memory; None: off, or not built yet, and the rules read the open documents).
        self.memory: Callable[[Document], Recall | None] = lambda doc: None
        self._update_slots: dict[str, CancelToken] = {}  # the background part 2 per document
        self._update_tasks: set[asyncio.Task] = set()

    @property
    def options(self) -> NextEditOptions:
        """The ``nextEdit`` part of the current settings (read per request)."""
        return self.settings().next_edit

    def cancel(self, uri: str) -> None:
        """Cancel the prediction running for ``uri`` (the document closed) and forget its cache."""
        for slots in (self._slots, self._update_slots):
            token = slots.pop(uri, None)
            if token is not None:
                token.cancel()
        self._cache.pop(uri, None)

    def cancel_all(self) -> None:
        for token in (*self._slots.values(), *self._update_slots.values()):
            token.cancel()

    # ------------------------------------------------------------------ predict
    def _read(self, doc: Document) -> list[Document]:
        """The open documents a prediction for ``doc`` reads: ``doc`` and those of its language's
        family (``syntax.FAMILIES``: TypeScript and JavaScript together; never an excluded one: its
        text would reach the model, or a remote backend)."""
        limit = self.settings().syntax_max_bytes
        excluded = self.exclusion().excludes
        mine = family(doc.grammar)
        return [d for d in self.docs
                if d is doc or (d.grammar is not None and family(d.grammar) == mine and len(d.text) <= limit
                                and not excluded(d.uri))]

    def _query(self, doc: Document, cursor: int, read: list[Document]) -> NextEditQuery:
        store = self.docs
        opts = self.options
        states = [doc_state(d, store.history.recent(d.uri, opts.max_history_records), opts.max_history_records)
                  for d in read]
        states.sort(key=lambda s: s.uri != doc.uri)
        return NextEditQuery(tuple(states), doc.uri, cursor, self.encoding(), opts)

    def _updates(self) -> bool:
        """Workspace files come as a second update (else inline, or not at all)."""
        return (self.more_documents is not None and self.send_update is not None
                and self.options.max_workspace_files > 0)

    async def predict(self, uri: str, version: int | None, line: int, character: int,
                      update: bool = False) -> NextEditResult:
        """The next edits for the cursor; with ``update`` the workspace files that are not open
        come as a second, versioned update (module docstring), else inline."""
        settings, enc = self.settings(), self.encoding()
        doc = self.docs.get(uri)
        if doc is None:
            raise JsonRpcInvalidParams(f"document not open: {uri}")
        if version is not None and version != doc.version:
            raise StaleVersion(f"document version {version} is stale: {uri} is at version {doc.version}")
        try:
            cursor = doc.offset_at(line, character, enc, strict=True)
        except PositionError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        empty = NextEditResult(edits=[], version=__version__, position_encoding=enc.value)
        if (not self.engine.ready or not settings.language_enabled(doc.language_id)
                or not self.exclusion().enabled(doc.uri, doc.language_id)):
            return empty
        docs = self._read(doc)
        later = update and self._updates()
        read = (tuple((d.uri, d.version) for d in docs), later)
        cached = self._cache.get(uri)
        query = self._query(doc, cursor, docs)
        if cached is not None and cached[0] == read and cached[1] == self.options:
            if later:
                self._schedule_update(doc, query)
            return cached[2]
        old = self._slots.pop(uri, None)
        if old is not None:
            old.cancel()
        token = CancelToken(deadline=time.monotonic() + self.options.timeout_ms / 1000)
        self._slots[uri] = token
        more = None if later else self.more_documents
        memory = self.memory(doc)  # on the event loop: the open documents as they are now

        def job(session: Session) -> NextEditResult:
            return run_prediction(session, more(query) if more is not None else query, self.grammars, token,
                                  memory=memory)

        try:
            result = await self.engine.run(job, token)
        except EngineCancelled:
            return empty
        except EngineError as exc:
            log.warning("next edit failed: %s", exc)
            return empty
        finally:
            if self._slots.get(uri) is token:
                del self._slots[uri]
        if settings.debug_log_user_code:
            log.info("next edit %s v%d: %s", uri, doc.version, msgspec.json.encode(result).decode())
        current = self.docs.get(uri)
        if current is not doc or doc.version != query.docs[0].version:
            return empty  # the document moved on: no stale edits
        if later:
            result = msgspec.structs.replace(result, update_pending=True)
            self._schedule_update(doc, query)
        kept = [e for e in result.edits if self._current(e)]
        if len(kept) < len(result.edits):  # another document moved on meanwhile: its edits are dropped
            return msgspec.structs.replace(result, edits=kept)
        self._cache[uri] = (read, query.options, result)
        while len(self._cache) > CACHE_DOCUMENTS:
            self._cache.pop(next(iter(self._cache)))
        return result

    # ------------------------------------------------------------------ the second update
    def _schedule_update(self, doc: Document, query: NextEditQuery) -> None:
        old = self._update_slots.pop(doc.uri, None)
        if old is not None:  # superseded: the newer request's update replaces it
            old.cancel()
        token = CancelToken(deadline=time.monotonic() + self.options.timeout_ms / 1000)
        self._update_slots[doc.uri] = token
        task = asyncio.ensure_future(self._update(doc, query, token))
        self._update_tasks.add(task)
        task.add_done_callback(self._update_tasks.discard)

    async def _update(self, doc: Document, query: NextEditQuery, token: CancelToken) -> None:
        """Part 2: the edits of workspace files that are not open, sent once (module docstring)."""
        more = self.more_documents
        known = {d.uri for d in query.docs}
        model = ""

        def job(session: Session) -> tuple[list[PredictedEdit], list[NextEditNote]]:
            nonlocal model
            model = session.info.model
            q = more(query)
            if len(q.docs) == len(query.docs):  # no workspace file mentions what the edits changed
                return [], []
            got = run_prediction(session, q, self.grammars, token)
            return [e for e in got.edits if e.uri not in known], [n for n in got.notes if n.uri not in known]

        try:
            edits, notes = await self.engine.run(job, token)
        except (EngineCancelled, EngineError) as exc:
            if not isinstance(exc, EngineCancelled):
                log.warning("next edit update failed: %s", exc)
            edits, notes = [], []
        superseded = self._update_slots.get(doc.uri) is not token
        if not superseded:
            del self._update_slots[doc.uri]
        if superseded or self.docs.get(doc.uri) is not doc or doc.version != query.docs[0].version:
            return
        result = NextEditResult(edits=edits, model=model, version=__version__,
                                position_encoding=query.encoding.value, notes=notes)
        self.send_update(NextEditUpdate(text_document=VersionedDocument(doc.uri, doc.version),
                                        update=CROSS_FILE_UPDATE, result=result))

    def _current(self, e: PredictedEdit) -> bool:
        """An edit of a file on disk (no version), or of an open document still at its version."""
        if e.document_version is None:
            return True
        doc = self.docs.get(e.uri)
        return doc is not None and doc.version == e.document_version

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
        enc = self.encoding()
        spans: dict[str, list[tuple[int, int]]] = {}
        for i, e in enumerate(edits):
            doc = self.docs.get(e.uri)
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
