"""Security defaults and the HTTP layer's own behaviour: the key off loopback, the refusal to
start without one, a disconnect cancelling the engine request, 503 while loading."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess

import httpx
import openai
import pytest
import uvicorn

from mercury_lsp.backend.admission import Admission
from mercury_lsp.backend.base import Overloaded
from mercury_lsp.http.app import build_app
from mercury_lsp.http.security import StartupError, check_bind, is_loopback, key_matches
from mercury_lsp.http.settings import HttpSettings
from tests.support.http import MERCURY, LiveServer, recording

KEY = "k" * 8 + "0123456789abcdef"


def non_loopback_address() -> str | None:
    """An address of this machine that is not loopback (None when it has none)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
            addr = s.getsockname()[0]
    except OSError:
        return None
    return None if is_loopback(addr) else addr


def test_key_check_logic():
    assert key_matches(b"Bearer " + KEY.encode(), KEY.encode())
    assert key_matches(b"bearer " + KEY.encode(), KEY.encode())
    assert not key_matches(b"Bearer " + KEY.encode()[:-1], KEY.encode())
    assert not key_matches(b"Basic " + KEY.encode(), KEY.encode())
    assert not key_matches(None, KEY.encode())
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0")
    with pytest.raises(StartupError):
        check_bind("0.0.0.0", None)
    check_bind("0.0.0.0", KEY)
    check_bind("127.0.0.1", None)


def test_refuses_to_start_off_loopback_without_a_key():
    r = subprocess.run([MERCURY, "http", "--host", "0.0.0.0", "--port", "0"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "API key" in r.stderr


def test_short_key_file_is_refused(tmp_path):
    f = tmp_path / "key"
    f.write_text("short\n")
    r = subprocess.run([MERCURY, "http", "--api-key-file", str(f), "--port", "0"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "at least" in r.stderr


@pytest.fixture(scope="module")
def keyed_server(tiny_model, tmp_path_factory):
    key_file = tmp_path_factory.mktemp("key") / "api-key"
    key_file.write_text(KEY + "\n")
    host = non_loopback_address() or "127.0.0.1"  # off loopback when this machine has an address
    srv = LiveServer("--api-key-file", str(key_file), model=tiny_model, host=host).start().ready()
    yield srv
    srv.stop()


def test_api_key_required(keyed_server):
    url = keyed_server.url
    body = {"prompt": "x = ", "max_tokens": 4}
    missing = httpx.post(url + "/v1/completions", json=body)
    assert missing.status_code == 401 and missing.json()["error"]["code"] == "missing_api_key"
    wrong = httpx.post(url + "/v1/completions", json=body, headers={"Authorization": "Bearer " + KEY[:-1] + "x"})
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_api_key"
    assert httpx.get(url + "/v1/models").status_code == 401
    assert httpx.get(url + "/health").status_code == 200  # open: shows no user data
    # SDK clients are closed here, never by the garbage collector (see tests/mercury_lsp/http/test_api.py)
    with openai.OpenAI(base_url=url + "/v1", api_key="wrong-key-0123456789", max_retries=0) as wrong_client, \
            pytest.raises(openai.AuthenticationError):
        wrong_client.models.list()
    with openai.OpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0) as client:
        model = client.models.list().data[0].id
        assert client.completions.create(model=model, prompt="x = ", max_tokens=4).object == "text_completion"
    assert keyed_server.alive


async def serve_in_process(app) -> tuple[uvicorn.Server, asyncio.Task, str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    server = uvicorn.Server(uvicorn.Config(app, loop="none", http="httptools", log_level="warning",
                                           lifespan="off"))
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    return server, task, f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [False, True])
async def test_disconnect_cancels_the_engine_request(stream: bool):
    backend = await recording(block=True)
    server, task, url = await serve_in_process(build_app(backend, HttpSettings()))
    try:
        host, port = url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        body = json.dumps({"prompt": "x = ", "stream": stream}).encode()
        writer.write(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        assert await asyncio.to_thread(backend.started.wait, 30)
        writer.close()  # the client goes away while the engine works
        assert await asyncio.to_thread(backend.cancelled.wait, 30)
        async with httpx.AsyncClient() as c:  # the server is still up
            assert (await c.get(url + "/health")).status_code == 200
    finally:
        server.should_exit = True
        await task


@pytest.mark.asyncio
async def test_loading_model_answers_503_and_queue_full_429():
    backend = await recording(state="loading")
    app = build_app(backend, HttpSettings())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        r = await c.post("/v1/completions", json={"prompt": "x"})
        assert r.status_code == 503 and r.headers["retry-after"] and r.json()["error"]["code"] == "model_not_ready"
        health = await c.get("/health")
        assert health.status_code == 503 and health.json()["status"] == "loading"
        s = await c.post("/v1/completions", json={"prompt": "x", "stream": True})
        assert s.status_code == 503
    gate = Admission(max_running=1, max_waiting=0)
    await gate.acquire(None)
    with pytest.raises(Overloaded):
        await gate.acquire(None)
    gate.release()
