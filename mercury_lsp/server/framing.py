"""The LSP base protocol's framing (``Content-Length: N\\r\\n\\r\\n`` + N bytes), read so that no
input can kill the reader or leave it deaf.

* Header blocks and bodies are bounded (``max_header_bytes``, ``max_message_bytes``); the
  buffer never holds more than one bounded frame plus one read chunk.
* ``Content-Length`` is parsed strictly: ASCII digits only, one value.
* A bad frame becomes one ``Reject`` (answered with the frame's id when it can be read), and the
  reader resynchronises on the next ``Content-Length`` header instead of waiting for bytes that
  will never come. A length that is too large swallows the next frame's header: the body is
  cut where that header starts. A frame whose length lied and that is followed by nothing is
  ended when the sender stalls and the bytes held form one complete JSON value.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from dataclasses import dataclass

from mercury_lsp.server.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    Reject,
    decode_body,
    is_complete_json,
    scan_id,
)

log = logging.getLogger("mercury_lsp")

READ_CHUNK = 1 << 16
# A sender that stops for this long with a bad frame's bytes forming one complete JSON value is
# not going to send the rest: the frame is answered instead of waiting forever.
STALL_S = 0.5
MAX_LENGTH_DIGITS = 12  # more than any allowed message size

# Said to whoever sent it: most often a person who typed into `mercury-lsp serve` in a terminal.
MALFORMED_HEADER = ("malformed header line (an LSP message starts with 'Content-Length: N'; this server "
                    "talks to an editor, not to a terminal: `mercury-lsp editors` says how to set one up)")

_HEADER_END = re.compile(rb"\r?\n\r?\n")
_HEADER_LINE = re.compile(rb"([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*:[ \t]*(.*?)[ \t]*")
_HEADER_START = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_KEEP = len(b"content-length:") + 8  # bytes kept while scanning (a header split across reads)


@dataclass(frozen=True)
class FrameLimits:
    max_header_bytes: int = 8 * 1024  # a whole header block (LSP sends two short lines)
    max_message_bytes: int = 64 * 1024 * 1024  # one body (an 8 MiB document, JSON-escaped, fits)
    # A person typing at a terminal (stdin a TTY), not an editor: a pause ends a bad frame, so a
    # typed line is answered at once instead of when the input ends.
    interactive: bool = False
    # False: a bad frame is answered at once, without reading on to the next frame (a connection
    # that is closed after it: a TCP client not yet accepted, ``server.access.PreAuth``).
    resync: bool = True


class FrameReader:
    """Reads frames from an ``asyncio.StreamReader``: ``await next()`` gives a decoded message
    (dict or list), a ``Reject`` for a bad frame, or None at the end of input."""

    def __init__(self, reader: asyncio.StreamReader, limits: FrameLimits | None = None,
                 stall_s: float = STALL_S) -> None:
        self._reader = reader
        self.limits = limits or FrameLimits()
        self._stall_s = stall_s
        self._buf = bytearray()
        self._eof = False

    async def _fill(self, stall: bool) -> str:
        """Read one chunk: "data", "eof", or "stall" (nothing for ``stall_s``; only if ``stall``)."""
        if self._eof:
            return "eof"
        try:
            if stall:
                chunk = await asyncio.wait_for(self._reader.read(READ_CHUNK), self._stall_s)
            else:
                chunk = await self._reader.read(READ_CHUNK)
        except TimeoutError:
            return "stall"
        except (ConnectionError, OSError):
            chunk = b""
        if not chunk:
            self._eof = True
            return "eof"
        self._buf += chunk
        return "data"

    async def next(self) -> dict | list | Reject | None:
        try:
            return await self._next()
        except Exception as exc:  # a reader bug must not end the connection: drop what is held
            log.error("frame could not be read: %s", type(exc).__name__)
            self._buf.clear()
            return Reject(PARSE_ERROR, "bad frame: could not be read")

    async def _next(self) -> dict | list | Reject | None:
        buf = self._buf
        while True:
            skip = len(buf) - len(buf.lstrip(b"\r\n\t "))  # stray line breaks between frames
            if skip:
                del buf[:skip]
            m = _HEADER_END.search(buf, 0, self.limits.max_header_bytes + 4)
            if m is not None:
                break
            if len(buf) > self.limits.max_header_bytes:
                return await self._recover(0, 1, f"header longer than {self.limits.max_header_bytes} bytes")
            got = await self._fill(stall=bool(buf))
            if got == "eof" and not buf:
                return None
            if got == "eof" or (got == "stall" and (self.limits.interactive or is_complete_json(bytes(buf)))):
                return self._take_all("message without a Content-Length header")
        length, problem = _content_length(bytes(buf[:m.start()]), self.limits.max_message_bytes)
        if problem == MALFORMED_HEADER and length >= 0:  # a bad line beside a good length: skip the frame
            return await self._skip(m.end(), length, problem)
        if problem == MALFORMED_HEADER:  # perhaps no header at all: the frame starts at 0
            return await self._recover(0, 1, problem, m.end())
        if problem is not None:
            return await self._recover(m.end(), m.end(), problem)
        del buf[:m.end()]
        while len(buf) < length:
            got = await self._fill(stall=True)
            if got == "eof":
                return None  # the peer went away mid-message: nothing to answer
            if got == "stall" and ((inner := _HEADER_START.search(buf, 1)) or is_complete_json(bytes(buf))):
                end = inner.start() if inner else len(buf)
                raw = bytes(buf[:end])
                del buf[:end]
                return _reject_for(raw, "Content-Length larger than the body")
        body = bytes(buf[:length])
        decoded = decode_body(body)
        if not isinstance(decoded, Reject) or decoded.code != PARSE_ERROR:
            del buf[:length]
            return decoded
        # The body does not parse: either its length lied (too large: the next header is inside;
        # too short: its tail follows), or it is bad in itself.
        end = _json_end(body)
        if end is not None and end < len(body):  # one value, then the start of the next frame
            del buf[:end]
            return _reject_for(body[:end], "Content-Length larger than the body")
        inner = _HEADER_START.search(body, 1)
        if inner is not None:
            del buf[:inner.start()]
            return _reject_for(body[:inner.start()], "Content-Length larger than the body")
        rest = bytes(buf[length:length + _KEEP]).lstrip()
        if not rest or _HEADER_START.match(rest) or b"content-length:".startswith(rest.lower()):
            del buf[:length]
            return decoded
        return await self._recover(0, length, "Content-Length smaller than the body")

    def _take_all(self, reason: str) -> Reject:
        raw = bytes(self._buf)
        self._buf.clear()
        return _reject_for(raw, reason)

    @staticmethod
    def _complete(held: bytes, body_from: int | None, start: int) -> bool:
        """Whether the bytes held (or those after a header block) form one complete JSON value."""
        return is_complete_json(held) or (body_from is not None and is_complete_json(held[max(0, body_from - start):]))

    async def _skip(self, body_start: int, length: int, reason: str) -> Reject | None:
        """Drop a frame whose header block is bad but declares its length: answered as soon as
        its body is in (with the body's id), reading goes on right after it."""
        buf = self._buf
        while len(buf) < body_start + length:
            got = await self._fill(stall=True)
            if got == "eof":
                return None
            if got == "stall" and _HEADER_START.search(buf, body_start):  # the length lied too
                return await self._recover(0, body_start, reason, body_start)
        raw = bytes(buf[body_start:body_start + length])
        del buf[:body_start + length]
        return Reject(INVALID_REQUEST, f"bad frame: {reason}", _reject_for(raw, reason).id)

    async def _recover(self, start: int, scan_from: int, reason: str, body_from: int | None = None) -> Reject:
        """Drop a bad frame: its bytes run from ``buf[start]`` to the next ``Content-Length``
        header (searched from ``scan_from``), the end of input, or a stall after a complete JSON
        value (from ``body_from`` on, where a header block ended). Returns the frame's Reject,
        with its id when one can be read."""
        buf, cap = self._buf, self.limits.max_message_bytes
        if not self.limits.resync:
            held = bytes(buf[start:start + cap])
            buf.clear()
            return _reject_for(held, reason)
        raw = bytearray()
        del buf[:start]
        pos = max(0, scan_from - start)
        while True:
            m = _HEADER_START.search(buf, pos)
            if m is not None:
                raw += buf[:m.start()][: max(0, cap - len(raw))]
                del buf[:m.start()]
                break
            cut = max(pos, len(buf) - _KEEP)
            raw += buf[:cut][: max(0, cap - len(raw))]
            del buf[:cut]
            pos = 0
            got = await self._fill(stall=True)
            if got == "eof" or (got == "stall" and (self.limits.interactive
                                                    or self._complete(bytes(raw + buf), body_from, start))):
                raw += buf[: max(0, cap - len(raw))]
                buf.clear()
                break
        if body_from is not None and (after := bytes(raw[max(0, body_from - start):])).strip():
            if (msg_id := _reject_for(after, reason).id) is not None:
                return Reject(INVALID_REQUEST, f"bad frame: {reason}", msg_id)
        return _reject_for(bytes(raw), reason)


def _content_length(header: bytes, limit: int) -> tuple[int, str | None]:
    """The body length a header block declares, or a problem (safe to show: header text only).
    A block with a malformed line gives MALFORMED_HEADER, with the length its Content-Length
    line declares (-1: none): the frame can still be skipped whole."""
    length = None
    malformed = False
    for line in re.split(rb"\r?\n", header):
        m = _HEADER_LINE.fullmatch(line)
        if m is None:
            malformed = True
            continue
        if m.group(1).lower() != b"content-length":
            continue
        value = m.group(2)
        if not value.isdigit() or len(value) > MAX_LENGTH_DIGITS:
            shown = value[:24].decode("ascii", "replace")
            return 0, f"invalid Content-Length {shown!r} (expected a byte count)"
        if length is not None and int(value) != length:
            return 0, "conflicting Content-Length headers"
        length = int(value)
    if malformed:
        return (length if length is not None and length <= limit else -1), MALFORMED_HEADER
    if length is None:
        return 0, "message without a Content-Length header"
    if length > limit:
        return 0, f"message of {length} bytes is over the limit of {limit} bytes"
    return length, None


def _json_end(data: bytes) -> int | None:
    """Byte offset where the JSON value at the start of ``data`` ends, if one does."""
    text = data.decode("utf-8", "surrogateescape")
    start = len(text) - len(text.lstrip())
    try:
        _, end = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    return len(text[:end].encode("utf-8", "surrogateescape"))


def _reject_for(raw: bytes, reason: str) -> Reject:
    """One error for a bad frame: with the frame's id when the bytes show one."""
    decoded = decode_body(raw.strip()) if raw.strip() else None
    msg_id = None
    if isinstance(decoded, dict):
        msg_id = decoded.get("id")
        if not (isinstance(msg_id, int | str) and not isinstance(msg_id, bool)):
            msg_id = None
    elif isinstance(decoded, Reject):
        msg_id = decoded.id
    else:
        msg_id = scan_id(raw)
    code = INVALID_REQUEST if isinstance(decoded, dict) else PARSE_ERROR
    return Reject(code, f"bad frame: {reason}", msg_id)
