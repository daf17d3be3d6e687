"""LSP handlers, one module per request family. Each is thin: read the params, call a feature
module (``completion``, ``documents``, ``next_edit``, ``config``...), convert the result."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mercury_lsp.server.handlers import completion, documents, lifecycle, settings, status, sync

if TYPE_CHECKING:
    from mercury_lsp.server.app import MercuryServer

FAMILIES = (lifecycle, documents, settings, completion, status, sync)


def register_all(server: MercuryServer) -> None:
    for family in FAMILIES:
        family.register(server)
