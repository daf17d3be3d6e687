"""``mercury-lsp serve`` with ``backend`` pointed at a live ``mercury-lsp http`` in another
process passes the language server's own inline-completion tests (tests/mercury_lsp/server/test_lsp.py,
imported below and run against this module's ``client``)."""

from __future__ import annotations

import asyncio
import json

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.mercury_lsp.server import test_lsp as local
from tests.mercury_lsp.server.test_lsp import CAPS, make_client
from tests.support.http import LiveServer, free_port
from tests.support.server import serve_command

# The local engine's tests, in their own order, collected here against the remote backend.
test_initialize_capabilities_progress_and_settings_warning = local.test_initialize_capabilities_progress_and_settings_warning
test_inline_completion_after_incremental_typing_and_cache = local.test_inline_completion_after_incremental_typing_and_cache
test_completion_fallback = local.test_completion_fallback
test_cancel_request = local.test_cancel_request
test_newer_request_supersedes_older = local.test_newer_request_supersedes_older
test_result_for_an_old_version_is_dropped = local.test_result_for_an_old_version_is_dropped
test_configuration_change_validated = local.test_configuration_change_validated

pytestmark = pytest.mark.asyncio(loop_scope="module")

HTTP_PORT = free_port()
BACKEND = {"backend": {"url": f"http://127.0.0.1:{HTTP_PORT}", "api": "mercury"}}


@pytest.fixture(scope="module")
def remote_http(tiny_model):
    srv = LiveServer(model=tiny_model, port=HTTP_PORT).start().ready()
    yield srv
    srv.stop()


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(
    server_command=serve_command("--settings", json.dumps(BACKEND)), client_factory=make_client))
async def client(lsp_client: LanguageClient, remote_http):
    lsp_client.init_result = await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=CAPS, initialization_options={"syntaxGuard": "off", "maxTokens": 16, "bogusOption": 1}))
    await asyncio.wait_for(lsp_client.mercury_ready.wait(), 120)
    yield
    await lsp_client.shutdown_session()


async def test_the_remote_backend_is_used(client: LanguageClient, remote_http):
    ready = [s for s in client.mercury_status if s.state == "ready"][-1]
    assert ready.engine.device == "remote" and str(HTTP_PORT) in ready.engine.model
    assert remote_http.alive
