"""Who may use a TCP daemon and what one client may change for the others (issue 18)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from benchmarks.common.jsonrpc import LspConnection
from mercury_lsp.config import parse_settings
from mercury_lsp.server.access import admit, daemon_owned, is_loopback
from tests.support.server import TcpDaemon, serve_command

TOKEN = "s3cret-token-0123456789"
LOAD_TIMEOUT_S = 60  # a model load or a start on a busy machine


def initialize_message(options: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"capabilities": {}, "initializationOptions": options}}


def test_loopback_and_tokens():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.10")
    good = initialize_message({"token": TOKEN, "maxTokens": 8})
    assert admit(good, TOKEN) is None
    assert good["params"]["initializationOptions"] == {"maxTokens": 8}  # the token is not a setting
    for options in ({"token": TOKEN[:-1] + "x"}, {}, {"token": 5}):
        reject = admit(initialize_message(options), TOKEN)
        assert reject is not None and reject.id == 1 and "authentication" in reject.message
    assert admit(initialize_message({}), None) is None  # no token wanted (loopback, no --token-file)


def test_engine_wide_settings_belong_to_the_daemon():
    base, _ = parse_settings({"preset": "fast"})
    client, _ = parse_settings({"model": "/nonexistent/x", "device": "cuda", "preset": "quality",
                                "debugLogUserCode": True, "context": {"maxContextTokens": 64}}, base)
    kept, refused = daemon_owned(client, base)
    assert set(refused) == {"model", "device", "debug_log_user_code", "context.max_context_tokens"}
    assert kept.model_key == base.model_key and not kept.debug_log_user_code
    assert kept.preset == "quality"  # per-connection settings stay the client's


def test_tcp_daemon_with_a_token(tiny_model, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    daemon = TcpDaemon("--token-file", str(token_file))
    try:
        intruder = daemon.connect()
        reply = intruder.request_message("initialize", {"capabilities": {}, "initializationOptions": {"token": "guess"}})
        assert reply["error"]["code"] == -32600
        assert intruder.wait_for(["never"], 30) is False and intruder.closed  # the connection ends

        a, b = (connect(daemon, {"token": TOKEN}) for _ in range(2))
        a.send({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration",
                "params": {"settings": {"model": "/nonexistent/x"}}})
        assert a.wait_notification("window/showMessage", lambda p: "ignored: model" in p["message"])
        assert b.request_message("mercury/stats")["result"]["state"] == "ready"  # the other client is unaffected
        assert any(b"clients are connected" in line for line in daemon.log)
        for c in (a, b):
            c.close()
    finally:
        daemon.close()


# ---------------------------------------------------------------------------- issue 18, failure 2
# A daemon on TCP without a token: these fail on the daemon before the hardening
# (benchmarks/lsp/regressions runs them against it).
def connect(daemon: TcpDaemon, options: dict) -> LspConnection:
    """A client that has initialized and waited for the model to be ready."""
    c = daemon.connect()
    reply = c.request_message("initialize", {"processId": os.getpid(), "capabilities": {}, "initializationOptions": options})
    assert "result" in reply, reply
    c.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    assert c.wait_notification("mercury/status", lambda p: p["state"] == "ready", LOAD_TIMEOUT_S)
    return c


def test_non_loopback_tcp_without_a_token_does_not_listen(tiny_model):
    proc = subprocess.Popen(serve_command("--tcp", "0.0.0.0:0"), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        first = proc.stderr.readline()  # one line: the error, or "listening on ..."
        assert b"listening" not in first, first
        assert proc.wait(LOAD_TIMEOUT_S) == 2 and b"needs --token-file" in first
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_one_client_cannot_break_the_model_or_probe_paths(tiny_model):
    daemon = TcpDaemon()
    try:
        a, b = connect(daemon, {}), connect(daemon, {})
        for path in ("/nonexistent/x", "/etc/passwd"):  # a missing path, and a file that exists
            before = len(a.notifications["window/showMessage"])
            a.send({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration",
                    "params": {"settings": {"model": path}}})
            assert a.wait_notification("window/showMessage", timeout=LOAD_TIMEOUT_S, since=before) is not None
            assert b.request_message("mercury/stats")["result"]["state"] == "ready"  # the other client still works
        for c in (a, b):
            seen = json.dumps([c.notifications, list(c.history.values())])
            assert "passwd" not in seen and "/nonexistent" not in seen and "not a file" not in seen
            c.close()
    finally:
        daemon.close()


def test_errors_sent_over_tcp_carry_no_traceback(tiny_model):
    daemon = TcpDaemon()
    try:
        c = connect(daemon, {})
        for language in ("python", "plaintext"):  # with and without a grammar
            uri = f"file:///tcp-surrogate.{language}"
            c.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": language, "version": 1, "text": "def f(a):\n    return a\n"}}})
            c.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {
                    "start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "text": "s = '\ud800'\n"}]}})
            for line in range(3):
                reply = c.request_message("textDocument/inlineCompletion", {
                    "textDocument": {"uri": uri}, "position": {"line": line, "character": 3},
                    "context": {"triggerKind": 1}}, timeout=LOAD_TIMEOUT_S)
                text = json.dumps(reply)
                assert "traceback" not in text.lower() and "data" not in reply.get("error", {}), text
                assert "result" in reply, text  # the edit was applied cleanly: nothing to fail on
        c.close()
    finally:
        daemon.close()


def test_a_lone_surrogate_token_is_refused_with_an_answer(tiny_model, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    daemon = TcpDaemon("--token-file", str(token_file))
    try:
        intruder = daemon.connect()
        reply = intruder.request_message("initialize", {"capabilities": {}, "initializationOptions": {"token": "\ud800"}})
        assert reply["error"]["code"] == -32600  # it got no answer at all (TimeoutError)
        assert daemon.proc.poll() is None
    finally:
        daemon.close()


# ---------------------------------------------------------------------------- issue 27, F5
@pytest.mark.asyncio
async def test_connections_before_initialize_are_bounded():
    """A deadline, a cap on connections waiting to initialize and a small frame limit until the
    token is checked (300 idle sockets stayed open past 45 s; 60 MB partial frames were buffered)."""
    import asyncio

    from mercury_lsp.backend.local import local_client
    from mercury_lsp.server import transport
    from mercury_lsp.server.access import PreAuth

    base, _ = parse_settings({})
    engine, listening = local_client(), asyncio.get_running_loop().create_future()
    bounds = PreAuth(timeout_s=1.0, max_connections=2, max_message_bytes=4096)
    daemon = asyncio.ensure_future(transport.run_tcp(base, "127.0.0.1", 0, TOKEN, engine=engine, listening=listening,
                                                     pre_auth=bounds))

    async def closed(reader: asyncio.StreamReader, within: float) -> bool:
        try:
            return await asyncio.wait_for(reader.read(), within) is not None  # EOF (b"" or an error frame, then EOF)
        except TimeoutError:
            return False

    try:
        _, port = await asyncio.wait_for(listening, 30)
        idle = [await asyncio.open_connection("127.0.0.1", port) for _ in range(2)]
        await asyncio.sleep(0.1)
        third_r, _ = await asyncio.open_connection("127.0.0.1", port)
        assert await closed(third_r, 0.5)  # refused at once: two are waiting already
        for r, _ in idle:
            assert await closed(r, 3.0)  # the deadline ends them
        assert bounds.waiting == 0
        r, w = await asyncio.open_connection("127.0.0.1", port)
        w.write(b"Content-Length: 60000000\r\n\r\n" + b"{" * 8192)  # a big frame before the token
        await w.drain()
        assert await closed(r, 3.0)
        r, w = await asyncio.open_connection("127.0.0.1", port)  # a client with the token still gets in
        body = json.dumps(initialize_message({"token": TOKEN})).encode()
        w.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await w.drain()
        head = await asyncio.wait_for(r.readuntil(b"\r\n\r\n"), 30)
        reply = json.loads(await r.readexactly(int(head.split(b":")[1].split(b"\r\n")[0])))
        assert "result" in reply and bounds.waiting == 0
        await asyncio.sleep(1.5)  # past the deadline: an initialized connection stays
        assert not r.at_eof()
        w.close()
    finally:
        daemon.cancel()
        engine.close()


def test_a_daemon_closes_what_never_initializes(tiny_model):
    """The campaign's cases against a real daemon: an idle socket past the deadline, and a 60 MB
    frame before the token (both were kept: 300 sockets past 45 s, 64 MiB buffered each)."""
    import socket
    import time

    from mercury_lsp.server.access import PRE_AUTH_TIMEOUT_S

    daemon = TcpDaemon()
    try:
        idle = socket.create_connection(("127.0.0.1", daemon.port), timeout=PRE_AUTH_TIMEOUT_S + 30)
        big = socket.create_connection(("127.0.0.1", daemon.port), timeout=PRE_AUTH_TIMEOUT_S + 30)
        t0 = time.monotonic()
        try:
            big.sendall(b"Content-Length: 60000000\r\n\r\n" + b"{" * (1 << 20))
        except OSError:
            pass  # closed while we wrote: what the fix does
        try:  # one error, then the end (a reset: the server closed with our bytes unread)
            while big.recv(1 << 16):
                pass
        except ConnectionResetError:
            pass
        assert time.monotonic() - t0 < PRE_AUTH_TIMEOUT_S  # refused for its size, not its time
        assert idle.recv(1) == b""  # closed at the deadline
        assert time.monotonic() - t0 < PRE_AUTH_TIMEOUT_S + 20
        assert daemon.proc.poll() is None
        c = connect(daemon, {})  # and a client still gets in
        assert c.request("mercury/stats")["state"] == "ready"
        c.close()
    finally:
        daemon.close()
