"""The one JSON-RPC client of the tests and benchmarks: an outside LSP client of the language
server (LSP base protocol: ``Content-Length`` framing over a child's stdio or a socket). It
shares no code with ``mercury_lsp``: what it sees is what an editor sees.

One framing core (``frame``; ``FrameReader``: bytes in, messages out), one record of what the
server sent (``Inbox``: responses by id and how many came per id, notifications by method, the
server's own requests answered by ``on_request``, null unless told otherwise, and errors with a
null id kept as ``$/error`` notifications), and two faces:

* ``LspConnection`` / ``LspProcess`` — synchronous: a reader thread and a writer thread (the
  reader never waits for a full pipe while the server waits for us). ``LspProcess(argv,
  env=None, stderr=None)`` spawns the server: ``request(method, params)`` (the result, or
  ``RpcError``), ``request_async`` + ``wait``, ``notify``, ``notifications[method]``,
  ``wait_notification``, ``responses_seen``, ``close()``. Benchmarks driving a warm daemon, the
  editors played on the wire (Helix, Zed) and the protocol fuzzer use it.
* ``AsyncLspClient`` — asyncio: tests that send what a typed client cannot (malformed params,
  raw bytes, requests before ``initialize``) and the latency and soak benchmarks.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import queue
import socket
import subprocess
import threading
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

READ_CHUNK = 1 << 16  # bytes read from the server at a time
REQUEST_TIMEOUT_S = 120.0  # a request or awaited notification (a cold model load on a busy CPU)
SHUTDOWN_TIMEOUT_S = 30.0  # shutdown + exit until the process is gone
ERROR_NOTIFICATION = "$/error"  # where an error response with a null id (a parse error) is kept
# initialize's client capabilities unless a caller gives its own: ghost text, progress
DEFAULT_CAPABILITIES = {"general": {"positionEncodings": ["utf-16"]},
                        "textDocument": {"inlineCompletion": {}, "synchronization": {}},
                        "window": {"workDoneProgress": True}}

# A server request's answer: (method, params) -> result (None: null).
OnRequest = Callable[[str, Any], Any]


class RpcError(RuntimeError):
    """An error response to one of our requests."""

    def __init__(self, error: dict) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.message = error.get("message")


# ---------------------------------------------------------------------------- framing
def frame(body: bytes, length: int | None = None) -> bytes:
    """``body`` with its header (``length``: a wrong Content-Length, for tests of the server's framing)."""
    return b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body


def encode(message: Any) -> bytes:
    return frame(json.dumps(message).encode("utf-8"))


class FrameReader:
    """Bytes in, messages out: header lines up to a blank one (``Content-Length`` in any case,
    other headers ignored; a block without it is skipped), then that many bytes of JSON."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._need: int | None = None  # the body's length once its header block is read

    def feed(self, data: bytes) -> list[Any]:
        self._buf += data
        out: list[Any] = []
        while True:
            if self._need is None:
                length, found = self._header()
                if not found:
                    return out
                if length is None:
                    continue
                self._need = length
            if len(self._buf) < self._need:
                return out
            body, self._buf = bytes(self._buf[:self._need]), self._buf[self._need:]
            self._need = None
            out.append(json.loads(body))

    def _header(self) -> tuple[int | None, bool]:
        """(Content-Length, True) once a whole header block is in the buffer (consumed)."""
        length, start = None, 0
        while True:
            end = self._buf.find(b"\n", start)
            if end < 0:
                return None, False
            line = bytes(self._buf[start:end]).strip()
            start = end + 1
            if not line:
                del self._buf[:start]
                return length, True
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)


# ---------------------------------------------------------------------------- what came back
class Inbox:
    """One client's record of what the server sent (both faces)."""

    def __init__(self, on_request: OnRequest | None = None) -> None:
        self.on_request = on_request
        self.notifications: dict[str, list[Any]] = defaultdict(list)
        self.server_requests: list[dict] = []
        self.responses_seen: Counter = Counter()  # id -> responses (one per request, always)
        self.history: dict[Any, list[dict]] = defaultdict(list)  # every response, by id

    def receive(self, msg: Any) -> tuple[str, Any]:
        """What ``msg`` asks of the face: ``("reply", message)`` to send back, ``("response", id)``
        to deliver, or ``("notification", method)`` (already recorded)."""
        if isinstance(msg, dict) and "method" in msg and "id" in msg:  # the server's own request
            self.server_requests.append(msg)
            result = self.on_request(msg["method"], msg.get("params")) if self.on_request else None
            return "reply", {"jsonrpc": "2.0", "id": msg["id"], "result": result}
        if isinstance(msg, dict) and "method" in msg:
            self.notifications[msg["method"]].append(msg.get("params"))
            self.noted(msg["method"], msg.get("params"))
            return "notification", msg["method"]
        rid = msg.get("id") if isinstance(msg, dict) else None
        if rid is None:  # e.g. a parse error: nobody's response
            self.notifications[ERROR_NOTIFICATION].append(msg.get("error") if isinstance(msg, dict) else msg)
            return "notification", ERROR_NOTIFICATION
        self.responses_seen[rid] += 1
        self.history[rid].append(msg)
        return "response", rid


    def noted(self, method: str, params: Any) -> None:
        """Called for every notification, once recorded (a subclass keeps what it needs of it;
        the synchronous face calls it under its lock)."""


def result_of(msg: dict) -> Any:
    if "error" in msg:
        raise RpcError(msg["error"])
    return msg.get("result")


def initialize_params(options: dict | None, capabilities: dict | None) -> dict:
    return {"processId": os.getpid(), "rootUri": None, "initializationOptions": options or {},
            "capabilities": DEFAULT_CAPABILITIES if capabilities is None else capabilities}


# ---------------------------------------------------------------------------- synchronous face
def pipes(proc: subprocess.Popen) -> tuple[Callable[[], bytes], Callable[[bytes], None], Callable[[], bool],
                                           Callable[[], None]]:
    """(read, write, alive, close) over a child process's stdio."""
    fd = proc.stdout.fileno()

    def write(data: bytes) -> None:
        proc.stdin.write(data)
        proc.stdin.flush()

    return lambda: os.read(fd, READ_CHUNK), write, lambda: proc.poll() is None, proc.stdin.close


class LspConnection(Inbox):
    """A blocking client over a byte stream: ``read`` (returns b"" at its end), ``write``,
    ``alive`` (the server still runs) and ``close`` are the transport's."""

    def __init__(self, read: Callable[[], bytes], write: Callable[[bytes], None], alive: Callable[[], bool],
                 close: Callable[[], None], on_request: OnRequest | None = None) -> None:
        super().__init__(on_request)
        self._read_raw, self._write_raw, self.alive, self._close = read, write, alive, close
        self._ids = itertools.count(1)
        self._cond = threading.Condition()
        self.results: dict[Any, dict] = {}  # the newest response per id, until ``wait`` takes it
        self.closed = False  # the server's output ended
        self._outbox: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._read_loop, name="lsp-client-reader", daemon=True).start()
        threading.Thread(target=self._write_loop, name="lsp-client-writer", daemon=True).start()

    @classmethod
    def over_pipes(cls, proc: subprocess.Popen, on_request: OnRequest | None = None) -> LspConnection:
        return cls(*pipes(proc), on_request)

    @classmethod
    def over_tcp(cls, proc: subprocess.Popen, port: int, host: str = "127.0.0.1",
                 on_request: OnRequest | None = None) -> LspConnection:
        sock = socket.create_connection((host, port), timeout=SHUTDOWN_TIMEOUT_S)
        sock.settimeout(None)
        return cls(lambda: sock.recv(READ_CHUNK), sock.sendall, lambda: proc.poll() is None, sock.close,
                   on_request)

    def next_id(self) -> int:
        return next(self._ids)

    # ------------------------------------------------------------------ writing
    def write(self, data: bytes) -> None:
        """Bytes as they are (framed or not), in order."""
        self._outbox.put(data)

    def send(self, message: Any) -> None:
        self.write(encode(message))

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request_async(self, method: str, params: Any = None, msg_id: Any = None) -> Any:
        """Send a request; its id (``wait`` for the answer)."""
        rid = self.next_id() if msg_id is None else msg_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def cancel(self, msg_id: Any) -> None:
        self.notify("$/cancelRequest", {"id": msg_id})

    # ------------------------------------------------------------------ waiting
    def wait_message(self, rid: Any, timeout: float = REQUEST_TIMEOUT_S) -> dict:
        """The whole response to ``rid`` (TimeoutError when none came, or the server ended)."""
        with self._cond:
            if not self._cond.wait_for(lambda: rid in self.results or self.closed, timeout) or rid not in self.results:
                raise TimeoutError(f"no response to request {rid}")
            return self.results.pop(rid)

    def wait(self, rid: Any, timeout: float = REQUEST_TIMEOUT_S) -> Any:
        return result_of(self.wait_message(rid, timeout))

    def request(self, method: str, params: Any = None, timeout: float = REQUEST_TIMEOUT_S) -> Any:
        return self.wait(self.request_async(method, params), timeout)

    def request_message(self, method: str, params: Any = None, timeout: float = REQUEST_TIMEOUT_S) -> dict:
        return self.wait_message(self.request_async(method, params), timeout)

    def wait_for(self, ids, timeout: float) -> bool:
        """True once every id has a response (read or not)."""
        with self._cond:
            return self._cond.wait_for(lambda: all(i in self.responses_seen for i in ids) or self.closed, timeout) \
                and all(i in self.responses_seen for i in ids)

    def wait_notification(self, method: str, predicate=None, timeout: float = REQUEST_TIMEOUT_S,
                          since: int = 0) -> Any:
        """The params of the first ``method`` notification (from its ``since``-th on) matching
        ``predicate``; TimeoutError when none came."""
        def found() -> tuple[bool, Any]:
            for params in self.notifications[method][since:]:
                if predicate is None or predicate(params):
                    return True, params
            return False, None

        with self._cond:
            self._cond.wait_for(lambda: found()[0] or self.closed, timeout)
            ok, params = found()
        if not ok:
            raise TimeoutError(f"no {method} notification")
        return params

    # ------------------------------------------------------------------ threads
    def _write_loop(self) -> None:
        while (data := self._outbox.get()) is not None:
            try:
                self._write_raw(data)
            except OSError:
                return

    def _read_loop(self) -> None:
        reader = FrameReader()
        try:
            while chunk := self._read_raw():
                for msg in reader.feed(chunk):
                    with self._cond:
                        what, value = self.receive(msg)
                        if what == "response":
                            self.results[value] = msg
                        self._cond.notify_all()
                    if what == "reply":
                        self.send(value)
        except (OSError, ValueError):
            pass
        finally:
            with self._cond:
                self.closed = True
                self._cond.notify_all()

    def close(self) -> None:
        self._outbox.put(None)
        self._close()


class LspProcess(LspConnection):
    """The server as a child process, over its stdio."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None, stderr=None,
                 on_request: OnRequest | None = None) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr if stderr is not None else subprocess.DEVNULL, env=env)
        super().__init__(*pipes(self.proc), on_request)

    def initialize(self, options: dict | None = None, capabilities: dict | None = None) -> dict:
        result = self.request("initialize", initialize_params(options, capabilities))
        self.notify("initialized", {})
        return result

    def close(self) -> None:
        """shutdown, exit, and the process gone (killed when it does not go)."""
        try:
            self.request("shutdown", None, timeout=SHUTDOWN_TIMEOUT_S)
            self.notify("exit", None)
            self.proc.wait(timeout=SHUTDOWN_TIMEOUT_S)
        except (TimeoutError, OSError, RpcError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        super().close()


# ---------------------------------------------------------------------------- asyncio face
class AsyncLspClient(Inbox):
    """An asyncio client over a child process's stdio."""

    def __init__(self, proc: asyncio.subprocess.Process, on_request: OnRequest | None = None) -> None:
        super().__init__(on_request)
        self.proc = proc
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future] = {}
        self._waiters: dict[str, list[tuple[Any, asyncio.Future]]] = defaultdict(list)
        self._reader = asyncio.ensure_future(self._read_loop())

    @classmethod
    async def start(cls, *cmd: str, env: dict[str, str] | None = None, stderr=None,
                    on_request: OnRequest | None = None) -> AsyncLspClient:
        proc = await asyncio.create_subprocess_exec(*cmd, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, stderr=stderr,
                                                    env={**os.environ, **(env or {})})
        return cls(proc, on_request)

    # ------------------------------------------------------------------ sending
    def send_bytes(self, data: bytes) -> None:
        """Bytes as they are (no framing): for tests of the server's framing."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)

    def send_raw(self, body: bytes) -> None:
        """One framed body, JSON or not."""
        self.send_bytes(frame(body))

    def send(self, message: Any) -> None:
        self.send_bytes(encode(message))

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def expect(self, msg_id: Any) -> asyncio.Future:
        """A future for the response with ``msg_id`` (to a request sent by ``send_bytes``)."""
        fut = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        return fut

    def request_future(self, method: str, params: Any = None, msg_id: Any = None) -> tuple[Any, asyncio.Future]:
        msg_id = next(self._ids) if msg_id is None else msg_id
        fut = self.expect(msg_id)
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id, fut

    async def request(self, method: str, params: Any = None, timeout: float = REQUEST_TIMEOUT_S) -> Any:
        """The result, or RpcError for an error response."""
        _, fut = self.request_future(method, params)
        return result_of(await asyncio.wait_for(fut, timeout))

    def cancel(self, msg_id: Any) -> None:
        self.notify("$/cancelRequest", {"id": msg_id})

    async def wait_notification(self, method: str, predicate=None, timeout: float = REQUEST_TIMEOUT_S) -> Any:
        """The first notification ``method`` (already received or to come) matching ``predicate``."""
        for params in self.notifications[method]:
            if predicate is None or predicate(params):
                return params
        fut = asyncio.get_running_loop().create_future()
        self._waiters[method].append((predicate, fut))
        return await asyncio.wait_for(fut, timeout)

    # ------------------------------------------------------------------ reading
    async def _read_loop(self) -> None:
        out = self.proc.stdout
        assert out is not None
        reader = FrameReader()
        while chunk := await out.read(READ_CHUNK):
            for msg in reader.feed(chunk):
                what, value = self.receive(msg)
                if what == "reply":
                    self.send(value)
                elif what == "notification":
                    self._notified(value, self.notifications[value][-1])
                else:
                    fut = self._pending.pop(value, None)
                    if fut is not None and not fut.done():
                        fut.set_result(msg)
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(ConnectionError("server closed its output"))
        self._pending.clear()

    def _notified(self, method: str, params: Any) -> None:
        keep = []
        for pred, fut in self._waiters[method]:
            if not fut.done() and (pred is None or pred(params)):
                fut.set_result(params)
            elif not fut.done():
                keep.append((pred, fut))
        self._waiters[method] = keep

    # ------------------------------------------------------------------ lifecycle
    async def initialize(self, options: dict | None = None, capabilities: dict | None = None) -> dict:
        result = await self.request("initialize", initialize_params(options, capabilities))
        self.notify("initialized", {})
        return result

    async def shutdown(self, timeout: float = SHUTDOWN_TIMEOUT_S) -> int:
        """shutdown, exit; the process's exit code (killed when it does not go)."""
        with contextlib.suppress(Exception):
            await self.request("shutdown", None, timeout=timeout)
            self.notify("exit")
        try:
            return await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            self.proc.kill()
            return await self.proc.wait()
        finally:
            self._reader.cancel()

