"""Content exclusion against a remote backend: ``mercury-lsp serve`` with ``backend`` pointed at a
recording server (tests/support/fim_server.py) never sends an excluded file's text — not when a
suggestion is asked in it, not as another open document of a next-edit query, not as a workspace
file on disk that mentions the renamed name — while the files beside it do reach the backend."""

from __future__ import annotations

import json
import os

import pytest
import pytest_asyncio

from benchmarks.common.jsonrpc import AsyncLspClient
from tests.support.fim_server import RecordingFimServer
from tests.support.server import serve_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

SHAPES = "def area(width, height):\n    return width * height\n\n\ndef square(side):\n    return area(side, side)\n"
USES = "from shapes import area\n\n\ndef total(rects):\n    return sum(area(w, h) for w, h in rects)\n"
# Excluded by the default globs: .env*, *secret* (a file, and a folder on disk).
DOTENV = "API_TOKEN=SEKRIT-DOTENV-7f3a\nDB_URL=postgres://u:SEKRIT-PW@db\n"
SECRET_OPEN = "from shapes import area\n\nTOKEN = 'SEKRIT-OPEN-91c2'\nprint(area(1, 2))\n"
SECRET_DISK = "from shapes import area\n\nKEY = 'SEKRIT-DISK-5e10'\nprint(area(3, 4))\n"
MARKER = "SEKRIT"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    (root / "shapes.py").write_text(SHAPES)
    (root / "uses.py").write_text(USES)
    (root / ".env").write_text(DOTENV)
    (root / "secret_settings.py").write_text(SECRET_OPEN)
    (root / "secrets").mkdir()
    (root / "secrets" / "keys.py").write_text(SECRET_DISK)
    with RecordingFimServer(model="recorder") as backend:
        settings = {"backend": {"api": "mercury", "url": backend.url}}
        c = await AsyncLspClient.start(*serve_command("--settings", json.dumps(settings)))
        await c.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
            "capabilities": {"general": {"positionEncodings": ["utf-16"]}, "textDocument": {"synchronization": {}}},
            "initializationOptions": {"syntaxGuard": "off"}})
        c.notify("initialized", {})
        state = await c.wait_notification("mercury/status", lambda p: p["state"] in ("ready", "error"))
        assert state["state"] == "ready" and state["engine"]["device"] == "remote"
        for name, lang, text in ((".env", "dotenv", DOTENV), ("secret_settings.py", "python", SECRET_OPEN),
                                 ("shapes.py", "python", SHAPES)):
            c.notify("textDocument/didOpen", {"textDocument": {"uri": (root / name).as_uri(), "languageId": lang,
                                                               "version": 1, "text": text}})
        yield c, root, backend
        await c.shutdown()


async def _inline(c: AsyncLspClient, uri: str, line: int, character: int) -> list:
    result = await c.request("textDocument/inlineCompletion", {
        "textDocument": {"uri": uri}, "position": {"line": line, "character": character},
        "context": {"triggerKind": 1}})
    return (result or {}).get("items", []) if isinstance(result, dict) else (result or [])


async def test_no_suggestion_is_asked_for_in_an_excluded_file(served):
    c, root, backend = served
    before = len(backend.bodies)
    assert await _inline(c, (root / ".env").as_uri(), 0, 10) == []
    assert await _inline(c, (root / "secret_settings.py").as_uri(), 3, 5) == []
    assert len(backend.bodies) == before  # nothing was sent
    # The file beside them is served through the backend (so the check above could have failed).
    items = await _inline(c, (root / "shapes.py").as_uri(), 1, 11)
    assert len(backend.bodies) == before + 1 and "def area(width" in backend.bodies[-1]
    assert items and MARKER not in backend.sent()


async def test_next_edit_sends_neither_excluded_open_documents_nor_excluded_workspace_files(served):
    c, root, backend = served
    c.notify("textDocument/didChange", {  # rename the function at its definition: area -> surface
        "textDocument": {"uri": (root / "shapes.py").as_uri(), "version": 2},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 8}},
                            "text": "surface"}]})
    await c.request("textDocument/codeAction", {  # one query with the workspace files inline
        "textDocument": {"uri": (root / "shapes.py").as_uri()},
        "range": {"start": {"line": 0, "character": 5}, "end": {"line": 0, "character": 5}},
        "context": {"diagnostics": []}})
    [query] = [json.loads(b) for b in backend.bodies if '"cursorUri"' in b]
    sent = {f["uri"].rsplit("/", 1)[1] for f in query["files"]}
    assert sent == {"shapes.py", "uses.py"}  # the open document and the workspace file that mentions `area`
    assert MARKER not in backend.sent()
