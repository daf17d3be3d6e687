"""Next edit over the real protocol (raw JSON-RPC client, `mercury-lsp serve` on a tiny model):
``mercury/nextEdit``, ``textDocument/copilotInlineEdit``, the "Apply predicted edits" code action
and the ``mercury.applyEdits`` command, including the refusals (nothing applied partially)."""

from __future__ import annotations

import pytest
import pytest_asyncio

from benchmarks.common.jsonrpc import AsyncLspClient, RpcError
from mercury_lsp.next_edit import apply_edits
from tests.support.server import serve_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

INVALID_PARAMS, CONTENT_MODIFIED = -32602, -32801
URI = "file:///work/area.py"
TEXT = ("def area(width, height):\n    total = width * height\n    return total + width  # width\n\n\n"
        "print(area(1, 2), '\U0001f600', width)\n")
# The user renames the parameter at its definition: line 0, characters 9..14.
RENAMED = TEXT.replace("def area(width,", "def area(w,", 1)


def lines_cols(text: str, offset: int) -> tuple[int, int]:
    before = text[:offset]
    line = before.count("\n")
    col = before[before.rfind("\n") + 1:]
    return line, len(col.encode("utf-16-le")) // 2


def apply_lsp(text: str, edits: list[dict]) -> str:
    lines = text.split("\n")

    def off(p):
        line = lines[p["line"]]
        units = 0
        for i, ch in enumerate(line):
            if units >= p["character"]:
                return sum(len(x) + 1 for x in lines[: p["line"]]) + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return sum(len(x) + 1 for x in lines[: p["line"]]) + len(line)

    return apply_edits(text, [(off(e["range"]["start"]), off(e["range"]["end"]), e.get("newText", e.get("text")))
                              for e in edits])


def applied(method: str, params) -> dict | None:
    """``workspace/applyEdit`` answered as an editor that applied it (other requests: null)."""
    return {"applied": True} if method == "workspace/applyEdit" else None


class Client(AsyncLspClient):
    """A client that applies the server's edits."""

    @classmethod
    async def start(cls, *cmd: str, **kw) -> Client:
        return await super().start(*cmd, on_request=applied, **kw)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tiny_model):
    c = await Client.start(*serve_command())
    await c.initialize({}, capabilities={"general": {"positionEncodings": ["utf-16"]},
                                         "textDocument": {"synchronization": {}},
                                         "workspace": {"applyEdit": True}})
    state = await c.wait_notification("mercury/status", lambda p: p["state"] in ("ready", "error"))
    assert state["state"] == "ready"
    c.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "python", "version": 1,
                                                       "text": TEXT}})
    c.notify("textDocument/didChange", {
        "textDocument": {"uri": URI, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 14}},
                            "text": "w"}]})
    yield c
    await c.shutdown()


def params(version=2, line=0, character=10):
    return {"textDocument": {"uri": URI, "version": version}, "position": {"line": line, "character": character}}


async def test_next_edit_returns_the_other_occurrences(server: AsyncLspClient):
    result = await server.request("mercury/nextEdit", params())
    assert result["positionEncoding"] == "utf-16" and result["model"] and result["version"]
    assert set(result["timings"]) == {"candidates_ms", "model_ms", "total_ms"}
    edits = result["edits"]
    # The two uses in the body; not the comment, not the module-level `width` outside the scope.
    starts = sorted((e["range"]["start"]["line"], e["range"]["start"]["character"]) for e in edits)
    assert starts == [(1, 12), (2, 19)]
    for e in edits:
        assert e["uri"] == URI and e["newText"] == "w" and e["oldText"] == "width"
        assert e["documentVersion"] == 2 and e["kind"] == "rename" and 0.0 <= e["confidence"] <= 1.0
        assert "parameter 'width' was renamed to 'w'" in e["reason"]
    assert apply_lsp(RENAMED, edits) == TEXT.replace("width", "w").replace("# w", "# width").replace(
        "'\U0001f600', w)", "'\U0001f600', width)")


async def test_copilot_inline_edit_shape(server: AsyncLspClient):
    result = await server.request("textDocument/copilotInlineEdit", params())
    assert set(result) == {"edits"} and len(result["edits"]) == 2
    for e in result["edits"]:
        assert e["text"] == "w" and e["textDocument"] == {"uri": URI, "version": 2}
        assert set(e["range"]) == {"start", "end"}
    server.notify("textDocument/didShowInlineEdit", {"item": result["edits"][0]})  # accepted silently


async def test_code_action_carries_one_versioned_workspace_edit(server: AsyncLspClient):
    actions = await server.request("textDocument/codeAction", {
        "textDocument": {"uri": URI}, "range": {"start": {"line": 0, "character": 10},
                                                "end": {"line": 0, "character": 10}},
        "context": {"diagnostics": []}})
    assert len(actions) == 1
    action = actions[0]
    assert action["title"].startswith("Apply predicted edits (2 locations")
    (change,) = action["edit"]["documentChanges"]
    assert change["textDocument"] == {"uri": URI, "version": 2}
    assert "width" not in apply_lsp(RENAMED, change["edits"]).split("\n")[1]


async def test_apply_command_sends_one_workspace_edit(server: AsyncLspClient):
    edits = (await server.request("mercury/nextEdit", params()))["edits"]
    before = len(server.server_requests)
    result = await server.request("workspace/executeCommand", {"command": "mercury.applyEdits",
                                                               "arguments": [{"edits": edits}]})
    assert result["applied"] is True
    sent = server.server_requests[before:]
    assert [m["method"] for m in sent] == ["workspace/applyEdit"]
    (change,) = sent[0]["params"]["edit"]["documentChanges"]
    assert change["textDocument"]["version"] == 2 and len(change["edits"]) == 2


@pytest.mark.parametrize("mutate, code, message", [
    (lambda es: [{**es[0], "documentVersion": 1}, es[1]], CONTENT_MODIFIED, "now at version 2"),
    (lambda es: [es[0], {**es[0], "newText": "x"}], INVALID_PARAMS, "overlapping"),
    (lambda es: [es[0], {**es[1], "range": {"start": {"line": 40, "character": 0},
                                            "end": {"line": 40, "character": 1}}}], INVALID_PARAMS,
     "beyond the end of the document"),
    (lambda es: [es[0], {**es[1], "range": {"start": {"line": 1, "character": 4},
                                            "end": {"line": 1, "character": 400}}}], INVALID_PARAMS,
     "beyond the end of line 1"),
    (lambda es: [{**es[0], "uri": "file:///nope.py"}], INVALID_PARAMS, "not open"),
    (lambda es: [{"uri": URI}], INVALID_PARAMS, "invalid params"),
])
async def test_apply_command_refuses_bad_edits_whole(server: AsyncLspClient, mutate, code, message):
    edits = (await server.request("mercury/nextEdit", params()))["edits"]
    before = len(server.server_requests)
    with pytest.raises(RpcError) as err:
        await server.request("workspace/executeCommand", {"command": "mercury.applyEdits",
                                                          "arguments": [{"edits": mutate(edits)}]})
    assert err.value.code == code and message in err.value.message
    assert server.server_requests[before:] == []  # nothing applied, not even the good edit


async def test_next_edit_refuses_stale_versions_and_bad_positions(server: AsyncLspClient):
    with pytest.raises(RpcError) as err:
        await server.request("mercury/nextEdit", params(version=1))
    assert err.value.code == CONTENT_MODIFIED and "stale" in err.value.message
    with pytest.raises(RpcError) as err:
        await server.request("mercury/nextEdit", params(line=99))
    assert err.value.code == INVALID_PARAMS and "past the end" in err.value.message
    with pytest.raises(RpcError) as err:
        await server.request("mercury/nextEdit", {"textDocument": {"uri": URI}})
    assert err.value.code == INVALID_PARAMS
    with pytest.raises(RpcError) as err:
        await server.request("mercury/nextEdit", {**params(), "textDocument": {"uri": "file:///nope.py"}})
    assert err.value.code == INVALID_PARAMS and "not open" in err.value.message
    assert len((await server.request("mercury/nextEdit", params()))["edits"]) == 2  # still serving


async def test_next_edit_follows_the_next_edit_settings(server: AsyncLspClient):
    server.notify("workspace/didChangeConfiguration",
                  {"settings": {"mercury": {"nextEdit": {"maxCandidates": 1}}}})
    edits = (await server.request("mercury/nextEdit", params()))["edits"]  # not the cached answer
    assert len(edits) == 1
    server.notify("workspace/didChangeConfiguration", {"settings": {"mercury": {}}})  # back to the defaults
    edits = (await server.request("mercury/nextEdit", params()))["edits"]
    # a rename the syntax determines never waits for the model
    assert len(edits) == 2 and all(e["source"] == "syntax" and e["confidence"] == 0.8 for e in edits)


async def test_edits_of_other_documents_carry_their_current_version(server: AsyncLspClient):
    """A prediction for one document reads every open one: the code action never carries another
    document's edits at a version it has left (the cached answer included), so an editor that
    checks versions (eglot) can apply it."""
    area = "def area(width, height):\n    total = width * height\n    return total + width\n"
    one, two = "file:///work/one.py", "file:///work/two.py"
    rename = {"range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 14}}, "text": "w"}
    for uri in (two, one):  # both renamed at the def, two.py first
        server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                               "text": area}})
        server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                 "contentChanges": [rename]})
    at = {"start": {"line": 0, "character": 10}, "end": {"line": 0, "character": 10}}

    async def versions() -> dict[str, int]:
        (action,) = await server.request("textDocument/codeAction", {
            "textDocument": {"uri": one}, "range": at, "context": {"diagnostics": []}})
        return {c["textDocument"]["uri"]: c["textDocument"]["version"] for c in action["edit"]["documentChanges"]}

    assert await versions() == {one: 2, two: 2}
    # two.py moves on (its uses renamed by hand); one.py has not changed, so it asks again.
    server.notify("textDocument/didChange", {"textDocument": {"uri": two, "version": 3},
                                             "contentChanges": [{"text": area.replace("width", "w")}]})
    assert await versions() == {one: 2}  # not two.py's edits at version 2: nothing is left to do there
    for uri in (one, two):
        server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


async def test_a_rename_through_all_and_its_notes_over_the_wire(server: AsyncLspClient):
    """An editor's rename at a ``def``: ``__all__`` and the importer follow, a ``getattr`` string
    comes back as a note (``notes``), never as an edit."""
    core, init = "file:///work/pkg/core.py", "file:///work/pkg/__init__.py"
    text = 'def greet(name):\n    return name\n\n__all__ = ["greet"]\n'
    text2 = 'from .core import greet\nfrom . import core\n\nf = getattr(core, "greet")\n'
    server.notify("textDocument/didOpen", {"textDocument": {"uri": init, "languageId": "python", "version": 1,
                                                           "text": text2}})
    server.notify("textDocument/didOpen", {"textDocument": {"uri": core, "languageId": "python", "version": 1,
                                                           "text": text}})
    server.notify("textDocument/didChange", {"textDocument": {"uri": core, "version": 2}, "contentChanges": [
        {"range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}}, "text": "welcome"}]})
    result = await server.request("mercury/nextEdit", {"textDocument": {"uri": core, "version": 2},
                                                       "position": {"line": 0, "character": 11}})
    by_uri = {}
    for e in result["edits"]:
        by_uri.setdefault(e["uri"], []).append(e)
    assert apply_lsp(text.replace("def greet", "def welcome"), by_uri[core]).endswith('__all__ = ["welcome"]\n')
    assert apply_lsp(text2, by_uri[init]).startswith("from .core import welcome\n")
    (note,) = result["notes"]
    assert (note["uri"], note["rule"], note["documentVersion"]) == (init, "NE101", 1)
    assert note["range"]["start"] == {"line": 3, "character": 19} and "'greet'" in note["message"]
    for uri in (core, init):
        server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
