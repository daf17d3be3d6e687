"""The daemon never outlives its client: a stdio daemon ends when its input closes or when the
client process (``initialize``'s ``processId``) dies, even with a request in flight; a TCP
connection that drops releases its session (issue 18)."""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
import weakref

import pytest

from benchmarks.common.jsonrpc import AsyncLspClient
from mercury_lsp.backend.local import local_client
from mercury_lsp.config import parse_settings
from mercury_lsp.engine_client import CancelToken
from mercury_lsp.server import transport
from tests.support.server import PROBE_TEXT, TINY_MODEL_DIR, serve_command

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and pipes")

EXIT_TIMEOUT_S = 30  # a busy CI machine; the daemon itself exits at once (Linux) or within CLIENT_POLL_S
SETTLE_TIMEOUT_S = 180  # a first in-process import of the engine and a model load on a busy machine
NO_SHUTDOWN_EXIT = 1  # LSP: ``exit`` (or the end of input) without ``shutdown`` first


async def started(*, process_id: int | None = None) -> AsyncLspClient:
    c = await AsyncLspClient.start(*serve_command(), stderr=asyncio.subprocess.DEVNULL)
    await c.request("initialize", {"processId": process_id, "rootUri": None, "capabilities": {},
                                   "initializationOptions": {}})
    c.notify("initialized", {})
    await c.wait_notification("mercury/status", lambda p: p["state"] == "ready")
    c.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///a.py", "languageId": "python",
                                                       "version": 1, "text": PROBE_TEXT}})
    return c


def busy(c: AsyncLspClient, n: int = 8) -> None:
    """Requests left in flight."""
    for line in range(n):
        c.request_future("textDocument/inlineCompletion", {
            "textDocument": {"uri": "file:///a.py"}, "position": {"line": line, "character": 0},
            "context": {"triggerKind": 1}})


@pytest.mark.asyncio
@pytest.mark.parametrize("in_flight", [False, True], ids=["idle", "busy"])
async def test_stdio_daemon_exits_when_its_input_closes(tiny_model, in_flight):
    c = await started()
    try:
        if in_flight:
            busy(c)
        c.proc.stdin.close()
        assert await asyncio.wait_for(c.proc.wait(), EXIT_TIMEOUT_S) == NO_SHUTDOWN_EXIT
    finally:
        if c.proc.returncode is None:
            c.proc.kill()


@pytest.mark.asyncio
async def test_stdio_daemon_exits_when_its_client_process_dies(tiny_model):
    """The client dies but its pipe stays open (another process inherited it): ``processId``."""
    client = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    c = None
    try:
        c = await started(process_id=client.pid)
        busy(c)
        client.kill()
        client.wait()
        assert await asyncio.wait_for(c.proc.wait(), EXIT_TIMEOUT_S) == NO_SHUTDOWN_EXIT  # stdin is still open
    finally:
        for proc in (client, c.proc if c is not None else None):
            if proc is not None and proc.returncode is None:
                proc.kill()


@pytest.mark.asyncio
async def test_a_dropped_tcp_connection_releases_its_session(tiny_model, monkeypatch):
    sessions: list[weakref.ref] = []
    closed = asyncio.Event()
    real_build = transport.build_server

    def build(*args):
        server = real_build(*args)
        sessions.append(weakref.ref(server))
        real_drop = server.drop
        server.drop = lambda: (real_drop(), closed.set())  # the connection's end
        return server

    monkeypatch.setattr(transport, "build_server", build)
    base, _ = parse_settings({"model": str(TINY_MODEL_DIR), "dtype": "float32", "threads": 1})
    engine, listening = local_client(), asyncio.get_running_loop().create_future()
    daemon = asyncio.ensure_future(transport.run_tcp(base, "127.0.0.1", 0, engine=engine, listening=listening))
    try:
        _, port = await asyncio.wait_for(listening, SETTLE_TIMEOUT_S)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)

        def send(message: dict) -> None:
            body = json.dumps(message).encode()
            writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": "file:///big.py", "languageId": "python", "version": 1, "text": PROBE_TEXT * 2000}}})
        for line in range(8):  # left in flight
            send({"jsonrpc": "2.0", "id": 2 + line, "method": "textDocument/inlineCompletion", "params": {
                "textDocument": {"uri": "file:///big.py"}, "position": {"line": line, "character": 0},
                "context": {"triggerKind": 1}}})
        await writer.drain()
        await reader.readuntil(b"\r\n\r\n")  # the initialize response: the session exists
        writer.transport.abort()  # the client vanishes (no shutdown, no exit)
        await asyncio.wait_for(closed.wait(), EXIT_TIMEOUT_S)
        # Every task but the daemon's ends: the connection's, its requests, a load it was waiting on.
        others = asyncio.all_tasks() - {asyncio.current_task(), daemon}
        _, pending = await asyncio.wait(others, timeout=SETTLE_TIMEOUT_S)
        assert not pending, pending
        await engine.run(lambda s: None, CancelToken())  # the jobs it left on the engine's worker are done
        gc.collect()
        assert len(sessions) == 1 and sessions[0]() is None
    finally:
        daemon.cancel()
        engine.close()
