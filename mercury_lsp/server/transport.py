"""The JSON-RPC transport: framed messages read from stdio or a TCP connection, handled strictly
in arrival order; a request's handler takes its document snapshot before the next message is read.

``run_stdio`` and ``run_tcp`` wire one ``MercuryServer`` per connection (one model for all).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import threading

from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter

from mercury_lsp.config import Settings
from mercury_lsp.engine_client import EngineClient
from mercury_lsp.server.app import build_server
from mercury_lsp.server.protocol import MercuryProtocol
from mercury_lsp.syntax import Grammars

log = logging.getLogger("mercury_lsp")

READ_CHUNK = 1 << 16  # bytes per read from stdin: one pipe buffer


async def serve_stream(reader: asyncio.StreamReader, protocol: MercuryProtocol) -> int:
    """Read framed JSON-RPC messages and handle them in order until ``exit`` or end of input."""
    while protocol.exit_code is None:
        length = None
        while True:
            line = await reader.readline()
            if not line:
                return 0 if protocol.shut_down else 1
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii", "replace").partition(":")
            if name.strip().lower() == "content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    length = None
        if length is None or length < 0:
            log.warning("message without a valid Content-Length header skipped")
            continue
        try:
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            return 0 if protocol.shut_down else 1
        try:
            message = json.loads(body, object_hook=protocol.structure_message)
        except (json.JSONDecodeError, UnicodeDecodeError):
            protocol.send_parse_error()
            continue
        except JsonRpcException as exc:
            log.warning("unreadable notification dropped: %s", type(exc).__name__)
            continue
        try:
            protocol.handle_message(message)
        except Exception:
            log.exception("failed to handle a message")
        # Let a request's handler start (it takes its document snapshot synchronously) before
        # the next message, e.g. a didChange already buffered, is applied.
        await asyncio.sleep(0)
    return protocol.exit_code


async def _stdin_reader() -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_CHUNK)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
        return reader
    except (ValueError, OSError, NotImplementedError):
        pass
    fd = sys.stdin.fileno()

    def pump() -> None:  # daemon thread: never keeps the process alive
        while True:
            try:
                chunk = os.read(fd, READ_CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                loop.call_soon_threadsafe(reader.feed_eof)
                return
            loop.call_soon_threadsafe(reader.feed_data, chunk)

    threading.Thread(target=pump, name="mercury-stdin", daemon=True).start()
    return reader


async def run_stdio(base: Settings) -> int:
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but protocol messages may reach the client's pipe
    engine, grammars = EngineClient(), Grammars()
    server = build_server(base, engine, grammars)
    server.protocol.set_writer(StdoutWriter(out))
    try:
        return await serve_stream(await _stdin_reader(), server.protocol)
    finally:
        server.close()
        engine.close()


async def run_tcp(base: Settings, host: str, port: int) -> int:
    engine, grammars = EngineClient(), Grammars()  # one model for every connection

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server = build_server(base, engine, grammars)
        server.protocol.set_writer(writer)
        try:
            await serve_stream(reader, server.protocol)
        finally:
            server.close()
            writer.close()

    srv = await asyncio.start_server(connection, host, port)
    addr = srv.sockets[0].getsockname()
    print(f"mercury-lsp: listening on {addr[0]}:{addr[1]}", file=sys.stderr, flush=True)
    async with srv:
        await srv.serve_forever()
    return 0


def run(coro) -> int:
    """Run the server's coroutine on uvloop (asyncio where uvloop is unavailable)."""
    try:
        import uvloop
    except ImportError:  # Windows
        return asyncio.run(coro)
    return uvloop.run(coro)
