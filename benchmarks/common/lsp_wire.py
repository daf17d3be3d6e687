"""A minimal LSP client over a subprocess's stdio for the benchmarks: framing, requests,
cancellation and notifications. It shares no code with the daemon (an outside client)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from typing import Any

STREAM_LIMIT = 1 << 24  # longest message accepted (a whole document in a notification)


class WireClient:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future] = {}
        self.notes: dict[str, list[Any]] = {}
        self._note_event = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def spawn(cls, *cmd: str) -> WireClient:
        proc = await asyncio.create_subprocess_exec(*cmd, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, limit=STREAM_LIMIT)
        return cls(proc)

    def _send(self, msg: dict) -> None:
        body = json.dumps(msg).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any) -> tuple[int, asyncio.Future]:
        msg_id = next(self._ids)
        fut = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = fut
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id, fut

    async def call(self, method: str, params: Any, timeout: float = 60.0) -> Any:
        _, fut = self.request(method, params)
        msg = await asyncio.wait_for(fut, timeout)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return msg.get("result")

    def cancel(self, msg_id: int) -> None:
        self.notify("$/cancelRequest", {"id": msg_id})

    async def wait_note(self, method: str, pred, timeout: float) -> Any:
        async with asyncio.timeout(timeout):
            while True:
                for params in self.notes.get(method, []):
                    if pred(params):
                        return params
                self._note_event.clear()
                await self._note_event.wait()

    async def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = await out.readline()
                if not line:
                    for fut in self.pending.values():
                        if not fut.done():
                            fut.set_exception(ConnectionError("server closed its output"))
                    return
                if not line.strip():
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if length is None:
                continue
            msg = json.loads(await out.readexactly(length))
            if "method" in msg and "id" in msg:  # a server request (e.g. workDoneProgress/create)
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            elif "method" in msg:
                self.notes.setdefault(msg["method"], []).append(msg.get("params"))
                self._note_event.set()
            else:
                fut = self.pending.pop(msg.get("id"), None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)

    async def initialize(self, options: dict) -> None:
        await self.call("initialize", {
            "processId": os.getpid(), "rootUri": None, "initializationOptions": options,
            "capabilities": {"general": {"positionEncodings": ["utf-16"]},
                             "textDocument": {"inlineCompletion": {}, "synchronization": {}}}})
        self.notify("initialized", {})

    async def close(self, timeout: float = 10.0) -> None:
        with contextlib.suppress(Exception):
            await self.call("shutdown", None, timeout)
            self.notify("exit", None)
        try:
            await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        self._reader.cancel()
