"""Next edit through ``mercury-lsp serve`` with ``backend`` pointed at a live ``mercury-lsp http``:
the local engine's next-edit protocol tests (tests/mercury_lsp/next_edit/test_handlers.py), collected here
against the remote backend (the server predicts, with the client's ``nextEdit`` settings)."""

from __future__ import annotations

import json

import pytest
import pytest_asyncio

from tests.mercury_lsp.next_edit import test_handlers as local
from tests.support.http import LiveServer, free_port
from tests.support.server import serve_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

HTTP_PORT = free_port()
BACKEND = {"backend": {"url": f"http://127.0.0.1:{HTTP_PORT}", "api": "mercury"}}

test_next_edit_returns_the_other_occurrences = local.test_next_edit_returns_the_other_occurrences
test_copilot_inline_edit_shape = local.test_copilot_inline_edit_shape
test_code_action_carries_one_versioned_workspace_edit = local.test_code_action_carries_one_versioned_workspace_edit
test_apply_command_sends_one_workspace_edit = local.test_apply_command_sends_one_workspace_edit
test_next_edit_refuses_stale_versions_and_bad_positions = local.test_next_edit_refuses_stale_versions_and_bad_positions
test_next_edit_follows_the_next_edit_settings = local.test_next_edit_follows_the_next_edit_settings


@pytest.fixture(scope="module")
def remote_http(tiny_model):
    srv = LiveServer(model=tiny_model, port=HTTP_PORT).start().ready()
    yield srv
    srv.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(remote_http):
    c = await local.Client.start(*serve_command("--settings", json.dumps(BACKEND)))
    await c.initialize({}, capabilities={"general": {"positionEncodings": ["utf-16"]},
                                         "textDocument": {"synchronization": {}},
                                         "workspace": {"applyEdit": True}})
    state = await c.wait_notification("mercury/status", lambda p: p["state"] in ("ready", "error"))
    assert state["state"] == "ready" and state["engine"]["device"] == "remote"
    c.notify("textDocument/didOpen", {"textDocument": {"uri": local.URI, "languageId": "python", "version": 1,
                                                       "text": local.TEXT}})
    c.notify("textDocument/didChange", {
        "textDocument": {"uri": local.URI, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 14}},
                            "text": "w"}]})
    yield c
    await c.shutdown()
