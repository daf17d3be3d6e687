"""The ``backend`` setting changed while the language server runs (``didChangeConfiguration``):
local -> a live ``mercury-lsp http`` in another process -> local again, each switch announced by
a ``mercury/status`` ready for the new engine, and completions served throughout."""

from __future__ import annotations

import asyncio

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.mercury_lsp.server.test_lsp import CAPS, configure, find_suggestion, make_client
from tests.support.http import LiveServer, free_port
from tests.support.server import serve_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

HTTP_PORT = free_port()
OPTIONS = {"syntaxGuard": "off", "maxTokens": 16}
REMOTE = {**OPTIONS, "backend": {"url": f"http://127.0.0.1:{HTTP_PORT}", "api": "mercury"}}


@pytest.fixture(scope="module")
def remote_http(tiny_model):
    srv = LiveServer(model=tiny_model, port=HTTP_PORT).start().ready()
    yield srv
    srv.stop()


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=serve_command(),
                                                              client_factory=make_client))
async def client(lsp_client: LanguageClient, remote_http):
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=CAPS, initialization_options=OPTIONS))
    await asyncio.wait_for(lsp_client.mercury_ready.wait(), 120)
    yield
    await lsp_client.shutdown_session()


async def switched(client: LanguageClient, settings: dict):
    """Send ``settings``; the status of the engine that is ready after it."""
    seen = len(client.mercury_status)
    client.mercury_ready.clear()
    configure(client, settings)
    await asyncio.wait_for(client.mercury_ready.wait(), 120)
    states = [s.state for s in client.mercury_status[seen:]]
    assert states == ["loading", "ready"], states
    return client.mercury_status[-1].engine


async def test_backend_setting_switches_local_remote_local(client: LanguageClient, remote_http):
    assert client.mercury_status[-1].engine.device == "cpu"
    _, _, local_item = await find_suggestion(client, "file:///work/switch_local.py")

    remote = await switched(client, REMOTE)
    assert remote.device == "remote" and str(HTTP_PORT) in remote.model
    _, _, item = await find_suggestion(client, "file:///work/switch_remote.py")
    assert item.insert_text  # the same tiny model behind HTTP: it suggests too
    stats = await client.protocol.send_request_async("mercury/stats", {})
    assert stats.engine.device == "remote" and stats.counters.errors == 0

    back = await switched(client, OPTIONS)
    assert back.device == "cpu"
    _, _, again = await find_suggestion(client, "file:///work/switch_back.py")
    assert again.insert_text == local_item.insert_text  # the local model answers as before
    assert remote_http.alive
    assert not [m for m in client.messages if m.type == lsp.MessageType.Error]
