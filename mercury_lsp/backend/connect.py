"""Which backend the settings name: the ``EngineClient`` the language server serves from."""

from __future__ import annotations

from mercury_lsp.backend.local import local_client
from mercury_lsp.backend.outbound import Outbound
from mercury_lsp.backend.remote_session import RemoteOpener
from mercury_lsp.config import Settings
from mercury_lsp.engine_client import EngineClient


def engine_client_for(settings: Settings, outbound: Outbound | None = None) -> EngineClient:
    """The local engine, or the remote backend ``settings.backend`` names; ``outbound``: what a
    remote backend may be sent (by default everything the features send)."""
    if settings.backend is None:
        return local_client()
    return EngineClient(RemoteOpener(settings.backend, outbound))
