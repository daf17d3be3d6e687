"""A minimal outside LSP client over a child process's stdio (JSON-RPC, Content-Length framing).

It shares no code with the daemon and none with the other benchmarks' clients: it is what an
editor is to the server. Besides requests and notifications it keeps what the benchmark checks:
``window/showMessage`` (and ``showMessageRequest``) messages, work-done progress (tokens begun and
ended, so the runner can wait for the server's background work), and the server's memory.
Requests from the server are answered as a plain editor would: ``workspace/configuration`` with
the arm's settings for the ``mercury`` section, ``workspace/applyEdit`` refused, others null.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

SECTION = "mercury"


class RpcError(RuntimeError):
    def __init__(self, error: dict) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")


class ServerGone(RuntimeError):
    """The server exited or did not answer in time."""


class Client:
    def __init__(self, argv: list[str], env: dict[str, str] | None = None, stderr=None,
                 settings: dict | None = None) -> None:
        self.settings = settings or {}
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr if stderr is not None else subprocess.DEVNULL, env=env)
        self._ids = itertools.count(1)
        self._write = threading.Lock()
        self._cond = threading.Condition()
        self._responses: dict[int, dict] = {}
        self.responses_seen: dict[int, int] = defaultdict(int)
        self.notifications: dict[str, list[Any]] = defaultdict(list)
        self.server_requests: list[tuple[str, Any]] = []
        self.messages: list[dict] = []  # window/showMessage and showMessageRequest params
        self.progress_open: set = set()  # work-done tokens begun and not yet ended
        self.progress_seen = 0
        self.last_progress = time.monotonic()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # ------------------------------------------------------------------ wire
    def _send(self, msg: dict) -> None:
        body = json.dumps(msg, ensure_ascii=False).encode("utf-8")
        assert self.proc.stdin is not None
        with self._write:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def _answer(self, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            items = (params or {}).get("items", [])
            return [self.settings if it.get("section") in (SECTION, None) else None for it in items]
        if method == "workspace/applyEdit":
            return {"applied": False}
        if method == "window/showMessageRequest":
            self.messages.append(params)
        return None

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
            method = msg.get("method")
            if method is not None and "id" in msg:
                self.server_requests.append((method, msg.get("params")))
                try:
                    self._send({"jsonrpc": "2.0", "id": msg["id"], "result": self._answer(method, msg.get("params"))})
                except OSError:
                    return
                continue
            with self._cond:
                if method is not None:
                    self._note(method, msg.get("params"))
                else:
                    self.responses_seen[msg.get("id")] += 1
                    self._responses[msg.get("id")] = msg
                self._cond.notify_all()

    def _note(self, method: str, params: Any) -> None:
        self.notifications[method].append(params)
        if method == "window/showMessage":
            self.messages.append(params)
        elif method == "$/progress" and isinstance(params, dict):
            kind = (params.get("value") or {}).get("kind")
            token = json.dumps(params.get("token"))
            if kind == "begin":
                self.progress_open.add(token)
                self.progress_seen += 1
            elif kind == "end":
                self.progress_open.discard(token)
            self.last_progress = time.monotonic()

    # ------------------------------------------------------------------ API
    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = 120.0) -> tuple[Any, float]:
        """(result, milliseconds from sending to the response)."""
        rid = next(self._ids)
        t0 = time.perf_counter()
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        with self._cond:
            while rid not in self._responses:
                left = deadline - time.monotonic()
                if self.proc.poll() is not None:
                    raise ServerGone(f"the server exited (status {self.proc.returncode}) during {method}")
                if left <= 0:
                    raise ServerGone(f"no response to {method} within {timeout:.0f} s")
                self._cond.wait(min(left, 1.0))
            msg = self._responses.pop(rid)
        ms = (time.perf_counter() - t0) * 1000
        if "error" in msg:
            raise RpcError(msg["error"])
        return msg.get("result"), ms

    def wait_until(self, predicate, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate():
                left = deadline - time.monotonic()
                if self.proc.poll() is not None:
                    raise ServerGone(f"the server exited (status {self.proc.returncode}) waiting for {what}")
                if left <= 0:
                    raise ServerGone(f"no {what} within {timeout:.0f} s")
                self._cond.wait(min(left, 0.5))

    def rss_mb(self) -> float:
        """Resident memory (VmRSS) of the server process and its descendants, in MB."""
        return sum(_vm(pid, "VmRSS") for pid in _tree(self.proc.pid)) / 1024

    def peak_mb(self) -> float:
        """Peak resident memory (VmHWM) of the server process itself, in MB."""
        return _vm(self.proc.pid, "VmHWM") / 1024

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=30)
            self.notify("exit", None)
            self.proc.wait(timeout=30)
        except (ServerGone, RpcError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


def _vm(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])  # kB
    except (OSError, ValueError):
        pass
    return 0


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children[ppid].append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out
