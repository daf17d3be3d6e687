"""``mercury-lsp http --lsp HOST:PORT``: the language server in the HTTP server's process, on the
same loaded engine (its infills join the HTTP requests' batches), over a raw TCP connection."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from tests.support.http import LiveServer, free_port
from tests.support.server import PROBE_TEXT, probe_positions
from tests.support.settings import MODEL_DRAFTS_RAW

pytestmark = pytest.mark.asyncio


class TcpLsp:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer, self.next_id = reader, writer, 0

    def send(self, method: str, params, request: bool = True) -> int | None:
        msg: dict = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            msg["id"] = self.next_id
        body = json.dumps(msg).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return msg.get("id")

    async def read(self) -> dict:
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(await self.reader.readexactly(length))

    async def until(self, pred) -> dict:
        while True:
            msg = await asyncio.wait_for(self.read(), 120)
            if msg.get("method") == "workspace/configuration" or "window/workDoneProgress/create" == msg.get("method"):
                self.writer.write(_reply(msg["id"], [None] if msg["method"] == "workspace/configuration" else None))
            if pred(msg):
                return msg


def _reply(msg_id, result) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def test_lsp_and_http_share_one_engine(tiny_model):
    port = free_port()
    srv = LiveServer("--lsp", f"127.0.0.1:{port}", model=tiny_model).start().ready()
    try:
        srv.wait_for("mercury-lsp: listening on")
        lsp = TcpLsp(*await asyncio.open_connection("127.0.0.1", port))
        rid = lsp.send("initialize", {"processId": None, "rootUri": None, "capabilities": {},
                                      "initializationOptions": {"syntaxGuard": "off", "maxTokens": 16,
                                                                **MODEL_DRAFTS_RAW}})
        await lsp.until(lambda m: m.get("id") == rid)
        lsp.send("initialized", {}, request=False)
        ready = await lsp.until(lambda m: m.get("method") == "mercury/status" and m["params"]["state"] != "loading")
        assert ready["params"]["state"] == "ready"
        uri = "file:///w/probe.py"
        lsp.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": PROBE_TEXT}}, request=False)
        async with httpx.AsyncClient(base_url=srv.url, timeout=60) as http:
            found = False
            for line, col in probe_positions()[:12]:
                rid = lsp.send("textDocument/inlineCompletion", {
                    "textDocument": {"uri": uri}, "position": {"line": line, "character": col},
                    "context": {"triggerKind": 2}})
                answer, web = await asyncio.gather(
                    lsp.until(lambda m, rid=rid: m.get("id") == rid),
                    http.post("/v1/completions", json={"prompt": PROBE_TEXT[:200], "max_tokens": 8}))
                assert "error" not in answer and web.status_code == 200
                found = found or bool(answer["result"]["items"])
            assert found, "no suggestion over LSP at any probe position"
        lsp.writer.close()
    finally:
        srv.stop()
