"""LSP handlers, one module per request family, and the one method table (``METHODS``) that
registers every one of them. Each handler is thin: read the params, call a feature module
(``completion``, ``documents``, ``next_edit``, ``config``...), convert the result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from mercury_lsp.completion.accept import ACCEPTED_COMMAND
from mercury_lsp.schema import (
    APPLY_EDITS_COMMAND,
    COPILOT_INLINE_EDIT_REQUEST,
    DOCUMENT_STATE_REQUEST,
    NEXT_EDIT_REQUEST,
    STATS_REQUEST,
)
from mercury_lsp.server.handlers import (
    completion,
    documents,
    files,
    lifecycle,
    next_edit,
    settings,
    status,
    sync,
)

if TYPE_CHECKING:
    from mercury_lsp.server.app import MercuryServer


@dataclass(frozen=True)
class Method:
    """An LSP method (or, with ``command``, a ``workspace/executeCommand`` command) and its handler."""
    name: str
    handler: Callable[..., Any]
    options: Any = None  # the capability options the server advertises for it
    command: bool = False


METHODS: tuple[Method, ...] = (
    # lifecycle
    Method(lsp.INITIALIZE, lifecycle.initialize),
    Method(lsp.INITIALIZED, lifecycle.initialized),
    Method(lsp.SHUTDOWN, lifecycle.shutdown),
    Method(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION, settings.did_change_configuration),
    # documents
    Method(lsp.TEXT_DOCUMENT_DID_OPEN, documents.did_open),
    Method(lsp.TEXT_DOCUMENT_DID_CHANGE, documents.did_change),
    Method(lsp.TEXT_DOCUMENT_DID_CLOSE, documents.did_close),
    Method(DOCUMENT_STATE_REQUEST, sync.state),
    # files on disk (the repository memory)
    Method(lsp.TEXT_DOCUMENT_DID_SAVE, files.did_save, files.SAVE_OPTIONS),
    Method(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, files.did_change_watched_files),
    # completion
    Method(lsp.TEXT_DOCUMENT_INLINE_COMPLETION, completion.inline_completion, completion.INLINE_OPTIONS),
    Method(lsp.TEXT_DOCUMENT_COMPLETION, completion.completion, completion.COMPLETION_OPTIONS),
    Method(ACCEPTED_COMMAND, completion.accepted, command=True),
    # next edit
    Method(NEXT_EDIT_REQUEST, next_edit.next_edit),
    Method(COPILOT_INLINE_EDIT_REQUEST, next_edit.copilot_inline_edit),
    *(Method(name, next_edit.ignored) for name in next_edit.COPILOT_NOTIFICATIONS),
    Method(lsp.TEXT_DOCUMENT_CODE_ACTION, next_edit.code_action, next_edit.CODE_ACTION_OPTIONS),
    Method(APPLY_EDITS_COMMAND, next_edit.apply_edits, command=True),
    # status
    Method(STATS_REQUEST, status.stats_request),
)


def register_all(server: MercuryServer) -> None:
    for m in METHODS:
        register = server.command(m.name) if m.command else server.feature(m.name, m.options)
        register(m.handler)
