"""Regression tests for input that used to kill, deafen or desynchronise the stdio server
(issue 18). Each sends the bad input over the real protocol, then checks that the server still
answers every request, exactly once."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest
import pytest_asyncio

from benchmarks.common.jsonrpc import AsyncLspClient, RpcError
from tests.support.server import serve_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
HEALTH_CHECKS = 20  # valid requests after each bad input (the campaign's measure)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tiny_model):
    c = await AsyncLspClient.start(*serve_command())
    await c.initialize({})
    yield c
    assert await c.shutdown() == 0  # still alive, and a clean shutdown


async def healthy(c: AsyncLspClient) -> None:
    futures = [c.request_future("mercury/stats")[1] for _ in range(HEALTH_CHECKS)]
    answers = await asyncio.wait_for(asyncio.gather(*futures), 60)
    assert all("result" in a for a in answers)


async def answer(fut: asyncio.Future) -> dict:
    return await asyncio.wait_for(fut, 30)


def frame(data: bytes, length: int | str | None = None) -> bytes:
    return b"Content-Length: %s\r\n\r\n" % str(len(data) if length is None else length).encode() + data


def request_bytes(msg_id: int, method: str = "mercury/stats", params=None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()


def utf8_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def state(c: AsyncLspClient, uri: str) -> dict | None:
    return await c.request("mercury/documentState", {"textDocument": {"uri": uri}})


# ---------------------------------------------------------------------------- killers
async def test_json_nested_5000_deep_does_not_kill_the_server(server: AsyncLspClient):
    fut = server.expect(1001)
    server.send_bytes(frame(b'{"jsonrpc": "2.0", "id": 1001, "method": "x", "params": '
                            + b"[" * 5000 + b"]" * 5000 + b"}"))
    assert (await answer(fut))["error"]["code"] == PARSE_ERROR
    server.send_raw(b"[" * 5000 + b"]" * 5000)
    await healthy(server)


async def test_header_line_over_64_kib_does_not_kill_the_server(server: AsyncLspClient):
    server.send_bytes(b"X-Padding: " + b"a" * 70_000 + b"\r\n")
    await healthy(server)
    await server.wait_notification("$/error", lambda e: "header longer" in e["message"])


@pytest.mark.parametrize("length", ["abc", "-5", "4.0e1", None, "+100", "-100"])
async def test_bad_content_length_is_answered_and_the_server_resynchronises(server: AsyncLspClient, length):
    msg_id = 2000 + hash(str(length)) % 1000
    data = request_bytes(msg_id, params={"pad": "x" * 200})
    if length is None:
        raw = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + data
    elif length[0] in "+-" and length[1:].isdigit() and len(length) > 2:
        raw = frame(data, len(data) + int(length))
    else:
        raw = frame(data, length)
    fut = server.expect(msg_id)
    server.send_bytes(raw)
    await healthy(server)  # every one of the next requests is answered ...
    assert (await answer(fut))["error"]["code"] == INVALID_REQUEST  # ... and so is the bad one, once


async def test_lone_surrogate_in_did_change_keeps_the_document_in_sync(server: AsyncLspClient):
    for language in ("python", "plaintext"):  # with and without a grammar
        uri = f"file:///surrogate.{language}"
        text = "def f(a):\n    return a\n"
        server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language,
                                                                "version": 1, "text": text}})
        edits = [((0, 0), "x = 1\n"), ((1, 0), "s = '\ud800'\n"), ((2, 0), "y = 2\n")]
        model = text
        for (line, col), new in edits:
            lines = model.split("\n")
            offset = sum(len(x) + 1 for x in lines[:line]) + col
            model = model[:offset] + new + model[offset:]
        server.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {"start": {"line": ln, "character": c}, "end": {"line": ln, "character": c}},
                                "text": new} for (ln, c), new in edits]})
        # Every line of the editor's text exists on the server (the last ones did not: only the
        # edits before the surrogate were applied), and no request fails on it (it did:
        # UnicodeEncodeError, TypeError).
        for line in range(model.count("\n") + 1):
            result = await server.request("textDocument/inlineCompletion", {
                "textDocument": {"uri": uri}, "position": {"line": line, "character": 3},
                "context": {"triggerKind": 1}})
            assert "items" in result
        got = await state(server, uri)
        assert got["version"] == 2 and got["inSync"]
        assert got["sha256"] == utf8_sha(model.replace("\ud800", "\ufffd"))  # every edit applied
        assert got["utf16Length"] == len(model)  # one code unit for one: positions still agree


# ---------------------------------------------------------------------------- smaller ones
async def test_batch_gets_one_invalid_request(server: AsyncLspClient):
    before = len(server.notifications["$/error"])
    server.send_raw(b"[" + request_bytes(3001) + b"," + request_bytes(3002) + b"]")
    await healthy(server)
    errors = server.notifications["$/error"][before:]
    assert [e["code"] for e in errors] == [INVALID_REQUEST]


@pytest.mark.parametrize("message", [
    {"jsonrpc": "2.0", "id": 3101, "method": "textDocument/didOpen", "params": {}},
    {"jsonrpc": "2.0", "id": 3102, "method": 17},
    {"jsonrpc": "2.0", "id": 3103, "method": ["a"]},
])
async def test_invalid_requests_are_answered(server: AsyncLspClient, message):
    fut = server.expect(message["id"])
    server.send(message)
    assert (await answer(fut))["error"]["code"] == INVALID_REQUEST


async def test_invalid_edits_desync_once_and_a_whole_text_resyncs(server: AsyncLspClient):
    uri = "file:///edits.py"
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 5,
                                                            "text": "a = 1\n"}})

    def change(version, start, end, text="z"):
        server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [
            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "text": "b"},
            {"range": {"start": dict(zip(("line", "character"), start, strict=True)),
                       "end": dict(zip(("line", "character"), end, strict=True))}, "text": text}]})

    warnings = len(server.notifications["window/logMessage"])
    change(6, (0, -1), (0, 0))  # negative position: nothing applied, out of sync, told once
    change(7, (0, 3), (0, 2))  # reversed range: still out of sync, not told again
    change(3, (0, 0), (0, 0))  # stale version: never moves the version backwards
    got = await state(server, uri)
    assert got["version"] == 5 and not got["inSync"]  # nothing of a refused change is applied and got["sha256"] == utf8_sha("a = 1\n")
    told = [m for m in server.notifications["window/logMessage"][warnings:] if "could not be applied" in m["message"]]
    assert len(told) == 1
    result = await server.request("textDocument/inlineCompletion", {
        "textDocument": {"uri": uri}, "position": {"line": 0, "character": 5}, "context": {"triggerKind": 1}})
    assert result == {"items": []}  # no suggestion from a text the editor no longer has
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 8},
                                             "contentChanges": [{"text": "c = 3\n"}]})
    got = await state(server, uri)
    assert got["inSync"] and got["version"] == 8 and got["sha256"] == utf8_sha("c = 3\n")


async def test_did_open_with_a_version_past_int32(server: AsyncLspClient):
    uri = "file:///big-version.py"
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                            "version": 2**31, "text": "x = 1\n"}})
    got = await state(server, uri)
    assert got is not None and got["version"] == 2**31 and got["inSync"]


async def test_errors_never_carry_tracebacks(server: AsyncLspClient):
    with pytest.raises(RpcError) as err:
        await server.request("mercury/documentState", {"textDocument": {"uri": 5}})
    assert "Traceback" not in str(err.value) and "File \"" not in str(err.value)


async def test_json_null_and_scalars_do_not_end_the_stream(server: AsyncLspClient):
    for body in (b"null", b"5", b'"x"'):  # found by the fuzz suite: null once read as "end of input"
        server.send_raw(body)
    await healthy(server)
