"""Files on disk: ``textDocument/didSave`` and ``workspace/didChangeWatchedFiles`` tell the
repository memory that a file changed (its indexed text is dead from that moment and read again
in the background); a deleted file is forgotten. When the client can register the watcher
dynamically, the server asks for every file of the workspace after ``initialized``."""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from mercury_lsp.memory.service import uri_path

if TYPE_CHECKING:
    from mercury_lsp.server.app import MercuryServer

log = logging.getLogger(__name__)

WATCH_ALL = "**/*"  # the memory decides which files it keeps (sources.language_of)


def watcher_supported(ls: MercuryServer) -> bool:
    ws = ls.client_capabilities.workspace
    watched = ws.did_change_watched_files if ws is not None else None
    return bool(watched is not None and watched.dynamic_registration)


async def register_watcher(ls: MercuryServer) -> None:
    """Ask the client to report every file change of the workspace (dynamic registration)."""
    if not watcher_supported(ls):
        return
    options = lsp.DidChangeWatchedFilesRegistrationOptions(watchers=[lsp.FileSystemWatcher(glob_pattern=WATCH_ALL)])
    reg = lsp.Registration(id=f"mercury-watch-{uuid.uuid4().hex[:8]}",
                           method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options)
    try:
        await ls.client_register_capability_async(lsp.RegistrationParams(registrations=[reg]))
    except (JsonRpcException, RuntimeError) as exc:
        log.info("the client did not register the file watcher (%s)", type(exc).__name__)


SAVE_OPTIONS = lsp.SaveOptions(include_text=False)


def did_save(ls: MercuryServer, params: lsp.DidSaveTextDocumentParams) -> None:
    path = uri_path(params.text_document.uri)
    if path is not None:
        ls.memory_host.changed(path)


def did_change_watched_files(ls: MercuryServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    for change in params.changes:
        path = uri_path(change.uri)
        if path is not None:
            ls.memory_host.changed(path, deleted=change.type == lsp.FileChangeType.Deleted)
