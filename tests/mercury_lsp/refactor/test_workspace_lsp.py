"""Multi-file next edit in the language server: predicted edits in other open documents and in
workspace files that are not open come back as one ``WorkspaceEdit`` code action, each document
with its version (``null`` for a file on disk). Real protocol, ``mercury-lsp serve``, tiny model."""

from __future__ import annotations

import os

import pytest
import pytest_asyncio

from benchmarks.common.jsonrpc import AsyncLspClient
from tests.support.server import serve_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

SHAPES = "def area(width, height):\n    return width * height\n\n\ndef square(side):\n    return area(side, side)\n"
USES = "from shapes import area\n\n\ndef total(rects):\n    return sum(area(w, h) for w, h in rects)\n"
REPORT = "import shapes\nfrom shapes import area\n\nprint(area(2, 3))\n"
OTHER = "def area_of_circle(r):\n    return 3.14 * r * r\n"  # mentions no 'area' identifier use


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tiny_model, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    for name, text in {"shapes.py": SHAPES, "uses.py": USES, "report.py": REPORT, "circle.py": OTHER}.items():
        (root / name).write_text(text)
    (root / ".gitignore").write_text("ignored.py\n")
    (root / "ignored.py").write_text(USES)
    c = await AsyncLspClient.start(*serve_command())
    await c.request("initialize", {
        "processId": os.getpid(), "rootUri": root.as_uri(),
        "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
        "capabilities": {"general": {"positionEncodings": ["utf-16"]}, "textDocument": {"synchronization": {}}},
        "initializationOptions": {}})
    c.notify("initialized", {})
    state = await c.wait_notification("mercury/status", lambda p: p["state"] in ("ready", "error"))
    assert state["state"] == "ready"
    for name, text in (("shapes.py", SHAPES), ("report.py", REPORT)):
        c.notify("textDocument/didOpen", {"textDocument": {"uri": (root / name).as_uri(), "languageId": "python",
                                                           "version": 1, "text": text}})
    c.notify("textDocument/didChange", {  # rename the function at its definition: area -> surface
        "textDocument": {"uri": (root / "shapes.py").as_uri(), "version": 2},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 8}},
                            "text": "surface"}]})
    yield c, root
    await c.shutdown()


async def test_one_code_action_edits_open_and_workspace_files(server):
    c, root = server
    actions = await c.request("textDocument/codeAction", {
        "textDocument": {"uri": (root / "shapes.py").as_uri()},
        "range": {"start": {"line": 0, "character": 5}, "end": {"line": 0, "character": 5}},
        "context": {"diagnostics": []}})
    assert len(actions) == 1
    changes = {ch["textDocument"]["uri"]: ch for ch in actions[0]["edit"]["documentChanges"]}
    assert set(changes) == {(root / n).as_uri() for n in ("shapes.py", "uses.py", "report.py")}
    assert changes[(root / "shapes.py").as_uri()]["textDocument"]["version"] == 2  # open, edited
    assert changes[(root / "report.py").as_uri()]["textDocument"]["version"] == 1  # open
    assert changes[(root / "uses.py").as_uri()]["textDocument"]["version"] is None  # on disk only
    counts = {uri.rsplit("/", 1)[1]: len(ch["edits"]) for uri, ch in changes.items()}
    assert counts == {"shapes.py": 1, "uses.py": 2, "report.py": 2}
    assert all(e["newText"] == "surface" for ch in changes.values() for e in ch["edits"])
    assert actions[0]["title"] == "Apply predicted edits (5 locations in 3 files)"


async def test_next_edit_answers_open_documents_then_sends_workspace_files_as_one_update(server):
    c, root = server
    shapes, uses, report = ((root / n).as_uri() for n in ("shapes.py", "uses.py", "report.py"))
    result = await c.request("mercury/nextEdit", {"textDocument": {"uri": shapes, "version": 2},
                                                  "position": {"line": 0, "character": 11}})
    assert result["updatePending"] is True
    assert {e["uri"] for e in result["edits"]} == {shapes, report}  # open documents: at once
    update = await c.wait_notification("mercury/nextEditUpdate",
                                       lambda p: p["textDocument"] == {"uri": shapes, "version": 2})
    assert update["update"] == 2
    edits = update["result"]["edits"]
    assert [(e["uri"], e["documentVersion"], e["newText"]) for e in edits] == [(uses, None, "surface")] * 2
    assert len(c.notifications["mercury/nextEditUpdate"]) == 1  # one update per answer
