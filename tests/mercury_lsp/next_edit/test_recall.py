"""What next edit asks the repository memory (``next_edit.recall``): a file that defines a name
(never an open or an excluded one), the words that finish a half-typed identifier, and, end to
end, the server giving a ``mercury/nextEdit`` request its workspace's memory once it is built."""

from __future__ import annotations

import json
import os

import pytest

from benchmarks.common.jsonrpc import AsyncLspClient
from mercury_lsp.memory import Memory, MemoryOptions
from mercury_lsp.next_edit.recall import best_word
from tests.support import memory as mem_support
from tests.support import next_edit as ne
from tests.support.server import serve_command

SHAPE_RS = "pub enum Shape {\n    Circle(f64),\n    Square { side: f64 },\n}\n"
DRAW_RS = "use crate::shape::Shape;\n\nfn draw(s: Shape) {\n    match s {\n        Shape::Circle(r) => r,\n    }\n}\n"


def test_the_defining_file_is_read_unless_it_is_open_or_excluded(tmp_path, monkeypatch):
    monkeypatch.setenv("MERCURY_LSP_CACHE", str(tmp_path / "cache"))
    ws = (tmp_path / "ws")
    mem_support.write(ws, {"src/shape.rs": SHAPE_RS, "src/secret.rs": "pub struct Token {\n    key: u8,\n}\n"})
    mem = mem_support.built(ws.resolve(), exclude=lambda p: p.name == "secret.rs")
    try:
        d = ne.doc((ws / "src/draw.rs").resolve().as_uri(), DRAW_RS, grammar="rust")
        recall = ne.recall(mem, d)
        shape_uri = (ws / "src/shape.rs").resolve().as_uri()
        found = recall.defining_file("Shape", {d.uri})
        assert found is not None and found.uri == shape_uri and found.text == SHAPE_RS and found.grammar == "rust"
        assert recall.defining_file("Shape", {d.uri, shape_uri}) is None  # open: the open document answers
        assert recall.defining_file("Token", {d.uri}) is None  # excluded: never indexed, never read
        assert recall.defining_file("Nowhere", {d.uri}) is None
    finally:
        mem.close()


def test_a_memory_not_built_yet_says_so():
    mem = Memory([], MemoryOptions(persist=False))
    assert not mem.ready  # the server gives next edit no memory until then (rules read the open documents)
    mem.start()
    assert mem.wait_built(mem_support.SETTLE_S) and mem.ready
    mem.close()


def test_the_one_word_is_the_only_one_or_the_only_one_past_the_gate():
    assert best_word({"getLogger": 0.05}, 0.2) == "getLogger"
    assert best_word({"getLogger": 0.6, "getLoggerClass": 0.1}, 0.2) == "getLogger"
    assert best_word({"getLogger": 0.6, "getLoggerClass": 0.3}, 0.2) is None
    assert best_word({"getLogger": 0.1, "getLoggerClass": 0.1}, 0.2) is None
    assert best_word({}, 0.2) is None


CAPS = {"general": {"positionEncodings": ["utf-32"]}, "window": {"workDoneProgress": True},
        "workspace": {"workspaceFolders": True}}


@pytest.mark.asyncio
async def test_the_server_gives_next_edit_the_workspace_memory(tiny_model, tmp_path, monkeypatch):
    monkeypatch.setenv("MERCURY_LSP_CACHE", str(tmp_path / "cache"))
    root = (tmp_path / "ws").resolve()
    mem_support.write(root, {"src/shape.rs": SHAPE_RS, "src/lib.rs": "pub mod shape;\npub mod draw;\n"})
    c = await AsyncLspClient.start(*serve_command("--settings", json.dumps({"memory": {"enabled": True}})))
    try:
        await c.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": CAPS,
                                       "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}]})
        c.notify("initialized", {})
        state = await c.wait_notification("mercury/status", lambda p: p["state"] in ("ready", "error"))
        assert state["state"] == "ready"
        await c.wait_notification("$/progress", lambda p: str(p["token"]).startswith("mercury-memory")
                                  and p["value"]["kind"] == "end")
        uri = (root / "src/draw.rs").as_uri()
        c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "rust", "version": 1,
                                                           "text": DRAW_RS}})
        at = DRAW_RS.index("    }\n}")
        c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 5, "character": 0}, "end": {"line": 5, "character": 0}},
             "text": "        Shape::Sq\n"}]})
        assert DRAW_RS[:at].count("\n") == 5
        result = await c.request("mercury/nextEdit", {"textDocument": {"uri": uri, "version": 2},
                                                      "position": {"line": 5, "character": len("        Shape::Sq")}})
        got = [(e["rule"], e["newText"]) for e in result["edits"]]
        assert ("NE504", "uare") in got
    finally:
        await c.shutdown()


def test_line_endings_pass_the_ghost_texts_gate_weighed_by_length(monkeypatch):
    """Next edit's memory endings are gated as the ghost text is (``rank.gate_score``): at the same
    probability a long rest of line passes where a two-character one does not."""
    from types import SimpleNamespace

    from mercury_lsp.completion.rank import Scored, gate_score
    from mercury_lsp.config import Settings
    from mercury_lsp.next_edit.recall import Recall

    gate = Settings().completion
    p = gate.min_probability * 1.05  # just past the plain probability gate
    long_rest = "parse_config(fh.read(), strict=True)"

    def ranked(cands, draft, line_before, ranker=None, doc=None, length_weight=0.0):  # the ranker's probability: p for both
        return [Scored(t, p, {"covers_line": 1.0}, "memory", gate_score(p, t, length_weight)) for t in ("x)", long_rest)]

    monkeypatch.setattr("mercury_lsp.completion.choose.rank", ranked)
    request = SimpleNamespace(memory=SimpleNamespace(candidates=lambda ctx, docs: []), open_docs=(),
                              context=lambda *a: None, grammar="python")
    assert Recall(request, gate.min_probability, gate.length_weight).endings("file:///a.py", "", 0) == [long_rest]
    assert Recall(request, gate.min_probability, 0.0).endings("file:///a.py", "", 0) == ["x)", long_rest]
