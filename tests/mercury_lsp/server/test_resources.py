"""The daemon keeps nothing of a closed document (issue 18: a 4.7 MB document's memory stayed
after ``didClose``). Measured on the daemon's process, with a tolerance well under the memory
kept documents would take; that the allocator returns the pages is tested on the document
store itself (tests/mercury_lsp/test_documents.py)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from benchmarks.common.jsonrpc import AsyncLspClient
from tests.support.server import PROBE_TEXT, serve_command

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/status")

DOC_CHARS = 5 * 1024 * 1024
CYCLES = 4  # distinct 5 MB documents opened, edited, completed in and closed after the first
# RSS may move this much (allocator noise, pages the allocator keeps for reuse): under two
# documents' text. CYCLES kept documents would move it by 4 x 5 MB of text alone, plus their
# UTF-8 copies, line tables and syntax trees (measured with documents kept: +62 MB).
TOLERANCE_MB = 10.0


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


async def cycle(c: AsyncLspClient, k: int) -> None:
    uri = f"file:///big-{k}.py"
    text = (PROBE_TEXT * (DOC_CHARS // len(PROBE_TEXT) + 1))[: DOC_CHARS - k - 1] + "#" * (k + 1)
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
        {"range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 0}}, "text": "# edit\n"}]})
    line = text.count("\n") // 2
    await c.request("textDocument/inlineCompletion", {"textDocument": {"uri": uri},
                                                      "position": {"line": line, "character": 0},
                                                      "context": {"triggerKind": 1}})
    c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    await c.request("mercury/stats")  # everything above is handled


@pytest.mark.asyncio
async def test_closed_documents_give_their_memory_back(tiny_model):
    c = await AsyncLspClient.start(*serve_command())
    try:
        # No prefetch: its completions after each didChange fill the engine's context cache
        # (bounded, ~2.5 MB a context); this test measures what the documents keep.
        await c.initialize({"prefetch": False})
        await c.wait_notification("mercury/status", lambda p: p["state"] == "ready")
        await cycle(c, 0)  # warms up the parser, the engine and the allocator
        before = rss_mb(c.proc.pid)
        for k in range(1, CYCLES + 1):
            await cycle(c, k)
        grown = rss_mb(c.proc.pid) - before
        assert grown < TOLERANCE_MB, f"RSS grew by {grown:.1f} MB over {CYCLES} closed 5 MB documents"
    finally:
        assert await c.shutdown() == 0


class _Sink:
    def __init__(self) -> None:
        self.out: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.out.append(data)

    def close(self) -> None:
        pass


@pytest.mark.asyncio
async def test_notifications_leave_nothing_behind():
    """pygls keeps the future of every notification handled by a generator or a coroutine (the
    document notifications, configuration) in its table of requests in flight: one per
    keystroke, never removed (issue 27, finding 11: a part of the soak's growth)."""
    from mercury_lsp.backend.local import local_client
    from mercury_lsp.config import parse_settings
    from mercury_lsp.server.app import build_server
    from mercury_lsp.syntax import Grammars

    base, _ = parse_settings({"prefetch": False})
    engine = local_client()
    server = build_server(base, engine, Grammars())
    server.protocol.set_writer(_Sink())
    try:
        p = server.protocol
        assert p.receive({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
        uri = "file:///typing.py"
        p.receive({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": ""}}})
        for v in range(2, 502):
            p.receive({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": v}, "contentChanges": [{"range": {
                    "start": {"line": 0, "character": v - 2}, "end": {"line": 0, "character": v - 2}}, "text": "x"}]}})
            p.receive({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration",
                       "params": {"settings": {"mercury": {"prefetch": False}}}})
        p.receive({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
        for _ in range(10):
            await asyncio.sleep(0)  # the coroutine handlers finish
        assert len(server.docs) == 0
        assert len(p._request_futures) == 0, f"{len(p._request_futures)} futures kept"
    finally:
        server.drop()
        engine.close()


class _Session:
    info = None

    def close(self) -> None:
        pass


class _Opens:
    def open(self, spec, report):
        return _Session()


@pytest.mark.asyncio
async def test_a_failed_job_leaves_no_reference_cycle_holding_its_locals():
    """A job that raises (every superseded request does) left its exception in a reference cycle
    with the worker's frame and future, and the job's frames (its texts, trees and tensors) with
    it, until the cycle collector's next full pass: minutes, hundreds of MB in a soak (issue 27,
    F11). Freed by reference counting alone now (the collector is off here)."""
    import gc
    import weakref

    from mercury_lsp.engine_client import CancelToken, EngineCancelled, EngineClient, LoadSpec

    client = EngineClient(_Opens())
    await client.load(LoadSpec("test"))

    class Held:  # stands in for a request's texts and tensors
        pass

    refs: list[weakref.ref] = []

    def job(session):
        held = Held()
        refs.append(weakref.ref(held))
        raise EngineCancelled("superseded")

    gc.disable()
    try:
        for _ in range(5):
            try:
                await client.run(job, CancelToken())
            except EngineCancelled:
                pass
        alive = sum(r() is not None for r in refs)
    finally:
        gc.enable()
        client.close()
    assert alive == 0, f"{alive} of 5 failed jobs' locals still held"
