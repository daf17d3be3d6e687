"""End to end over the real protocol (pytest-lsp): `python -m mercury_lsp.cli serve` on a tiny
random-weights model. No sleeps: tests wait for notifications, progress and responses."""

from __future__ import annotations

import asyncio

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import make_test_lsp_client

from tests.support.server import PROBE_TEXT, probe_positions, serve_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

URI = "file:///work/demo.py"
TEXT = "import os\n\n\ndef add(a, b):\n    return a\n"


def make_client() -> LanguageClient:
    client = make_test_lsp_client()
    client.mercury_status = []
    client.mercury_ready = asyncio.Event()

    @client.feature("mercury/status")
    def on_status(ls, params):
        client.mercury_status.append(params)
        if params.state in ("ready", "error"):
            client.mercury_ready.set()

    return client


CAPS = lsp.ClientCapabilities(
    general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf16]),
    window=lsp.WindowClientCapabilities(work_done_progress=True, show_message=lsp.ShowMessageRequestClientCapabilities()),
    workspace=lsp.WorkspaceClientCapabilities(configuration=True),
    text_document=lsp.TextDocumentClientCapabilities(
        synchronization=lsp.TextDocumentSyncClientCapabilities(),
        inline_completion=lsp.InlineCompletionClientCapabilities(),
        completion=lsp.CompletionClientCapabilities(),
    ),
)


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=serve_command(), client_factory=make_client))
async def client(lsp_client: LanguageClient, tiny_model):
    lsp_client.init_result = await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=CAPS, initialization_options={"syntaxGuard": "off", "maxTokens": 16, "bogusOption": 1}))
    await asyncio.wait_for(lsp_client.mercury_ready.wait(), 120)
    yield
    await lsp_client.shutdown_session()


def open_doc(client: LanguageClient, uri: str = URI, text: str = TEXT, version: int = 1) -> None:
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))


def type_text(client: LanguageClient, uri: str, version: int, line: int, col: int, text: str) -> int:
    """Type ``text`` one character per didChange (incremental); returns the last version."""
    for ch in text:
        version += 1
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [lsp.TextDocumentContentChangePartial(range=lsp.Range(lsp.Position(line, col), lsp.Position(line, col)),
                                                  text=ch)]))
        col += 1
    return version


async def inline(client: LanguageClient, uri: str, line: int, col: int):
    return await client.text_document_inline_completion_async(lsp.InlineCompletionParams(
        context=lsp.InlineCompletionContext(trigger_kind=lsp.InlineCompletionTriggerKind.Automatic),
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line, col)))


async def find_suggestion(client: LanguageClient, uri: str, min_chars: int = 1):
    """Open PROBE_TEXT at ``uri``; (line, col, item) of the first real suggestion in it."""
    open_doc(client, uri, PROBE_TEXT)
    for line, col in probe_positions():
        result = await inline(client, uri, line, col)
        lines = PROBE_TEXT.split("\n")
        if result.items and len(result.items[0].insert_text) >= len(lines[line]) + min_chars:
            return line, col, result.items[0]
    raise AssertionError("the tiny model suggested nothing anywhere in PROBE_TEXT")


async def stats(client: LanguageClient) -> dict:
    result = await client.protocol.send_request_async("mercury/stats", {})
    return {"counters": result.counters._asdict()}


def configure(client: LanguageClient, settings: dict) -> None:
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"mercury": settings}))


async def test_initialize_capabilities_progress_and_settings_warning(client: LanguageClient):
    caps = client.init_result.capabilities
    assert caps.inline_completion_provider is not None
    assert caps.completion_provider is not None
    assert caps.position_encoding == lsp.PositionEncodingKind.Utf16
    assert caps.text_document_sync.change == lsp.TextDocumentSyncKind.Incremental
    assert client.init_result.server_info.name == "mercury-lsp"
    # The model loaded in the background, reported with work-done progress begin ... end.
    kinds = [p.kind for reports in client.progress_reports.values() for p in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    assert [s.state for s in client.mercury_status] == ["loading", "ready"]
    # The invalid option was named in one warning.
    warnings = [m.message for m in client.messages if m.type == lsp.MessageType.Warning]
    assert len(warnings) == 1 and "bogusOption" in warnings[0]


async def test_inline_completion_after_incremental_typing_and_cache(client: LanguageClient):
    line, col, found = await find_suggestion(client, "file:///work/probe.py", min_chars=2)
    # Type that line again, character by character, into a fresh document.
    uri = "file:///work/typing.py"
    lines = PROBE_TEXT.split("\n")
    head = lines[line][:col]
    lines[line] = ""
    open_doc(client, uri, "\n".join(lines))
    version = type_text(client, uri, 1, line, 0, head)
    result = await inline(client, uri, line, col)
    assert len(result.items) == 1
    item = result.items[0]
    assert item.range.start == lsp.Position(line, 0) and item.range.end == lsp.Position(line, col)
    assert item.insert_text == found.insert_text  # same text, same suggestion: deterministic
    suggestion = item.insert_text[col:]
    before = await stats(client)
    # Typing the first character of the suggestion is answered from the cache.
    type_text(client, uri, version, line, col, suggestion[0])
    again = await inline(client, uri, line, col + 1)
    assert again.items[0].insert_text == item.insert_text
    after = await stats(client)
    assert after["counters"]["cacheHits"] == before["counters"]["cacheHits"] + 1


async def test_completion_fallback(client: LanguageClient):
    uri = "file:///work/fallback.py"
    line, col, found = await find_suggestion(client, uri)
    params = lsp.CompletionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line, col))
    # This client has ghost text: the fallback stays quiet ("auto")...
    assert not (await client.text_document_completion_async(params)).items
    # ...unless asked for.
    configure(client, {"completionFallback": "always", "syntaxGuard": "off", "maxTokens": 16})
    try:
        result = await client.text_document_completion_async(params)
        assert result.is_incomplete and len(result.items) == 1
        item = result.items[0]
        suggestion = found.insert_text[col:]
        text_line = PROBE_TEXT.split("\n")[line]
        word_start = len(text_line.rstrip("abcdefghijklmnopqrstuvwxyz_0123456789"))
        word = text_line[word_start:]
        assert item.text_edit.new_text == word + suggestion
        assert item.text_edit.range == lsp.Range(lsp.Position(line, word_start), lsp.Position(line, col))
        assert item.filter_text.startswith(word) and item.label.startswith((word + suggestion).strip()[:5])
    finally:
        configure(client, {})


async def test_cancel_request(client: LanguageClient):
    uri = "file:///work/cancel.py"
    open_doc(client, uri, TEXT)
    configure(client, {"debounceMs": 5000})
    try:
        fut = client.protocol.send_request(lsp.TEXT_DOCUMENT_INLINE_COMPLETION, lsp.InlineCompletionParams(
            context=lsp.InlineCompletionContext(trigger_kind=lsp.InlineCompletionTriggerKind.Invoked),
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(4, 12)), msg_id="cancel-me")
        client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id="cancel-me"))
        with pytest.raises(JsonRpcException) as err:
            await asyncio.wrap_future(fut)
        assert err.value.code == lsp.LSPErrorCodes.RequestCancelled
    finally:
        configure(client, {})
    assert (await stats(client))["counters"]["cancelled"] >= 1


async def test_newer_request_supersedes_older(client: LanguageClient):
    line, col, _ = await find_suggestion(client, "file:///work/probe.py")
    uri = "file:///work/supersede.py"
    open_doc(client, uri, PROBE_TEXT)
    configure(client, {"debounceMs": 300, "syntaxGuard": "off", "maxTokens": 16})
    try:
        first = asyncio.ensure_future(inline(client, uri, line, col - 1))
        second = asyncio.ensure_future(inline(client, uri, line, col))
        old, new = await first, await second
        assert not old.items  # answered empty, never stale text
        assert len(new.items) == 1
    finally:
        configure(client, {})
    assert (await stats(client))["counters"]["superseded"] >= 1


async def test_result_for_an_old_version_is_dropped(client: LanguageClient):
    uri = "file:///work/stale.py"
    open_doc(client, uri, TEXT)
    # No prefetch: the edit's prefetch would supersede the request (counted as superseded); this
    # test holds the version check made when the answer comes back.
    configure(client, {"debounceMs": 300, "syntaxGuard": "off", "maxTokens": 16, "prefetch": False})
    try:
        pending = client.protocol.send_request(lsp.TEXT_DOCUMENT_INLINE_COMPLETION, lsp.InlineCompletionParams(
            context=lsp.InlineCompletionContext(trigger_kind=lsp.InlineCompletionTriggerKind.Automatic),
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(4, 12)))
        type_text(client, uri, 1, 0, 0, "#")  # the document moves on while the request runs
        assert not (await asyncio.wrap_future(pending)).items
    finally:
        configure(client, {})
    assert (await stats(client))["counters"]["stale"] >= 1


async def test_configuration_change_validated(client: LanguageClient):
    n = len(client.messages)
    configure(client, {"maxTokens": "lots", "preset": "balanced", "syntaxGuard": "off"})
    _, _, found = await find_suggestion(client, "file:///work/config.py")  # still serving
    assert found.insert_text
    new = [m.message for m in client.messages[n:]]
    assert len(new) == 1 and "maxTokens" in new[0] and "preset" not in new[0]
    configure(client, {})
