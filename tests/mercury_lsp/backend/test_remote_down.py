"""A remote backend that is down: "no suggestion" and one ``window/showMessage`` per outage,
never a crash; once the server is up, suggestions come back (and one message says so)."""

from __future__ import annotations

import asyncio
import json

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.mercury_lsp.server.test_lsp import CAPS, TEXT, inline, make_client, open_doc
from tests.support.http import LiveServer, free_port
from tests.support.server import serve_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

HTTP_PORT = free_port()  # nothing listens there until the test starts a server
BACKEND = {"backend": {"url": f"http://127.0.0.1:{HTTP_PORT}", "api": "mercury", "timeoutMs": 2000}}


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(
    server_command=serve_command("--settings", json.dumps(BACKEND)), client_factory=make_client))
async def client(lsp_client: LanguageClient, tiny_model):
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=CAPS, initialization_options={"syntaxGuard": "off", "maxTokens": 16}))
    await asyncio.wait_for(lsp_client.mercury_ready.wait(), 120)
    yield
    await lsp_client.shutdown_session()


def backend_messages(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages if "remote backend" in m.message]


async def test_outage_is_reported_once_and_recovery_too(client: LanguageClient, tiny_model):
    uri = "file:///work/remote_down.py"
    open_doc(client, uri, TEXT)
    for _ in range(3):
        assert not (await inline(client, uri, 4, 12)).items
    stats = await client.protocol.send_request_async("mercury/stats", {})
    assert stats.counters.errors == 3
    (down,) = backend_messages(client)  # the start-up probe or the first request: one message
    assert "failed" in down
    srv = LiveServer(model=tiny_model, port=HTTP_PORT).start().ready()
    try:
        await inline(client, uri, 4, 12)  # answered (empty or not) by the server
        stats = await client.protocol.send_request_async("mercury/stats", {})
        assert stats.counters.errors == 3
        messages = backend_messages(client)
        assert len(messages) == 2 and "answers again" in messages[1]
    finally:
        srv.stop()
