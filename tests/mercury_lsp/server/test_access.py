"""Who may use a TCP daemon and what one client may change for the others (issue 18)."""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time

from mercury_lsp.config import parse_settings
from mercury_lsp.server.access import admit, daemon_owned, is_loopback
from tests.support.lsp_fuzz import FuzzClient
from tests.support.server import serve_command

TOKEN = "s3cret-token-0123456789"


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
    proc = subprocess.Popen(serve_command("--tcp", "127.0.0.1:0", "--token-file", str(token_file)),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    log: list[bytes] = []
    try:
        port = None
        for line in proc.stderr:
            if m := re.search(rb"listening on .*:(\d+)", line):
                port = int(m.group(1))
                break
        assert port is not None
        threading.Thread(target=lambda: log.extend(proc.stderr), daemon=True).start()

        intruder = FuzzClient.over_tcp(proc, port)
        reply = intruder.request("initialize", {"capabilities": {}, "initializationOptions": {"token": "guess"}})
        assert reply["error"]["code"] == -32600
        assert intruder.wait_for(["never"], 30) is False and intruder.closed  # the connection ends

        clients = []
        for _ in range(2):
            c = FuzzClient.over_tcp(proc, port)
            reply = c.request("initialize", {"processId": os.getpid(), "capabilities": {},
                                             "initializationOptions": {"token": TOKEN}})
            assert "result" in reply
            c.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            clients.append(c)
        a, b = clients
        a.send({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration",
                "params": {"settings": {"model": "/nonexistent/x"}}})
        deadline = time.monotonic() + 60
        while not any("ignored: model" in str(p) for m, p in a.notifications) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any("ignored: model" in str(p) for m, p in a.notifications)
        while b.request("mercury/stats")["result"]["state"] != "ready" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert b.request("mercury/stats")["result"]["state"] == "ready"  # the other client is unaffected
        assert any(b"clients are connected" in line for line in log)
        for c in clients:
            c.close()
    finally:
        proc.terminate()
        proc.wait(30)
