"""Next edit on bad input: conflicting or overlapping histories, documents that are not open,
binary and huge documents, a cursor outside the document. No suggestion, no crash, and over the
protocol exactly one response per request."""

from __future__ import annotations

import pytest
import pytest_asyncio

from benchmarks.common.jsonrpc import AsyncLspClient, RpcError
from mercury_lsp.next_edit import DocState, NextEditQuery, predict
from mercury_lsp.syntax import Grammars
from tests.support.next_edit import ask as predicted
from tests.support.next_edit import doc
from tests.support.server import serve_command

G = Grammars()

INVALID_PARAMS = -32602
SRC = "def f(a):\n    return g(a, 1)\n\n\ndef h(b):\n    return g(b, 1)\n"


def query(text: str, history: tuple[str, ...], cursor: int = 0, uri: str = "file:///a.py") -> NextEditQuery:
    return NextEditQuery((DocState(uri, text, "python", 3, history, 1.0),), uri, cursor)


def test_conflicting_history_texts_give_no_crash_and_no_overlaps():
    after = SRC.replace("g(a, 1)", "g(a, 2)")
    # a history that does not chain (an unrelated text between), the same text twice, an empty one
    for history in ((SRC, "unrelated = 1\n"), (after, after), ("",), (SRC, SRC.replace("g(b, 1)", "g(b, 3)"))):
        out = predict(query(after, history, cursor=len(after) + 50), None, G)
        spans = sorted((p.start, p.end) for p in out.predictions)
        assert all(e0 <= s1 for (_, e0), (s1, _) in zip(spans, spans[1:], strict=False))
        assert all(0 <= s <= e <= len(after) for s, e in spans)


def test_overlapping_repeat_sites_are_offered_once():
    src = "x = scale(scale(1, 1))\ny = scale(scale(1, 1))\n"
    after = src.replace("x = scale(scale(1, 1))", "x = scale(scale(2, 1))")
    out = predict(query(after, (src,)), None, G)
    # NE204's '1' -> '2' at the inner call, NE207's whole line: one edit, the line's
    [p] = out.predictions
    assert (p.rule, p.old_text, p.new_text) == ("NE207", "y = scale(scale(1, 1))", "y = scale(scale(2, 1))")


def test_histories_that_do_not_chain_give_no_crash_and_no_overlaps():
    src = "x = compute(1)\ny = compute(1)\nprint('debugging here')\nz = 2\nprint('debugging here')\n"
    after = src.replace("x = compute(1)", "x = compute(2)").replace("print('debugging here')\n", "", 1)
    other = doc("file:///b.py", "print('debugging here')\n", ("unrelated\n", ""), (5.0, 9.0))
    for history, times in (((src, "unrelated = 1\n"), (2.0, 1.0)), ((after, after), (1.0, 1.0)), (("",), (1.0,)),
                           ((src, src), (3.0, 3.0)), ((src,), ())):
        preds = predicted(doc("file:///a.py", after, history, times), other, cursor=len(after) + 50)
        for uri, text in (("file:///a.py", after), ("file:///b.py", other.text)):
            spans = sorted((p.start, p.end) for p in preds if p.uri == uri)
            assert all(e0 <= s1 for (_, e0), (s1, _) in zip(spans, spans[1:], strict=False))
            assert all(0 <= s <= e <= len(text) for s, e in spans)


def test_binary_and_huge_documents_give_no_suggestion():
    binary = "\x00\x01\x02garbage\x00" * 100
    assert predict(query(binary + "x", (binary,), cursor=3), None, G).predictions == []
    huge_src = "value = compute(1)\n" * 60_000  # ~1 MB of identical lines: too generic to repeat
    huge = huge_src.replace("compute(1)", "compute(2)", 1)
    out = predict(query(huge, (huge_src,)), None, G)
    assert out.predictions == []


# ---------------------------------------------------------------------------- over the protocol
URI = "file:///work/b.py"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tiny_model):
    c = await AsyncLspClient.start(*serve_command())
    await c.initialize({}, capabilities={"general": {"positionEncodings": ["utf-16"]},
                                         "textDocument": {"synchronization": {}}})
    state = await c.wait_notification("mercury/status", lambda p: p["state"] in ("ready", "error"))
    assert state["state"] == "ready"
    yield c
    await c.shutdown()


def ask(uri: str, line: int, character: int, version: int | None = None) -> dict:
    doc = {"uri": uri} if version is None else {"uri": uri, "version": version}
    return {"textDocument": doc, "position": {"line": line, "character": character}}


@pytest.mark.asyncio(loop_scope="module")
async def test_bad_input_over_the_protocol_one_response_each(server: AsyncLspClient):
    server.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "python", "version": 1,
                                                            "text": SRC}})
    # overlapping content changes in one didChange, then a change to a document that is not open
    server.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2}, "contentChanges": [
        {"range": {"start": {"line": 1, "character": 13}, "end": {"line": 1, "character": 14}}, "text": "2"},
        {"range": {"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 15}}, "text": "q, 3"}]})
    server.notify("textDocument/didChange", {"textDocument": {"uri": "file:///work/closed.py", "version": 2},
                                             "contentChanges": [{"text": "x = 1\n"}]})
    ids = []
    with pytest.raises(RpcError) as err:  # edits to a file that is not open: a clear refusal
        mid, fut = server.request_future("mercury/nextEdit", ask("file:///work/closed.py", 0, 0))
        ids.append(mid)
        msg = await fut
        raise RpcError(msg["error"]) if "error" in msg else AssertionError(msg)
    assert err.value.code == INVALID_PARAMS and "not open" in err.value.message
    for line, character in ((500, 0), (7, 3), (-1, 0)):  # cursor outside the document
        mid, fut = server.request_future("mercury/nextEdit", ask(URI, line, character))
        ids.append(mid)
        assert (await fut)["error"]["code"] == INVALID_PARAMS
    binary = "\x00\x01\x02garbage\x00\n" * 50
    server.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///work/blob.py", "languageId": "python",
                                                            "version": 1, "text": binary}})
    server.notify("textDocument/didChange", {"textDocument": {"uri": "file:///work/blob.py", "version": 2},
                                             "contentChanges": [{"range": {"start": {"line": 0, "character": 0},
                                                                           "end": {"line": 0, "character": 1}},
                                                                 "text": "\x07"}]})
    huge_src = "value = compute(1)\n" * 60_000
    server.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///work/huge.py", "languageId": "python",
                                                            "version": 1, "text": huge_src}})
    server.notify("textDocument/didChange", {"textDocument": {"uri": "file:///work/huge.py", "version": 2},
                                             "contentChanges": [{"range": {"start": {"line": 0, "character": 16},
                                                                           "end": {"line": 0, "character": 17}},
                                                                 "text": "2"}]})
    for uri in ("file:///work/blob.py", "file:///work/huge.py"):
        mid, fut = server.request_future("mercury/nextEdit", ask(uri, 0, 1))
        ids.append(mid)
        msg = await fut
        assert "error" in msg or msg["result"]["edits"] == []
    # still serving, and every request above got exactly one response
    doc = (await server.request("mercury/nextEdit", ask(URI, 0, 0)))
    assert isinstance(doc["edits"], list)
    assert all(server.responses_seen[i] == 1 for i in ids)  # never a second response to one id
