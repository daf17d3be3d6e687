"""A minimal LSP client over a child process's stdio (JSON-RPC with Content-Length framing).

Shares no code with ``mercury_lsp``: benchmarks drive the real daemon through it exactly as an
editor would. Requests the server sends to the client (``window/workDoneProgress/create``,
``workspace/configuration``, ...) are answered with ``null``; notifications are kept by method.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import threading
import time
from collections import defaultdict
from typing import Any


class RpcError(RuntimeError):
    def __init__(self, error: dict) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")


class LspProcess:
    def __init__(self, argv: list[str], env: dict[str, str] | None = None, stderr=None) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr if stderr is not None else subprocess.DEVNULL, env=env)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._responses: dict[int, dict] = {}
        self.responses_seen: dict[int, int] = defaultdict(int)  # id -> responses (must be 1)
        self.notifications: dict[str, list[Any]] = defaultdict(list)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # ------------------------------------------------------------------ wire
    def _send(self, msg: dict) -> None:
        body = json.dumps(msg).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    with self._cond:
                        self._cond.notify_all()
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length is None:
                continue
            msg = json.loads(out.read(length))
            if "method" in msg and "id" in msg:  # a request from the server
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            elif "method" in msg:
                with self._cond:
                    self.notifications[msg["method"]].append(msg.get("params"))
                    self._cond.notify_all()
            else:
                with self._cond:
                    self.responses_seen[msg.get("id")] += 1
                    self._responses[msg.get("id")] = msg
                    self._cond.notify_all()

    # ------------------------------------------------------------------ API
    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request_async(self, method: str, params: Any) -> int:
        rid = next(self._ids)
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def wait(self, rid: int, timeout: float = 120.0) -> Any:
        deadline = time.monotonic() + timeout
        with self._cond:
            while rid not in self._responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(f"no response to request {rid}")
                self._cond.wait(left)
            msg = self._responses.pop(rid)
        if "error" in msg:
            raise RpcError(msg["error"])
        return msg.get("result")

    def request(self, method: str, params: Any, timeout: float = 120.0) -> Any:
        return self.wait(self.request_async(method, params), timeout)

    def wait_notification(self, method: str, predicate, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for p in self.notifications.get(method, []):
                    if predicate(p):
                        return p
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(f"no {method} notification")
                self._cond.wait(left)

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=30)
            self.notify("exit", None)
            self.proc.wait(timeout=30)
        except (TimeoutError, OSError, RpcError):
            self.proc.kill()
            self.proc.wait()
