"""``workspace/didChangeConfiguration``: settings pushed by the client, or pulled with
``workspace/configuration`` when the notification comes empty."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from mercury_lsp.config import parse_settings, problems_message

if TYPE_CHECKING:
    from mercury_lsp.server.app import MercuryServer

log = logging.getLogger(__name__)

SECTION = "mercury"  # the settings' section in the client's configuration


def did_change_configuration(ls: MercuryServer, params: lsp.DidChangeConfigurationParams) -> None:
    raw = params.settings
    caps = ls.client_capabilities.workspace
    if (raw is None or raw == {}) and caps is not None and caps.configuration:
        ls.spawn(_pull_configuration(ls))
        return
    apply_raw(ls, raw)


def apply_raw(ls: MercuryServer, raw: Any) -> None:
    """Apply raw settings on top of the ``initialize`` ones; problems are shown, not fatal."""
    settings, problems = parse_settings(raw, ls.init_settings)
    ls.apply_settings(settings)
    if problems:
        ls.warn(problems_message(problems))


async def _pull_configuration(ls: MercuryServer) -> None:
    try:
        result = await ls.workspace_configuration_async(
            lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section=SECTION)]))
    except JsonRpcException as exc:
        log.info("workspace/configuration failed: %s", exc)
        return
    apply_raw(ls, result[0] if result else None)
