"""One server per (arm, repository): start it with the checkout as its workspace, wait until it
is ready, and run cases through it with the target cut from the file on disk as well."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from benchmarks.completion.arms import SETTLE_S, Arm
from benchmarks.completion.client import Client, RpcError
from benchmarks.completion.sources import BenchmarkError, language_of, sha1
from benchmarks.completion.text import Cut, Outcome, boundaries, cut, first_item, score_item, units

REPO_ROOT = Path(__file__).resolve().parents[2]
LOAD_TIMEOUT_S = 600.0
INDEX_TIMEOUT_S = 900.0
REQUEST_TIMEOUT_S = 120.0
CHANGED = 2  # FileChangeType.Changed
AUTOMATIC = 2  # InlineCompletionTriggerKind.Automatic
SETTINGS_PROBLEM = re.compile(r"invalid setting|unknown setting|ignored .*setting", re.IGNORECASE)


def server_argv(model: str | None, threads: int | None, device: str | None) -> list[str]:
    argv = [sys.executable, "-m", "mercury_lsp.cli", "serve"]
    for flag, value in (("--model", model), ("--threads", threads), ("--device", device)):
        if value is not None:
            argv += [flag, str(value)]
    return argv


def server_env() -> dict[str, str]:
    """This environment, with this tree first on PYTHONPATH: the daemon measured is the one
    beside the benchmark, whatever the environment's editable install points at."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env


@contextlib.contextmanager
def cut_on_disk(path: Path, original: bytes, cut_text: str, notify: Callable[[str], None]) -> Iterator[None]:
    """The file at ``path`` holds ``cut_text`` inside the block and ``original`` (byte for byte)
    after it; ``notify(uri)`` is called after each write."""
    uri = path.as_uri()
    try:
        path.write_bytes(cut_text.encode("utf-8"))
        notify(uri)
        yield
    finally:
        path.write_bytes(original)
        notify(uri)


class Session:
    """A running server whose workspace is ``checkout``, with ``arm``'s settings."""

    def __init__(self, arm: Arm, checkout: Path, argv: list[str], log: Path | None,
                 load_timeout: float = LOAD_TIMEOUT_S, index_timeout: float = INDEX_TIMEOUT_S) -> None:
        self.arm = arm
        self.checkout = checkout
        self.versions = 0
        stderr = None
        if log is not None:
            log.parent.mkdir(parents=True, exist_ok=True)
            stderr = open(log, "w")  # noqa: SIM115 (closed in close())
        self._stderr = stderr
        self.client = Client(argv, env=server_env(), stderr=stderr, settings=arm.settings or {})
        t0 = time.monotonic()
        try:
            self._initialize(load_timeout, index_timeout)
        except BaseException:
            self.close()
            raise
        self.ready_s = time.monotonic() - t0

    def _initialize(self, load_timeout: float, index_timeout: float) -> None:
        c = self.client
        root = self.checkout.as_uri()
        result, _ = c.timed_request("initialize", {
            "processId": os.getpid(), "rootUri": root, "rootPath": str(self.checkout),
            "workspaceFolders": [{"uri": root, "name": self.checkout.name}],
            "initializationOptions": self.arm.settings or {},
            "capabilities": {
                "general": {"positionEncodings": ["utf-32", "utf-16"]},
                "textDocument": {"synchronization": {"dynamicRegistration": False},
                                 "inlineCompletion": {"dynamicRegistration": False}},
                "workspace": {"workspaceFolders": True, "configuration": True,
                              "didChangeWatchedFiles": {"dynamicRegistration": True}},
                "window": {"workDoneProgress": True, "showMessage": {}}}}, timeout=load_timeout)
        self.encoding = ((result or {}).get("capabilities") or {}).get("positionEncoding") or "utf-16"
        c.notify("initialized", {})

        def status() -> dict | None:
            done = [p for p in c.notifications.get("mercury/status", []) if p and p.get("state") in ("ready", "error")]
            return done[-1] if done else None

        c.wait_until(lambda: status() is not None, load_timeout, "mercury/status ready")
        st = status()
        if st["state"] != "ready":
            raise BenchmarkError(f"arm {self.arm.name}: the server could not load its model: {st.get('message')}")
        ready = time.monotonic()
        c.wait_until(lambda: not c.progress_open and time.monotonic() - max(ready, c.last_progress) >= SETTLE_S,
                     index_timeout, "end of the server's work-done progress")

    def settings_problems(self) -> list[str]:
        return [m.get("message", "") for m in self.client.messages if SETTINGS_PROBLEM.search(m.get("message", ""))]

    def _watched(self, uri: str) -> None:
        self.client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri, "type": CHANGED}]})

    def ask(self, rel: str, text: str, line: int, character: int, timeout: float) -> tuple[dict | None, float, str]:
        """didOpen ``text`` as ``rel``, one automatic inlineCompletion at (line, character code
        points), didClose; (first item, latency ms, error message or "")."""
        uri = (self.checkout / rel).as_uri()
        self.versions += 1
        c = self.client
        c.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": language_of(rel) or "plaintext", "version": self.versions, "text": text}})
        err = ""
        try:
            ln = text.split("\n")[line]
            result, ms = c.timed_request("textDocument/inlineCompletion", {
                "textDocument": {"uri": uri}, "position": {"line": line, "character": units(ln[:character], self.encoding)},
                "context": {"triggerKind": AUTOMATIC}}, timeout=timeout)
        except RpcError as exc:
            result, ms, err = None, 0.0, str(exc)
        finally:
            c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        return first_item(result), ms, err

    def warm_up(self, rel: str) -> None:
        """One untimed request in a file no case uses (the first request pays one-off costs)."""
        text = (self.checkout / rel).read_text(encoding="utf-8")
        for i, ln in enumerate(text.split("\n")):
            if ln.strip() and (b := boundaries(ln)):
                self.ask(rel, text, i, b[len(b) // 2], REQUEST_TIMEOUT_S)
                return

    def run_case(self, case: dict, timeout: float = REQUEST_TIMEOUT_S) -> tuple[Cut, Outcome, float, str]:
        path = self.checkout / case["path"]
        data = path.read_bytes()
        if sha1(data) != case["sha1"]:
            raise BenchmarkError(f"{path} is not the file the case was built from (sha1 differs): run "
                                 "`python -m benchmarks.completion.cases` again (it exports modified checkouts again)")
        c = cut(data.decode("utf-8"), case["line"], case["character"])
        assert c.target == case["target"], case
        with cut_on_disk(path, data, c.text, self._watched):
            item, ms, err = self.ask(case["path"], c.text, case["line"], case["character"], timeout)
        return c, score_item(c, case["line"], case["character"], item, self.encoding), ms, err

    def close(self) -> None:
        self.client.close()
        if self._stderr is not None:
            self._stderr.close()
