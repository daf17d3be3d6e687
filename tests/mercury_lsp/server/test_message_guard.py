"""Every inbound message is read inside one guard (issue 27, finding 1): a message whose reading,
decoding or conversion fails is answered InvalidParams (a request) or logged once (a
notification), and the server goes on. Lone surrogates are invalid params wherever they are."""

from __future__ import annotations

import asyncio

import pytest
import pytest_asyncio

from benchmarks.common.jsonrpc import AsyncLspClient, RpcError
from tests.support.server import serve_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

INVALID_PARAMS = -32602
LONE = ("\ud800", "\udc00", "a\udfffb")  # json.dumps writes them as the escapes the campaign sent


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tiny_model):
    c = await AsyncLspClient.start(*serve_command())
    await c.initialize({})
    yield c
    assert await c.shutdown() == 0  # still alive, and a clean shutdown


async def alive(c: AsyncLspClient) -> None:
    assert "state" in await c.request("mercury/stats")


def did_open(uri: str, version, text: str = "x = 1\n") -> dict:
    return {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}}


def did_change(uri: str, version, start=None) -> dict:
    start = start if start is not None else {"line": 0, "character": 0}
    return {"textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": start, "end": {"line": 0, "character": 0}}, "text": "y"}]}


@pytest.mark.parametrize("lone", LONE)
async def test_a_lone_surrogate_in_a_notification_does_not_end_the_server(server: AsyncLspClient, lone):
    uri = f"file:///lone-{ord(lone[0]):x}.py"
    server.notify("textDocument/didOpen", did_open(uri, lone))  # the version
    server.notify("textDocument/didOpen", did_open(uri, 1))
    server.notify("textDocument/didChange", did_change(uri, lone))  # the version: the campaign's killer
    server.notify("textDocument/didChange", did_change(uri, 2, start=lone))  # a range's start
    server.notify("textDocument/didChange", did_change(uri, 3, start={"line": lone, "character": 0}))
    server.notify("textDocument/didClose", {"textDocument": {"uri": lone}})
    server.notify("workspace/didChangeConfiguration", {"settings": {"mercury": {"preset": lone}}})
    server.notify("$/cancelRequest", {"id": lone})
    await alive(server)
    state = await server.request("mercury/documentState", {"textDocument": {"uri": uri}})
    assert state is not None and state["version"] in (1, 2, 3)


@pytest.mark.parametrize("params", [
    {"textDocument": {"uri": "\ud800"}},
    {"textDocument": {"uri": "file:///a.py", "extra": ["\udc00"]}},
])
async def test_a_lone_surrogate_in_a_request_is_invalid_params(server: AsyncLspClient, params):
    for method in ("mercury/documentState", "textDocument/inlineCompletion", "mercury/nextEdit"):
        full = {**params, "position": {"line": 0, "character": 0}, "context": {"triggerKind": 1}}
        with pytest.raises(RpcError) as err:
            await server.request(method, full)
        assert err.value.code == INVALID_PARAMS, (method, err.value.message)
    await alive(server)


async def test_a_burst_of_bad_notifications_is_logged_not_fatal(server: AsyncLspClient):
    for i in range(50):
        server.notify("textDocument/didChange", did_change(f"file:///burst-{i}.py", "\ud800"))
    await asyncio.wait_for(alive(server), 60)

