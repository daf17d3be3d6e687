"""The tests' and benchmarks' one JSON-RPC client (benchmarks/common/jsonrpc.py): its framing core
and its record of what the server sent, without a server."""

from __future__ import annotations

import json

from benchmarks.common.jsonrpc import ERROR_NOTIFICATION, FrameReader, Inbox, encode, frame


def test_frames_split_anywhere_come_out_whole_and_in_order():
    msgs = [{"jsonrpc": "2.0", "id": 1, "result": "ü" * 300}, {"jsonrpc": "2.0", "method": "n", "params": [1]}]
    data = b"".join(encode(m) for m in msgs)
    for size in (1, 7, len(data)):
        reader = FrameReader()
        out = [m for i in range(0, len(data), size) for m in reader.feed(data[i:i + size])]
        assert out == msgs


def test_headers_are_read_as_the_protocol_allows():
    body = json.dumps({"id": 2, "result": None}).encode()
    reader = FrameReader()
    lax = b"content-length: %d\nContent-Type: application/vscode-jsonrpc\n\n" % len(body) + body
    no_length = b"X-Other: 1\r\n\r\n"  # a header block without Content-Length is skipped
    assert reader.feed(no_length + lax + frame(body)) == [{"id": 2, "result": None}] * 2


def test_the_inbox_answers_server_requests_and_keeps_the_rest():
    inbox = Inbox(on_request=lambda method, params: {"applied": True} if method == "workspace/applyEdit" else None)
    assert inbox.receive({"id": 9, "method": "workspace/applyEdit", "params": {}}) == \
        ("reply", {"jsonrpc": "2.0", "id": 9, "result": {"applied": True}})
    assert inbox.receive({"id": 3, "method": "window/workDoneProgress/create"})[1]["result"] is None
    assert inbox.receive({"method": "mercury/status", "params": {"state": "ready"}}) == ("notification", "mercury/status")
    assert inbox.receive({"id": 1, "result": 1}) == inbox.receive({"id": 1, "result": 2}) == ("response", 1)
    assert inbox.receive({"id": None, "error": {"code": -32700}}) == ("notification", ERROR_NOTIFICATION)
    assert inbox.responses_seen[1] == 2 and len(inbox.history[1]) == 2  # a second response is counted
    assert inbox.notifications["mercury/status"] == [{"state": "ready"}]
    assert inbox.notifications[ERROR_NOTIFICATION] == [{"code": -32700}]
    assert [r["method"] for r in inbox.server_requests] == ["workspace/applyEdit", "window/workDoneProgress/create"]
