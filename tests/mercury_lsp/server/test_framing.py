"""The framing reader and message checks, in process: every bad frame gives one Reject (with the
frame's id when it can be read) and the next good frame is read."""

from __future__ import annotations

import asyncio
import json

import pytest

from mercury_lsp.server.framing import FrameLimits, FrameReader
from mercury_lsp.server.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    Reject,
    check_message,
    public_error,
    scan_id,
)


def body(i) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "mercury/stats"}).encode()


def frame(data: bytes, length=None) -> bytes:
    return b"Content-Length: %s\r\n\r\n" % str(len(data) if length is None else length).encode() + data


async def read_all(data: bytes, eof: bool = True, limits: FrameLimits | None = None,
                   count: int | None = None) -> list:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    if eof:
        reader.feed_eof()
    frames = FrameReader(reader, limits, stall_s=0.05)
    out = []
    while count is None or len(out) < count:
        item = await asyncio.wait_for(frames.next(), 10)
        if item is None:
            break
        out.append(item)
    return out


GOOD = frame(body(2))
BAD_FRAMES = {
    "length abc": b"Content-Length: abc\r\n\r\n" + body(1),
    "length -5": b"Content-Length: -5\r\n\r\n" + body(1),
    "length 4.0e1": b"Content-Length: 4.0e1\r\n\r\n" + body(1),
    "length missing": b"Content-Type: application/vscode-jsonrpc\r\n\r\n" + body(1),
    "length +100": frame(body(1), len(body(1)) + 100),
    "length -10": frame(body(1), len(body(1)) - 10),
    "no header": body(1),
    "two lengths": b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n" + body(1),
}


@pytest.mark.parametrize("name", sorted(BAD_FRAMES))
def test_bad_length_answered_with_its_id_then_resync(name):
    out = asyncio.run(read_all(BAD_FRAMES[name] + GOOD + GOOD))
    assert len(out) == 3, out
    assert isinstance(out[0], Reject) and out[0].id == 1 and out[0].code in (INVALID_REQUEST, PARSE_ERROR)
    assert out[1] == out[2] == json.loads(body(2))


def test_length_too_large_and_then_silence_is_answered_after_a_stall():
    out = asyncio.run(read_all(frame(body(7), len(body(7)) + 100), eof=False, count=1))
    assert isinstance(out[0], Reject) and out[0].id == 7


def test_deep_nesting_and_long_header_lines():
    deep = b"[" * 5000 + b"]" * 5000
    nested = b'{"jsonrpc": "2.0", "id": 3, "method": "x", "params": ' + b'{"a": ' * 100 + b"1" + b"}" * 101
    long_header = b"X-Junk: " + b"a" * 70_000 + b"\r\n"
    out = asyncio.run(read_all(frame(deep) + GOOD + frame(nested) + long_header + GOOD + GOOD))
    assert [type(x).__name__ for x in out] == ["Reject", "dict", "Reject", "Reject", "dict", "dict"]
    assert out[0].code == PARSE_ERROR
    assert out[2].code == INVALID_REQUEST and out[2].id == 3  # decoded, but deeper than allowed


def test_json_null_is_a_bad_message_not_the_end_of_input():
    out = asyncio.run(read_all(frame(b"null") + frame(b"5") + GOOD))
    assert [type(x).__name__ for x in out] == ["Reject", "Reject", "dict"]


def test_message_size_limit():
    limits = FrameLimits(max_message_bytes=64)
    out = asyncio.run(read_all(frame(b'{"id": 9, "x": "' + b"a" * 200 + b'"}') + GOOD, limits=limits))
    assert isinstance(out[0], Reject) and "over the limit" in out[0].message
    assert out[-1] == json.loads(body(2))


def test_garbage_between_frames_and_split_reads():
    async def split() -> list:
        reader = asyncio.StreamReader()
        frames = FrameReader(reader, stall_s=0.05)
        data = GOOD + b"\x00\xffgarbage" + GOOD
        for i in range(len(data)):  # one byte at a time
            reader.feed_data(data[i:i + 1])
        reader.feed_eof()
        return [x async for x in _iterate(frames)]

    out = asyncio.run(split())
    assert out[0] == json.loads(body(2)) and out[-1] == json.loads(body(2))
    assert sum(isinstance(x, Reject) for x in out) == 1


async def _iterate(frames):
    while (item := await frames.next()) is not None:
        yield item


@pytest.mark.parametrize("message, code", [
    ([{"jsonrpc": "2.0", "id": 1, "method": "x"}], INVALID_REQUEST),
    (5, INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": 1, "method": 5}, INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": 1.5, "method": "x"}, INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": True, "method": "x"}, INVALID_REQUEST),
    ({"jsonrpc": "1.0", "id": 1, "method": "x"}, INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": 1, "method": "textDocument/didOpen", "params": {}}, INVALID_REQUEST),
    ({"jsonrpc": "2.0"}, INVALID_REQUEST),
])
def test_message_checks(message, code):
    reject = check_message(message)
    assert reject is not None and reject.code == code
    assert check_message({"jsonrpc": "2.0", "id": 1, "method": "x", "params": {}}) is None
    assert check_message({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {}}) is None


def test_scan_id_reads_top_level_ids_only():
    assert scan_id(b'{"jsonrpc": "2.0", "id": 12, "method": "x", "params": {"text": "abc') == 12
    assert scan_id(b'{"params": {"id": 5}, "id": "a\\"b"}') == 'a"b'
    assert scan_id(b'{"method": "id", "params": [{"id": 3}]') is None
    assert scan_id(b'{"id": 1.5}') is None
    assert scan_id(b'{"jsonrpc": "2.0", "id": 4') is None  # cut: may be the start of 4779
    assert scan_id(b'{"id": "ab') is None


def test_internal_errors_carry_no_traceback(caplog):
    from lsprotocol import types as lsp

    err = lsp.ResponseError(code=-32603, message="UnicodeEncodeError: 'utf-8' codec can't encode",
                            data={"traceback": ['  File "/home/me/x.py", line 1\n']})
    with caplog.at_level("ERROR"):
        public = public_error(err, 4)
    assert public.data is None and "incident" in public.message and "x.py" not in public.message
    incident = public.message.split("incident ")[1].split(";")[0]
    assert incident in caplog.text and "x.py" in caplog.text  # the details are in the log only
    plain = lsp.ResponseError(code=-32602, message="invalid params")
    assert public_error(plain, 4) is plain


@pytest.mark.parametrize("header", [
    b"Content-Length: %d\r\nNo colon here\r\n\r\n",
    b"Content-Length: %d\r\nContent\x00Type: x\r\n\r\n",
    b"No colon here\r\nContent-Length: %d\r\n\r\n",
    b"Content\x00Length: %d\r\n\r\n",
])
def test_a_bad_header_line_is_answered_without_waiting_for_the_next_frame(header):
    """Issue 27, F7: the frame was answered only when the next one came (or the input ended)."""
    data = body(9)
    out = asyncio.run(read_all(header % len(data) + data, eof=False, count=1))
    assert isinstance(out[0], Reject) and out[0].code == INVALID_REQUEST and out[0].id == 9, out
    after = asyncio.run(read_all(header % len(data) + data + GOOD, eof=False, count=2))
    assert after[1] == json.loads(body(2))  # and the next frame is read as it is
