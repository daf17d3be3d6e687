"""The JSON-RPC transport: framed messages read from stdio or a TCP connection, handled strictly
in arrival order; a request's handler takes its document snapshot before the next message is read.

``run_stdio`` and ``run_tcp`` wire one ``MercuryServer`` per connection (one model for all).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from dataclasses import replace

from pygls.io_ import StdoutWriter

from mercury_lsp.backend.connect import engine_client_for
from mercury_lsp.backend.outbound import Outbound
from mercury_lsp.config import Settings
from mercury_lsp.engine_client import EngineClient
from mercury_lsp.exclusion import Exclusion
from mercury_lsp.heap import PeriodicTrim, configure_allocator
from mercury_lsp.heap_trace import HeapTrace
from mercury_lsp.next_edit.tree import DISK_TREES
from mercury_lsp.server.access import AllowedRoots, PreAuth, Waiting
from mercury_lsp.server.app import build_server
from mercury_lsp.server.framing import FrameLimits, FrameReader
from mercury_lsp.server.jsonrpc import Reject
from mercury_lsp.server.lifetime import watch_client
from mercury_lsp.server.protocol import MercuryProtocol
from mercury_lsp.syntax import Grammars

log = logging.getLogger("mercury_lsp")

READ_CHUNK = 1 << 16  # bytes per read from stdin: one pipe buffer
# What an idle daemon lets go (``heap.PeriodicTrim``): next edit's kept trees of files on disk.
IDLE_RELEASE = (DISK_TREES.clear,)


async def serve_stream(reader: asyncio.StreamReader, protocol: MercuryProtocol,
                       limits: FrameLimits | None = None, trim: PeriodicTrim | None = None,
                       waiting: Waiting | None = None) -> int:
    """Read framed JSON-RPC messages and handle them in order until ``exit`` or end of input.

    Nothing else ends the loop: a bad frame or message is answered with one error (``framing``,
    ``jsonrpc``) and reading goes on at the next frame. ``trim``: told of every message (the
    process trims its heap while it works). ``waiting`` (TCP): until ``initialize`` is accepted
    the connection has its bounds' ``timeout_s`` in all and frames of ``max_message_bytes`` at
    most, and no second chance: a bad frame ends it. Accepted, it leaves its place.
    """
    limits = limits or FrameLimits()
    loop = asyncio.get_running_loop()
    pre = waiting.bounds if waiting is not None else None
    frames = FrameReader(reader, replace(limits, max_message_bytes=pre.max_message_bytes, resync=False)
                         if pre else limits)
    deadline = loop.time() + pre.timeout_s if pre is not None else None
    while protocol.exit_code is None:
        if deadline is not None:
            try:
                data = await asyncio.wait_for(frames.next(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                log.warning("connection closed: no initialize within %g s", pre.timeout_s)
                return 1
        else:
            data = await frames.next()
        if data is None:
            return 0 if protocol.shut_down else 1
        if trim is not None:
            trim.touch()
        if not protocol.receive(data):
            return 1  # a wrong token ends the connection
        if deadline is not None and not protocol.initialize_seen and isinstance(data, Reject):
            return 1  # before initialize, a bad frame is no client's
        if deadline is not None and protocol.initialize_seen:  # accepted: the connection's own limits now
            frames.limits, deadline = limits, None
            waiting.release()
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
    outbound = Outbound()  # what a remote backend may be sent: this client's exclusion (below)
    engine, grammars = engine_client_for(base, outbound), Grammars()
    server = build_server(base, engine, grammars)
    outbound.excluded = lambda uri: server.exclusion().excludes(uri)
    server.protocol.set_writer(StdoutWriter(out))
    reader = await _stdin_reader()
    server.watch_client = lambda pid: watch_client(pid, reader.feed_eof)  # a dead client ends the input
    trim = PeriodicTrim(on_idle=IDLE_RELEASE).start()
    trace = HeapTrace.from_env()  # debugging only: off unless its variable names a file
    if trace is not None:
        trace.start()
    try:
        limits = FrameLimits(max_message_bytes=base.max_message_bytes, interactive=sys.stdin.isatty())
        return await serve_stream(reader, server.protocol, limits, trim)
    finally:
        trim.stop()
        if trace is not None:
            trace.stop()
        server.drop()
        engine.close()


async def run_tcp(base: Settings, host: str, port: int, token: str | None = None,
                  engine: EngineClient | None = None, listening: asyncio.Future | None = None,
                  roots: AllowedRoots | None = None, pre_auth: PreAuth | None = None) -> int:
    """Serve every TCP connection with one model; ``token``: required from each client
    (``access``: the command line refuses a non-loopback host without one). ``engine``: one
    already serving others in this process (``mercury-lsp http --lsp``). ``listening`` gets the
    bound ``(host, port)``. ``roots``: the directories clients may have read (``--root``; none:
    only their open documents). ``pre_auth``: the bounds before ``initialize`` (``access``). A
    connection that ends, however it ends, releases its session."""
    own_engine = engine is None
    # One model for every connection; each connection's services refuse its excluded files (with
    # its roots), and what reaches a remote backend is checked once more by file name.
    outbound = Outbound(lambda uri: Exclusion.from_settings(base).excludes(uri))
    engine, grammars = engine or engine_client_for(base, outbound), Grammars()
    roots = roots or AllowedRoots()
    pre_auth = pre_auth or PreAuth()
    connected = 0
    trim = PeriodicTrim(on_idle=IDLE_RELEASE)

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connected
        if (waiting := pre_auth.admit()) is None:
            writer.close()
            return
        connected += 1
        if connected > 1:
            log.warning("WARNING: %d clients are connected to this daemon; they share its model and its "
                        "engine-wide settings (each keeps its own documents and per-connection settings)",
                        connected)
        server = build_server(base, engine, grammars)
        server.shared = True
        server.daemon_roots = roots
        server.protocol.token = token
        server.protocol.set_writer(writer)
        try:
            await serve_stream(reader, server.protocol, FrameLimits(max_message_bytes=base.max_message_bytes),
                               trim, waiting)
        finally:
            waiting.release()
            connected -= 1
            server.drop()
            writer.close()

    trim.start()
    try:
        srv = await asyncio.start_server(connection, host, port)
        addr = srv.sockets[0].getsockname()
        print(f"mercury-lsp: listening on {addr[0]}:{addr[1]}", file=sys.stderr, flush=True)
        if listening is not None:
            listening.set_result((addr[0], addr[1]))
        async with srv:
            await srv.serve_forever()
    finally:
        trim.stop()
        if own_engine:
            engine.close()
    return 0


def run(coro) -> int:
    """Run the server's coroutine on uvloop (asyncio where uvloop is unavailable), with the
    daemon's allocator settings (``heap.configure_allocator``)."""
    configure_allocator()
    try:
        import uvloop
    except ImportError:  # Windows
        return asyncio.run(coro)
    return uvloop.run(coro)
