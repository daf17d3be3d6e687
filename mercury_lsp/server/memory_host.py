"""The repository memory of one connection: started after ``initialized`` over the workspace
folders the server may read, reported as work-done progress while it builds, told about files
that change on disk, and closed with the connection.

Roots: the workspace folders (or the root URI) that lie under the allowed roots. A stdio server
allows its workspace folders; a shared TCP daemon allows only the roots its command line names
(``MercuryServer.allowed_roots``), so a client can never make it read a folder it chose —
without such roots its memory holds the client's own open documents only.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from mercury_lsp.memory import Memory, MemoryOptions
from mercury_lsp.memory.indexer import BuildSummary
from mercury_lsp.refactor.workspace import workspace_roots

if TYPE_CHECKING:
    from mercury_lsp.server.app import MercuryServer

log = logging.getLogger(__name__)

PROGRESS_TOKEN_HEX = 8
PROGRESS_CREATE_TIMEOUT_S = 10.0  # a client that never accepts the token does not hold indexing back


def memory_roots(server: MercuryServer) -> list[Path]:
    folders = [p.resolve() for p in workspace_roots(server.workspace)]
    allowed = server.allowed_roots  # over stdio the workspace folders; a shared daemon its --root ones
    return [f for f in folders if allowed.contains(f)]


class MemoryHost:
    def __init__(self, server: MercuryServer) -> None:
        self.server = server
        self.memory: Memory | None = None
        self._token: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        """Start the memory for the current settings (no-op when off or already running)."""
        s = self.server.current.memory
        if not s.enabled or self.memory is not None:
            return
        self._loop = asyncio.get_running_loop()
        roots = memory_roots(self.server)
        self.memory = Memory(roots, MemoryOptions(s.max_files, s.max_megabytes, s.persist),
                             exclude=self.server.memory_exclude(), on_progress=self._progress, on_done=self._done)
        self.server.spawn(self._begin_and_start())

    def stop(self) -> None:
        if self.memory is not None:
            self.memory.close()
            self.memory = None

    def settings_changed(self) -> None:
        s = self.server.current.memory
        if not s.enabled:
            self.stop()
        elif self.memory is None and self._loop is not None:
            self.start()

    async def _begin_and_start(self) -> None:
        mem = self.memory
        if mem is None:
            return
        if mem.roots:
            self._token = await self._begin()
        mem.start()

    async def _begin(self) -> str | None:
        caps = self.server.client_capabilities
        if caps.window is None or not caps.window.work_done_progress:
            return None
        token = f"mercury-memory-{uuid.uuid4().hex[:PROGRESS_TOKEN_HEX]}"
        try:
            await asyncio.wait_for(self.server.work_done_progress.create_async(token), PROGRESS_CREATE_TIMEOUT_S)
            self.server.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(
                title="mercury-lsp", message="indexing the workspace", cancellable=False, percentage=0))
        except (TimeoutError, JsonRpcException, RuntimeError) as exc:
            log.info("client refused work-done progress (%s)", type(exc).__name__)
            return None
        return token

    def _call(self, fn, *args) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(fn, *args)

    def _progress(self, message: str, done: int, total: int) -> None:
        def report() -> None:
            if self._token is not None:
                pct = int(100 * done / total) if total else None
                self.server.work_done_progress.report(self._token, lsp.WorkDoneProgressReport(
                    message=message, percentage=pct))

        self._call(report)

    def _done(self, summary: BuildSummary) -> None:
        def end() -> None:
            note = f"{summary.files} files in {summary.seconds:.1f} s"
            if summary.capped:
                note += " (capped: see the log)"
            log.info("memory: %s indexed (%d read, the rest from the saved index)%s", note, summary.read,
                     "" if summary.persisted else "; not saved")
            if self._token is not None:
                self.server.work_done_progress.end(self._token, lsp.WorkDoneProgressEnd(message=note))
                self._token = None

        self._call(end)

    def changed(self, path: str, deleted: bool = False) -> None:
        if self.memory is not None:
            self.memory.changed(path, deleted)
