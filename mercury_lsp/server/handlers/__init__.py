"""LSP handlers, one module per request family. Each is thin: read the params, call a feature
module (``completion``, ``documents``, ``config``...), convert the result. Next edit's handlers
live beside their feature, in ``mercury_lsp.next_edit.handlers``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mercury_lsp.server.handlers import completion, documents, files, lifecycle, settings, status, sync

if TYPE_CHECKING:
    from mercury_lsp.server.app import MercuryServer

FAMILIES = (lifecycle, documents, files, settings, completion, status, sync)


def register_all(server: MercuryServer) -> None:
    for family in FAMILIES:
        family.register(server)
