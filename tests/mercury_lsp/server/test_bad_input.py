"""Bad input over the raw protocol: each gets a proper error or an empty result, and the server
keeps serving (each test ends with a good request)."""

from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_asyncio

from benchmarks.common.jsonrpc import AsyncLspClient, RpcError
from tests.support.server import PROBE_TEXT, probe_positions, serve_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

INVALID_PARAMS, SERVER_NOT_INITIALIZED, INVALID_REQUEST, PARSE_ERROR = -32602, -32002, -32600, -32700


def inline_params(uri: str, line: int, character: int) -> dict:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character},
            "context": {"triggerKind": 1}}


def open_doc(c: AsyncLspClient, uri: str, text: str, language: str = "python") -> None:
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": 1,
                                                       "text": text}})


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tiny_model):
    c = await AsyncLspClient.start(*serve_command())
    # A request before `initialize` is refused, and the server keeps going.
    with pytest.raises(RpcError) as err:
        await c.request("textDocument/inlineCompletion", inline_params("file:///x.py", 0, 0))
    assert err.value.code == SERVER_NOT_INITIALIZED
    await c.initialize({"syntaxGuard": "off", "maxTokens": 16},
                       capabilities={"general": {"positionEncodings": ["utf-8", "utf-16"]},
                                     "textDocument": {"inlineCompletion": {}}})
    await c.wait_notification("mercury/status", lambda p: p["state"] in ("ready", "error"))
    open_doc(c, "file:///good.py", PROBE_TEXT)
    c.good = None
    for line, col in probe_positions():
        result = await c.request("textDocument/inlineCompletion", inline_params("file:///good.py", line, col))
        if result["items"]:
            c.good = (line, col, result)
            break
    assert c.good is not None
    yield c
    await c.shutdown()


async def still_serving(c: AsyncLspClient) -> None:
    line, col, expected = c.good
    assert await c.request("textDocument/inlineCompletion", inline_params("file:///good.py", line, col)) == expected


async def test_utf8_negotiated_and_unknown_uri(server: AsyncLspClient):
    result = await server.request("textDocument/inlineCompletion", inline_params("file:///nope.py", 0, 0))
    assert result == {"items": []}
    await still_serving(server)


async def test_position_past_end_and_inside_a_character(server: AsyncLspClient):
    open_doc(server, "file:///pos.py", "x = '😀'\n")
    for line, col in [(50, 0), (0, 6)]:  # line past the end; column 6 is inside the 4-byte emoji (UTF-8)
        with pytest.raises(RpcError) as err:
            await server.request("textDocument/inlineCompletion", inline_params("file:///pos.py", line, col))
        assert err.value.code == INVALID_PARAMS
    # A column past the end of a line is clamped (LSP), not an error.
    assert "items" in await server.request("textDocument/inlineCompletion", inline_params("file:///pos.py", 0, 99))
    await still_serving(server)


async def test_surrogate_pair_split_in_utf16(tiny_model):
    c = await AsyncLspClient.start(*serve_command())
    try:
        await c.initialize({})  # offers utf-16 only
        open_doc(c, "file:///s.py", "x = '😀'\n")
        with pytest.raises(RpcError) as err:
            await c.request("textDocument/inlineCompletion", inline_params("file:///s.py", 0, 6))
        assert err.value.code == INVALID_PARAMS
        assert await c.request("mercury/stats") is not None
    finally:
        assert await c.shutdown() == 0


async def test_huge_and_binary_documents(server: AsyncLspClient):
    big = PROBE_TEXT * (5 * 1024 * 1024 // len(PROBE_TEXT) + 1)
    assert len(big) > 5 * 1024 * 1024
    open_doc(server, "file:///big.py", big)
    line = big.count("\n") - 1
    result = await server.request("textDocument/inlineCompletion", inline_params("file:///big.py", line, 10))
    assert "items" in result
    server.notify("textDocument/didChange", {"textDocument": {"uri": "file:///big.py", "version": 2},
                                             "contentChanges": [{"range": {"start": {"line": 3, "character": 0},
                                                                           "end": {"line": 3, "character": 0}},
                                                                 "text": "# edit\n"}]})
    open_doc(server, "file:///bin.dat", "\x00\x01\x02PNG\xff\xfe" * 100, language="plaintext")
    result = await server.request("textDocument/inlineCompletion", inline_params("file:///bin.dat", 0, 3))
    assert result == {"items": []}
    await still_serving(server)


async def test_malformed_params_and_malformed_json(server: AsyncLspClient):
    for params in ({"textDocument": {"uri": "file:///good.py"}}, "garbage",
                   {"textDocument": {"uri": 5}, "position": {"line": -1, "character": 0}, "context": {}}):
        with pytest.raises(RpcError) as err:
            await server.request("textDocument/inlineCompletion", params)
        assert err.value.code == INVALID_PARAMS
    server.send_raw(b"{not json")
    error = await server.wait_notification("$/error")  # id null: the client sees it as unsolicited
    assert error["code"] == PARSE_ERROR
    server.notify("textDocument/didChange", {"textDocument": "bad"})  # a bad notification is dropped
    with pytest.raises(RpcError) as err:
        await server.request("no/such/method", {})
    assert err.value.code == -32601
    await still_serving(server)


async def test_shutdown_then_exit(tiny_model):
    c = await AsyncLspClient.start(*serve_command())
    await c.initialize({})
    assert await c.request("shutdown") is None
    with pytest.raises(RpcError) as err:
        await c.request("textDocument/inlineCompletion", inline_params("file:///x.py", 0, 0))
    assert err.value.code == INVALID_REQUEST
    c.notify("exit")
    assert await asyncio.wait_for(c.proc.wait(), 30) == 0


async def test_tcp_transport(tiny_model):
    proc = await asyncio.create_subprocess_exec(*serve_command("--tcp", "127.0.0.1:0"),
                                                stderr=asyncio.subprocess.PIPE)
    try:
        line = (await asyncio.wait_for(proc.stderr.readline(), 60)).decode()
        assert "listening on" in line
        port = int(line.rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        body = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}'
        writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        assert b'"inlineCompletionProvider"' in await reader.readexactly(length)
        writer.close()
    finally:
        proc.terminate()
        await proc.wait()


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("stdio pipes")
