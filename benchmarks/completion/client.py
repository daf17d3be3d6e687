"""The completion benchmark's LSP client: the one outside client of the tests and benchmarks
(``benchmarks/common/jsonrpc.py``, no code shared with the daemon: it is what an editor is to the
server). Besides requests and notifications it keeps what the benchmark checks:
``window/showMessage`` (and ``showMessageRequest``) messages, work-done progress (tokens begun and
ended, so the runner can wait for the server's background work), and the server's memory.
Requests from the server are answered as a plain editor would: ``workspace/configuration`` with
the arm's settings for the ``mercury`` section, ``workspace/applyEdit`` refused, others null.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.common.jsonrpc import LspProcess, RpcError

__all__ = ["Client", "RpcError", "ServerGone"]
SECTION = "mercury"
RECHECK_S = 0.5  # wait_until looks at a time-dependent condition this often


class ServerGone(RuntimeError):
    """The server exited or did not answer in time."""


class Client(LspProcess):
    """The benchmarks' one client (``benchmarks/common/jsonrpc.py``), answering and keeping what
    this benchmark needs (module docstring)."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None, stderr=None,
                 settings: dict | None = None) -> None:
        self.settings = settings or {}
        self.messages: list[dict] = []  # window/showMessage and showMessageRequest params
        self.progress_open: set = set()  # work-done tokens begun and not yet ended
        self.progress_seen = 0
        self.last_progress = time.monotonic()
        super().__init__(argv, env=env, stderr=stderr, on_request=self._answer)

    def _answer(self, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            items = (params or {}).get("items", [])
            return [self.settings if it.get("section") in (SECTION, None) else None for it in items]
        if method == "workspace/applyEdit":
            return {"applied": False}
        if method == "window/showMessageRequest":
            self.messages.append(params)
        return None

    def noted(self, method: str, params: Any) -> None:
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
    def timed_request(self, method: str, params: Any, timeout: float = 120.0) -> tuple[Any, float]:
        """(result, milliseconds from sending to the response)."""
        t0 = time.perf_counter()
        rid = self.request_async(method, params)
        try:
            result = self.wait(rid, timeout)
        except TimeoutError:
            if self.proc.poll() is not None:
                raise ServerGone(f"the server exited (status {self.proc.returncode}) during {method}") from None
            raise ServerGone(f"no response to {method} within {timeout:.0f} s") from None
        return result, (time.perf_counter() - t0) * 1000

    def wait_until(self, predicate, timeout: float, what: str) -> None:
        """Until ``predicate()`` holds; it may depend on time (a quiet period), so it is looked at
        again every ``RECHECK_S`` as well as on every message."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate() and not self.closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(min(left, RECHECK_S))
            if predicate():
                return
        if self.proc.poll() is not None or self.closed:
            raise ServerGone(f"the server exited (status {self.proc.poll()}) waiting for {what}")
        raise ServerGone(f"no {what} within {timeout:.0f} s")

    def rss_mb(self) -> float:
        """Resident memory (VmRSS) of the server process and its descendants, in MB."""
        return sum(_vm(pid, "VmRSS") for pid in _tree(self.proc.pid)) / 1024

    def peak_mb(self) -> float:
        """Peak resident memory (VmHWM) of the server process itself, in MB."""
        return _vm(self.proc.pid, "VmHWM") / 1024

    def close(self) -> None:
        try:
            super().close()
        except (ServerGone, OSError, subprocess.TimeoutExpired):
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
