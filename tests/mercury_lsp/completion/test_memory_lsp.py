"""The repository memory in the language server, end to end (``mercury-lsp serve``, the tiny
model, a raw client): the workspace is indexed after ``initialized`` with work-done progress and
a dynamically registered file watcher; a line the workspace already holds comes back as ghost
text; an open document, and a file changed on disk, override what was indexed the moment their
notification is handled."""

from __future__ import annotations

import json
import os

import pytest
import pytest_asyncio

from benchmarks.common.jsonrpc import AsyncLspClient
from tests.support.memory import write
from tests.support.server import serve_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

TAIL = """


def save_settings(path, settings):
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(settings, fh)
"""
MODELS = """\
import json


def load_settings(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh, object_hook=SettingsRecord.from_mapping)
""" + TAIL
HEAD = """\
import json


def read_other(path):
    with open(path, encoding="utf-8") as fh:
        return """
NEW = HEAD + TAIL
CAPS = {"general": {"positionEncodings": ["utf-16"]}, "textDocument": {"inlineCompletion": {}},
        "window": {"workDoneProgress": True},
        "workspace": {"workspaceFolders": True, "didChangeWatchedFiles": {"dynamicRegistration": True}}}
SHIPPED = {"memory": {"enabled": True}, "completion": {"minProbability": 0.2, "identifierCheck": True}}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tiny_model, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws").resolve()
    write(root, {"pkg/models.py": MODELS, "pkg/__init__.py": ""})
    c = await AsyncLspClient.start(*serve_command("--settings", json.dumps(SHIPPED)))
    await c.request("initialize", {
        "processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": CAPS,
        "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}], "initializationOptions": {}})
    c.notify("initialized", {})
    state = await c.wait_notification("mercury/status", lambda p: p["state"] in ("ready", "error"))
    assert state["state"] == "ready"
    await c.wait_notification("$/progress", lambda p: str(p["token"]).startswith("mercury-memory")
                              and p["value"]["kind"] == "end")
    yield c, root
    await c.shutdown()


def opened(c: AsyncLspClient, uri: str, text: str, version: int = 1) -> None:
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version,
                                                       "text": text}})


async def ghost(c: AsyncLspClient, uri: str, text: str, cursor: int) -> str | None:
    line = text.count("\n", 0, cursor)
    character = cursor - text.rfind("\n", 0, cursor) - 1
    result = await c.request("textDocument/inlineCompletion", {
        "textDocument": {"uri": uri}, "position": {"line": line, "character": character},
        "context": {"triggerKind": 2}})
    items = result["items"] if isinstance(result, dict) else result
    return items[0]["insertText"] if items else None


async def test_indexing_reports_progress_and_registers_the_watcher(server):
    c, _ = server
    kinds = [p["value"]["kind"] for p in c.notifications["$/progress"] if str(p["token"]).startswith("mercury-memory")]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    regs = [r for r in c.server_requests if r["method"] == "client/registerCapability"]
    assert [x["method"] for r in regs for x in r["params"]["registrations"]] == ["workspace/didChangeWatchedFiles"]


async def test_a_line_the_workspace_holds_comes_back_whole(server):
    c, root = server
    uri = (root / "pkg/new.py").as_uri()
    opened(c, uri, NEW)
    got = await ghost(c, uri, NEW, len(HEAD))
    assert got == "        return json.load(fh, object_hook=SettingsRecord.from_mapping)"
    c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


async def test_open_documents_and_changed_files_override_the_index(server):
    c, root = server
    models, new = root / "pkg/models.py", (root / "pkg/new.py").as_uri()
    cursor = MODELS.rindex("return ") + len("return ")
    cut = MODELS[:cursor] + MODELS[MODELS.index("\n", cursor):]
    # the file on disk is cut, then opened cut: its indexed line is never read again
    models.write_text(cut)
    c.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": models.as_uri(), "type": 2}]})
    opened(c, models.as_uri(), cut)
    assert await ghost(c, models.as_uri(), cut, cursor) != "        return json.load(fh, object_hook=SettingsRecord.from_mapping)"
    # another document asks while models.py is open with another line: the open text answers
    other = cut[:cursor] + "yaml.safe_load(fh)" + cut[cursor:]
    c.notify("textDocument/didChange", {"textDocument": {"uri": models.as_uri(), "version": 2},
                                        "contentChanges": [{"text": other}]})
    opened(c, new, NEW, version=3)
    assert await ghost(c, new, NEW, len(HEAD)) == "        return yaml.safe_load(fh)"
    c.notify("textDocument/didClose", {"textDocument": {"uri": new}})
    c.notify("textDocument/didClose", {"textDocument": {"uri": models.as_uri()}})


async def test_a_line_an_edit_removed_is_still_remembered(server):
    c, root = server
    moved = "        return msgpack.unpackb(fh.read(), strict_map_key=False)\n"
    source = (root / "pkg/source.py").as_uri()
    text = HEAD + moved[len("        return "):] + TAIL
    opened(c, source, text)
    start = text.index("        return msgpack")
    line = text.count("\n", 0, start)
    c.notify("textDocument/didChange", {"textDocument": {"uri": source, "version": 2}, "contentChanges": [
        {"range": {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}}, "text": ""}]})
    target = (root / "pkg/target.py").as_uri()
    opened(c, target, NEW)
    assert await ghost(c, target, NEW, len(HEAD)) == moved.rstrip("\n")  # the cut line, now in no document
    for uri in (source, target):
        c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
