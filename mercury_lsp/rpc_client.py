"""A minimal asyncio LSP client over a subprocess's stdio: raw JSON in, raw JSON out.

Used by the latency benchmark and by tests that need to send what a typed client cannot
(malformed params, requests before ``initialize``, raw bytes). Not part of the daemon.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from collections import defaultdict
from typing import Any

STREAM_LIMIT = 1 << 24  # longest line/message read from the server (16 MiB: whole-file results)
REQUEST_TIMEOUT_S = 60.0  # a request or awaited notification (a cold model load on a busy CPU)
SHUTDOWN_TIMEOUT_S = 30.0  # shutdown + exit until the process is gone


class RpcError(Exception):
    def __init__(self, error: dict) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.message = error.get("message")


class RawClient:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future] = {}
        self.notifications: dict[str, list[Any]] = defaultdict(list)
        self._waiters: dict[str, list[tuple[Any, asyncio.Future]]] = defaultdict(list)
        self.server_requests: list[dict] = []
        self._reader = asyncio.ensure_future(self._read_loop())

    @classmethod
    async def start(cls, *cmd: str, env: dict[str, str] | None = None, stderr=None) -> RawClient:
        proc = await asyncio.create_subprocess_exec(
            *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=stderr, env={**os.environ, **(env or {})}, limit=STREAM_LIMIT)
        return cls(proc)

    # ------------------------------------------------------------------ sending
    def send_raw(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def send(self, message: dict) -> None:
        self.send_raw(json.dumps(message).encode("utf-8"))

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request_future(self, method: str, params: Any = None, msg_id: Any = None) -> tuple[Any, asyncio.Future]:
        msg_id = next(self._ids) if msg_id is None else msg_id
        fut = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id, fut

    async def request(self, method: str, params: Any = None, timeout: float = REQUEST_TIMEOUT_S) -> Any:
        """The result, or RpcError for an error response."""
        _, fut = self.request_future(method, params)
        msg = await asyncio.wait_for(fut, timeout)
        if "error" in msg:
            raise RpcError(msg["error"])
        return msg.get("result")

    def cancel(self, msg_id: Any) -> None:
        self.notify("$/cancelRequest", {"id": msg_id})

    async def wait_notification(self, method: str, predicate=None, timeout: float = REQUEST_TIMEOUT_S) -> Any:
        """The first notification ``method`` (already received or future) matching ``predicate``."""
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
        while True:
            length = None
            while True:
                line = await out.readline()
                if not line:
                    self._fail_all()
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length is None:
                continue
            msg = json.loads(await out.readexactly(length))
            self._dispatch(msg)

    def _dispatch(self, msg: dict) -> None:
        if "method" in msg and "id" in msg:  # a request from the server: accept it
            self.server_requests.append(msg)
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            return
        if "method" in msg:
            self._notified(msg["method"], msg.get("params"))
            return
        fut = self._pending.pop(msg.get("id"), None)
        if fut is not None and not fut.done():
            fut.set_result(msg)
        elif msg.get("id") is None and "error" in msg:  # e.g. a parse error: recorded as "$/error"
            self._notified("$/error", msg["error"])

    def _notified(self, method: str, params: Any) -> None:
        self.notifications[method].append(params)
        keep = []
        for pred, fut in self._waiters[method]:
            if not fut.done() and (pred is None or pred(params)):
                fut.set_result(params)
            elif not fut.done():
                keep.append((pred, fut))
        self._waiters[method] = keep

    def _fail_all(self) -> None:
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(ConnectionError("server closed its output"))
        self._pending.clear()

    # ------------------------------------------------------------------ lifecycle
    async def initialize(self, options: dict | None = None, capabilities: dict | None = None) -> dict:
        caps = capabilities if capabilities is not None else {
            "general": {"positionEncodings": ["utf-16"]},
            "textDocument": {"inlineCompletion": {}, "synchronization": {}},
            "window": {"workDoneProgress": True},
        }
        result = await self.request("initialize", {
            "processId": os.getpid(), "rootUri": None, "capabilities": caps,
            "initializationOptions": options or {}})
        self.notify("initialized", {})
        return result

    async def shutdown(self, timeout: float = SHUTDOWN_TIMEOUT_S) -> int:
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
