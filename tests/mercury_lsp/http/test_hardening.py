"""The HTTP API against what an outside campaign sent it (issue 27): header floods, wrong keys
met early, deep JSON, lax types, a full queue met by a stream, usage over ``max_tokens``, and
schema-valid requests the handlers refused. In-process (the app on a recording backend) where the
HTTP layer alone decides, a live ``mercury-lsp http`` where uvicorn's protocol does."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import httpx
import pytest

from mercury_lsp.backend.base import QueueLimits
from mercury_lsp.http.app import build_app
from mercury_lsp.http.settings import HttpSettings
from tests.support.http import LiveServer, recording

KEY = "k" * 8 + "0123456789abcdef"
LIMITS = {"maxTokens": 64, "headerTimeoutS": 20.0}
FLOOD_BYTES = 40 * 1024 * 1024  # the campaign sent 400 MB; 40 MB shows the same in a tenth of the time
FLOOD_GROWTH_MB = 8.0  # a bounded head costs the server nothing it keeps (it grew by the flood's size)


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


@pytest.fixture(scope="module")
def keyed(tiny_model, tmp_path_factory):
    key_file = tmp_path_factory.mktemp("key") / "api-key"
    key_file.write_text(KEY + "\n")
    srv = LiveServer("--api-key-file", str(key_file), "--limits", json.dumps(LIMITS), model=tiny_model).start().ready()
    yield srv
    srv.stop()


def _address(srv) -> tuple[str, int]:
    host, port = srv.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def _read_status(sock: socket.socket, timeout: float) -> int | None:
    sock.settimeout(timeout)
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    except (TimeoutError, ConnectionError):
        pass
    line = data.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) >= 2 and line[1].isdigit() else None


# ---------------------------------------------------------------------------- F2: the head, bounded
def test_a_header_flood_is_refused_with_431_as_it_arrives(keyed):
    before = rss_mb(keyed.pid)
    sock = socket.create_connection(_address(keyed), timeout=30)
    sent = 0
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n")
    line = b"X-Flood: " + b"a" * 1000 + b"\r\n"
    block = line * 64
    try:
        while sent < FLOOD_BYTES:
            sock.sendall(block)
            sent += len(block)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server stopped reading: what the fix does
    status = _read_status(sock, 30)
    grown = rss_mb(keyed.pid) - before
    sock.close()
    assert status == 431, (status, sent)  # was 401, once the whole flood was read
    assert grown < FLOOD_GROWTH_MB, f"RSS grew by {grown:.1f} MB over a {sent / 2**20:.0f} MB flood"
    assert httpx.get(keyed.url + "/health").status_code == 200


def test_a_single_endless_header_line_is_refused(keyed):
    sock = socket.create_connection(_address(keyed), timeout=30)
    sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Long: ")
    try:
        for _ in range(64):
            sock.sendall(b"b" * 65536)
    except (BrokenPipeError, ConnectionResetError):
        pass
    assert _read_status(sock, 30) == 431
    sock.close()


def test_a_long_request_line_is_refused(keyed):
    sock = socket.create_connection(_address(keyed), timeout=30)
    sock.sendall(b"GET /" + b"p" * 200_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert _read_status(sock, 30) == 414
    sock.close()


def test_a_wrong_key_is_refused_before_the_headers_end(keyed):
    """The key is checked when its header has arrived (httptools hands a header over when the
    next one starts): a client that sends a wrong one, then floods or stalls, is answered at
    once (it was read to the end of its head, or waited for the header timeout and got nothing)."""
    sock = socket.create_connection(_address(keyed), timeout=30)
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer not-the-key\r\nX-Flood: a")
    t0 = time.monotonic()
    assert _read_status(sock, 10) == 401
    assert time.monotonic() - t0 < 10
    sock.close()
    ok = httpx.get(keyed.url + "/v1/models", headers={"Authorization": f"Bearer {KEY}"})
    assert ok.status_code == 200


# ---------------------------------------------------------------------------- F9: usage
@pytest.mark.parametrize("max_tokens", [1, 8, 64])
def test_usage_never_counts_more_than_max_tokens(keyed, max_tokens):
    auth = {"Authorization": f"Bearer {KEY}"}
    for i in range(6):  # a prompt ending in a space: the boundary token is healed (it counted one more)
        body = {"prompt": f"def f{i}(x):\n    return ", "max_tokens": max_tokens, "seed": i, "temperature": 1.0}
        r = httpx.post(keyed.url + "/v1/completions", json=body, headers=auth, timeout=60).json()
        usage = r["usage"]
        assert usage["completion_tokens"] <= max_tokens, r
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
        chunks = []
        with httpx.stream("POST", keyed.url + "/v1/completions", json={**body, "stream": True}, headers=auth,
                          timeout=60) as s:
            for line in s.iter_lines():
                if line.startswith("data: {"):
                    chunks.append(json.loads(line[6:]))
        assert chunks[-1]["usage"] == usage  # streamed or not, the same count
        assert "".join(c["choices"][0]["text"] for c in chunks) == r["choices"][0]["text"]


# ---------------------------------------------------------------------------- in-process: the app alone
async def _client(**queue):
    backend = await recording()
    if queue:
        backend.admission.max_running = queue["max_running"]
        backend.admission.max_waiting = queue["max_waiting"]
    app = build_app(backend, HttpSettings(queue=QueueLimits(**queue)) if queue else HttpSettings())
    return backend, httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


@pytest.mark.asyncio
async def test_json_nested_1000_deep_is_400():
    backend, c = await _client()
    async with c:
        for path in ("/v1/completions", "/v1/edit/completions", "/v1/next-edit"):
            for body in (b'{"prompt": ' + b"[" * 1000 + b"]" * 1000 + b"}", b"[" * 100_000,
                         b'{"x": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"}"):
                r = await c.post(path, content=body, headers={"Content-Type": "application/json"})
                assert r.status_code == 400, (path, r.text)  # was 500 (RecursionError) on an unknown field
                assert r.json()["error"]["type"] == "invalid_request_error"
    await backend.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("field,value", [("single_line", 0), ("single_line", "true"), ("stream", 1),
                                         ("max_tokens", "8"), ("temperature", "0.5"), ("seed", True)])
async def test_types_are_strict(field, value):
    backend, c = await _client()
    async with c:
        r = await c.post("/v1/completions", json={"prompt": "x = ", field: value})
        assert r.status_code == 400, (field, value, r.text)
        ok = await c.post("/v1/completions", json={"prompt": "x = ", "max_tokens": 8.0})  # 8.0 is an integer
        assert ok.status_code == 200, ok.text
    await backend.close()


@pytest.mark.asyncio
async def test_a_full_queue_answers_429_before_a_stream_starts():
    backend = await recording(block=True)
    backend.admission.max_running, backend.admission.max_waiting = 1, 0
    backend.admission._sem = asyncio.Semaphore(1)
    app = build_app(backend, HttpSettings())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        first = asyncio.ensure_future(c.post("/v1/completions", json={"prompt": "x = "}))
        await asyncio.to_thread(backend.started.wait, 30)
        r = await c.post("/v1/completions", json={"prompt": "y = ", "stream": True})
        assert r.status_code == 429, r.text  # was 200 with an error event in the body
        assert r.headers["retry-after"] and r.json()["error"]["code"] == "queue_full"
        first.cancel()
    await backend.close()


# ---------------------------------------------------------------------------- F10: schema and behaviour agree
@pytest.mark.asyncio
async def test_schema_valid_requests_are_accepted():
    backend, c = await _client()
    async with c:
        edit = await c.post("/v1/edit/completions", json={"messages": [{"role": "user", "content": ""}]})
        assert edit.status_code == 200, edit.text  # was 400 (no <|code_to_edit|> section)
        plain = await c.post("/v1/edit/completions", json={"messages": [{"role": "user", "content": "x = 1\n"}]})
        assert plain.status_code == 200 and plain.json()["choices"][0]["message"]["content"].startswith("x = 1\n")
        ne = await c.post("/v1/next-edit", json={"files": [{"uri": "file:///a.py", "text": "a = 1\n"}]})
        assert ne.status_code == 200 and ne.json()["edits"] == [], ne.text  # was 400 (no edit to follow)
        far = await c.post("/v1/next-edit", json={"files": [{"uri": "a", "text": "x\n"}],
                                                  "cursor": {"line": 99, "character": 99}})
        assert far.status_code == 200, far.text  # clamped, as LSP positions are
        twice = await c.post("/v1/next-edit", json={"files": [{"uri": "a", "text": "x\n"}, {"uri": "a", "text": "y\n"}]})
        assert twice.status_code == 200, twice.text
        none = await c.post("/v1/edit/completions", json={"messages": [{"role": "system", "content": "x"}]})
        assert none.status_code == 400  # the schema asks for a user message
        many = await c.post("/v1/edit/completions", json={"messages": [{"role": "user", "content": "x"}],
                                                          "max_tokens": 10_000})
        assert many.status_code == 400  # past the maximum the document states (was cut to it: 200)
    await backend.close()


@pytest.mark.asyncio
async def test_the_document_describes_what_is_checked():
    backend, c = await _client()
    async with c:
        doc = (await c.get("/openapi.json")).json()
    await backend.close()
    schemas = doc["components"]["schemas"]
    ok = doc["paths"]["/v1/completions"]["post"]["responses"]["200"]["content"]
    sse = ok["text/event-stream"]
    data = sse["schema"]["properties"]["data"]  # OpenAPI 3.1: the schema of one event
    chunk, done = data["anyOf"]
    assert chunk["contentSchema"]["$ref"].endswith("/CompletionResponse") and done == {"const": "[DONE]"}
    messages = schemas["EditRequest"]["properties"]["messages"]
    assert messages["contains"]["properties"]["role"]["const"] == "user" and messages["minContains"] == 1
    assert schemas["CompletionRequest"]["properties"]["single_line"]["type"] == "boolean"
    for code in ("414", "431"):
        assert code in doc["paths"]["/v1/completions"]["post"]["responses"]
