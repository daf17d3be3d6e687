"""The server state of one client connection (``MercuryServer``) and ``build_server``.

The state: settings (base, from ``initialize``, current), the negotiated position encoding and
client capabilities, the open documents, the completion and next-edit services, and the model
load. Handlers (``server.handlers``) read it; features do the work.

The model loads on the engine's worker after ``initialized`` (work-done progress and a
``mercury/status`` notification report it); until then requests answer empty.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from mercury_lsp import __version__
from mercury_lsp.backend.connect import engine_client_for
from mercury_lsp.backend.outbound import Outbound
from mercury_lsp.completion import CompletionService
from mercury_lsp.completion.rank import shipped_ranker
from mercury_lsp.config import Settings, daemon_threads
from mercury_lsp.documents import Document, DocumentStore, PositionEncoding
from mercury_lsp.engine_client import EngineClient, EngineError, LoadSpec
from mercury_lsp.exclusion import Exclusion
from mercury_lsp.next_edit.recall import Recall
from mercury_lsp.next_edit.service import NextEditService
from mercury_lsp.refactor.workspace import WorkspaceFiles, workspace_roots
from mercury_lsp.schema import (
    NEXT_EDIT_UPDATE_NOTIFICATION,
    STATUS_NOTIFICATION,
    EngineInfo,
    StatusNotification,
)
from mercury_lsp.server.access import AllowedRoots, daemon_owned
from mercury_lsp.server.handlers import register_all
from mercury_lsp.server.handlers.sync import unreadable_notification
from mercury_lsp.server.logs import set_log_level
from mercury_lsp.server.memory_host import MemoryHost
from mercury_lsp.server.protocol import MercuryProtocol
from mercury_lsp.syntax import Grammars, grammar_for

log = logging.getLogger("mercury_lsp")

# How long the client may take to accept a work-done progress token before loading goes on
# without one (a client that never answers must not hold the status back).
PROGRESS_CREATE_TIMEOUT_S = 10.0
PROGRESS_TOKEN_HEX = 8  # random hex digits in a progress token (unique per connection)


class MercuryServer(LanguageServer):
    """One client connection: its settings, documents, services and model load."""

    protocol: MercuryProtocol

    def __init__(self, base: Settings, engine: EngineClient, grammars: Grammars) -> None:
        super().__init__("mercury-lsp", __version__, protocol_cls=MercuryProtocol,
                         text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.base_settings = base
        self.init_settings = base
        self.current = base
        self.engine = engine
        self.grammars = grammars
        self.position_encoding = PositionEncoding.UTF16
        self.docs = DocumentStore(grammar_for)
        self.docs.syntax_max_bytes = base.syntax_max_bytes
        self.memory_host = MemoryHost(self)
        self.completions = CompletionService(engine, self.docs, grammars, lambda: self.current,
                                             lambda: self.memory_host.memory)
        workspace_files = WorkspaceFiles()
        self.next_edits = NextEditService(
            engine, self.docs, grammars, lambda: self.current, lambda: self.position_encoding,
            lambda q: workspace_files.extend(q, self.readable_roots(), q.options.max_workspace_files,
                                             self.exclusion().excludes, self.allowed_roots),
            lambda u: self.protocol.notify(NEXT_EDIT_UPDATE_NOTIFICATION, msgspec.to_builtins(u)))
        self.completions.exclusion = self.next_edits.exclusion = self.exclusion
        self.next_edits.memory = self.next_edit_memory
        self.inline_supported = False
        self.markdown_docs = False
        self._tasks: set[asyncio.Task] = set()
        self._load_generation = 0
        self.shared = False  # a TCP daemon: engine-wide settings are the daemon's (``access``)
        self.daemon_roots: AllowedRoots | None = None  # a shared daemon's --root directories (None: stdio)
        # stdio: called with ``initialize``'s processId, to end the daemon when the client dies
        self.watch_client: Callable[[int], None] | None = None

    # ------------------------------------------------------------------ what may be read
    @property
    def allowed_roots(self) -> AllowedRoots:
        """What this connection may read from disk besides its open documents: over stdio the
        editor's workspace folders, on a shared daemon its command line's ``--root`` directories."""
        if self.daemon_roots is not None:
            return self.daemon_roots
        return AllowedRoots(workspace_roots(self.workspace))

    def readable_roots(self) -> list[Path]:
        """The directories to read for this client's workspace folders (those it may read)."""
        return self.allowed_roots.within(workspace_roots(self.workspace))

    # ------------------------------------------------------------------ helpers
    def exclusion(self) -> Exclusion:
        """The ``exclude`` / ``enable`` settings against this client's workspace roots."""
        try:
            roots = workspace_roots(self.workspace)
        except RuntimeError:  # before initialize: no workspace yet
            roots = []
        return Exclusion.from_settings(self.current, roots)

    def spawn(self, coro) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def status(self, state: str, message: str = "", engine: EngineInfo | None = None) -> None:
        self.protocol.notify(STATUS_NOTIFICATION,
                             msgspec.to_builtins(StatusNotification(state=state, message=message,
                                                                    engine=engine)))

    def warn(self, message: str, kind: lsp.MessageType = lsp.MessageType.Warning) -> None:
        self.window_show_message(lsp.ShowMessageParams(type=kind, message=message))

    def unreadable_notification(self, method: str | None, params: Any) -> None:
        unreadable_notification(self, method, params)

    def report_server_error(self, error: Exception, source) -> None:
        log.error("internal error (%s): %s", getattr(source, "__name__", source), type(error).__name__)

    def apply_settings(self, settings: Settings) -> None:
        if self.shared:  # one client may not change the engine or the logs for the others
            settings, refused = daemon_owned(settings, self.base_settings)
            if refused:
                self.warn("mercury-lsp: this daemon is shared; engine-wide settings come from its command "
                          f"line, ignored: {', '.join(refused)}")
        old = self.current
        self.current = settings
        self.docs.syntax_max_bytes = settings.syntax_max_bytes
        set_log_level(settings)
        model_changed = old.model_key != settings.model_key
        backend_changed = old.backend != settings.backend
        self.completions.settings_changed(settings, model_changed or backend_changed or old.preset != settings.preset)
        self.memory_host.settings_changed()
        if backend_changed:
            self.switch_backend(settings)
        elif model_changed and self.engine.spec is not None:
            self.spawn(self.load_model())

    def next_edit_memory(self, doc: Document) -> Recall | None:
        """The repository memory for a next-edit request on ``doc`` once its first build is done
        (until then next edit reads the open documents alone: no request waits for an index)."""
        memory = self.memory_host.memory
        if memory is None or not memory.ready:
            return None
        request = self.completions.memory_request(doc, self.current)
        gate = self.current.completion
        return None if request is None else Recall(request, gate.min_probability, gate.length_weight,
                                                 shipped_ranker(gate.ranker))

    def memory_exclude(self) -> Callable[[Path], bool]:
        """Files the memory must never read or return: the ``exclude`` setting's (as it is when
        asked: a change of the setting applies to the next file read)."""
        return lambda path: self.exclusion().excludes(path)

    def switch_backend(self, settings: Settings) -> None:
        """A new ``backend`` setting (remote <-> local, or another server): a new engine client
        replaces the old one. The old one's outstanding work is cancelled (its requests answer
        empty, as superseded ones do) and it is closed once that work has ended (a local model
        is released); the new one loads now, or at ``initialized`` when nothing has loaded yet."""
        old = self.engine
        self.completions.cancel_all()
        self.next_edits.cancel_all()
        new = engine_client_for(settings, Outbound(lambda uri: self.exclusion().excludes(uri)))
        self.engine = self.completions.engine = self.next_edits.engine = new
        new.watch(self)
        if old.spec is not None:  # the old one was loaded (or loading): so is the new one
            self.spawn(self.load_model())
        self.spawn(old.aclose())

    def close(self) -> None:
        """``shutdown``: cancel the outstanding work, stop indexing."""
        self.completions.cancel_all()
        self.next_edits.cancel_all()
        self.memory_host.stop()

    def drop(self) -> None:
        """The connection ended (however it ended): cancel its work, its tasks and its requests,
        so that nothing keeps its documents and state alive (a shared model load goes on)."""
        self.close()
        for task in list(self._tasks):
            task.cancel()
        self.protocol.abandon_requests()

    # ------------------------------------------------------------------ model
    async def load_model(self) -> None:
        s = self.current
        self._load_generation += 1
        gen = self._load_generation
        spec = LoadSpec(s.model, s.device, s.dtype, daemon_threads(s.threads), s.context.max_context_tokens)
        loading = asyncio.ensure_future(self.engine.load(spec))
        self.status("loading", f"loading {s.model or 'the embedded model'}")
        token = await self._begin_progress()
        try:
            info = await loading
        except EngineError as exc:
            if token is not None:
                self.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message="failed"))
            if gen == self._load_generation:
                log.error("model failed to load: %s", exc)
                shown = "see the daemon's log" if self.shared else str(exc)  # no local paths over a network
                self.warn(f"mercury-lsp: could not load the model: {shown}", lsp.MessageType.Error)
                self.status("error", shown)
            return
        if token is not None:
            self.work_done_progress.end(token, lsp.WorkDoneProgressEnd(
                message=f"ready ({info.device}, {info.load_ms:.0f} ms)"))
        if gen == self._load_generation:
            log.info("model ready: %s on %s/%s, context %d tokens, loaded in %.0f ms",
                     info.model, info.device, info.dtype, info.context_tokens, info.load_ms)
            self.status("ready", "ready", info)

    async def _begin_progress(self) -> str | None:
        """A work-done progress token for the load, when the client takes one."""
        caps = self.client_capabilities
        if caps.window is None or not caps.window.work_done_progress:
            return None
        token = f"mercury-load-{uuid.uuid4().hex[:PROGRESS_TOKEN_HEX]}"
        try:
            await asyncio.wait_for(self.work_done_progress.create_async(token), PROGRESS_CREATE_TIMEOUT_S)
            self.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(
                title="mercury-lsp", message="loading model", cancellable=False))
        except (TimeoutError, JsonRpcException, RuntimeError) as exc:
            log.info("client refused work-done progress (%s)", type(exc).__name__)
            return None
        return token


def build_server(base: Settings, engine: EngineClient, grammars: Grammars) -> MercuryServer:
    """A server for one connection with every handler family registered."""
    server = MercuryServer(base, engine, grammars)
    engine.watch(server)  # a remote backend's outages reach the user once
    register_all(server)
    return server
