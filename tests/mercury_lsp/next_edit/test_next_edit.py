"""mercury_lsp/next_edit/ (candidates, refill decisions, output), the edit history it reads, and
the ``next-edit`` / ``schema`` commands. Syntax tests run without a model; model tests use the
tiny random checkpoint or a scripted fake model."""

from __future__ import annotations

import msgspec
import pytest

from mercury_lsp import cli
from mercury_lsp.documents import DocumentStore, PositionEncoding
from mercury_lsp.engine_client import CancelToken, EngineCancelled
from mercury_lsp.next_edit import (
    DocState,
    EngineEdits,
    NextEditOptions,
    NextEditQuery,
    apply_edits,
    identifier_change,
    predict,
    to_result,
)
from mercury_lsp.next_edit.command import PatchError, apply_unified_diff
from mercury_lsp.next_edit.service import doc_state
from mercury_lsp.schema import NextEditResult
from mercury_lsp.syntax import Grammars, grammar_for
from tests.support.fakes import ScriptedModel

G = Grammars()

SRC = '''def area(width, height):
    total = width * height
    def inner(width):
        return width
    scale = lambda width: width * 2
    print(f(width=width), obj.width, [width for width in range(3)], f"{width}")
    return total + width

width = 3
x = area(1, 2)
y = area(3, 4)
'''


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def run(after: str, before: str, *others: DocState, model=None, uri="file:///a.py", cursor=0,
        options: NextEditOptions | None = None):
    docs = (DocState(uri, after, grammar_for("", uri), 7, (before,), 1.0), *others)
    q = NextEditQuery(docs, uri, cursor, options=options or NextEditOptions())
    return predict(q, model, G), q


def renamed(text: str, preds) -> str:
    return apply_edits(text, [(p.start, p.end, p.new_text) for p in preds])


# ---------------------------------------------------------------------------- syntax
def test_identifier_change_finds_the_whole_identifier():
    assert identifier_change("x = width + 1", "x = w + 1") == (4, "width", "w")
    assert identifier_change("x = width + 1", "x = widths + 1") == (4, "width", "widths")
    assert identifier_change("x = 1", "x = 2") is None
    assert identifier_change("a = b", "a = if") is None  # a keyword is no identifier


def test_parameter_rename_is_scope_aware():
    after = SRC.replace("def area(width,", "def area(w,", 1)
    out, _ = run(after, SRC)
    got = renamed(after, out.predictions)
    # uses in area's own scope renamed; nested def/lambda/comprehension that rebind `width`, the
    # keyword name, the attribute and the module-level `width` untouched; the f-string use renamed
    assert got == SRC.replace("def area(width,", "def area(w,").replace("total = width *", "total = w *") \
        .replace("f(width=width)", "f(width=w)").replace('f"{width}"', 'f"{w}"').replace("total + width", "total + w")
    assert all(p.kind == "rename" and p.source == "syntax" and p.confidence == 0.0 for p in out.predictions)


def test_local_rename_from_a_use_and_from_its_definition():
    src = "def f():\n    count = 0\n    for i in range(3):\n        count += i\n    return count\ncount = 1\n"
    after = src.replace("count = 0", "n = 0")
    out, _ = run(after, src)
    assert renamed(after, out.predictions) == src.replace("count", "n").replace("n = 1", "count = 1")
    after = src.replace("return count", "return n")
    out, _ = run(after, src)
    assert renamed(after, out.predictions) == src.replace("count", "n").replace("n = 1", "count = 1")


def test_attribute_and_method_renames_cross_documents():
    a = "class P:\n    def __init__(self):\n        self.size = 1\n\n    def grow(self):\n        self.size += 1\n"
    b = "from a import P\np = P()\np.grow()\nprint(p.size)\nsize = 2\n"
    other = DocState("file:///b.py", b, "python", 3)
    after = a.replace("self.size = 1", "self.length = 1")
    out, _ = run(after, a, other)
    by_uri = {u: [p for p in out.predictions if p.uri == u] for u in ("file:///a.py", "file:///b.py")}
    assert renamed(after, by_uri["file:///a.py"]) == a.replace("size", "length")
    assert renamed(b, by_uri["file:///b.py"]) == b.replace("p.size", "p.length")
    assert "another document" in by_uri["file:///b.py"][0].reason
    after = a.replace("def grow", "def enlarge")
    out, _ = run(after, a, other)
    assert [(p.uri, p.new_text) for p in out.predictions] == [("file:///b.py", "enlarge")]


def test_module_function_rename_reaches_importing_documents():
    a = "def helper(x):\n    return x\n\n\nprint(helper(1))\n"
    b = "from a import helper\n\nhelper(2)\n"
    c = "helper = 3\n"  # does not import it: untouched
    after = a.replace("def helper", "def assist")
    out, _ = run(after, a, DocState("file:///b.py", b, "python", 1), DocState("file:///c.py", c, "python", 1))
    assert sorted((p.uri, p.start) for p in out.predictions) == [
        ("file:///a.py", after.index("helper(1)")), ("file:///b.py", b.index("helper")),
        ("file:///b.py", b.index("helper(2)"))]


def test_signature_change_finds_calls_that_no_longer_match():
    src = "def area(w, h):\n    return w * h\n\n\nx = area(1, 2)\ny = area(3,\n         4)\nz = area(w=1, h=2)\n"
    after = src.replace("def area(w, h)", "def area(w, h, d)").replace("area(1, 2)", "area(1, 2, 9)")
    out, _ = run(after, src)
    assert [(p.old_text, p.new_text, p.kind) for p in out.predictions] == [
        ("3,\n         4", "3,\n         4, 9", "signature"), ("w=1, h=2", "w=1, h=2, d=9", "signature")]
    assert "signature now has 3 parameter(s)" in out.predictions[0].reason
    # a parameter removed: the argument goes
    after = src.replace("def area(w, h)", "def area(w)").replace("area(1, 2)", "area(1)")
    out, _ = run(after, src)
    assert [(p.old_text, p.new_text) for p in out.predictions] == [("3,\n         4", "3"), ("w=1, h=2", "w=1")]


def test_other_grammars_get_syntax_scoping():
    src = "function area(width, height) {\n  return width * height;\n}\nconst width = 2;\n"
    after = src.replace("area(width,", "area(w,")
    out, _ = run(after, src, uri="file:///a.js")
    assert renamed(after, out.predictions) == src.replace("width", "w").replace("const w", "const width")


def test_history_from_typed_edits_drives_the_rename():
    store = DocumentStore(grammar_for)
    store.open("file:///a.py", "python", 1, SRC)
    v = 1
    start = SRC.index("width")
    for _ in "width":  # backspace the old name, then type the new one, one change at a time
        v += 1
        store.change("file:///a.py", v, [((0, start + 4, 0, start + 5), "")], PositionEncoding.UTF16)
        start -= 1
    start = SRC.index("width")
    for i, ch in enumerate("size"):
        v += 1
        store.change("file:///a.py", v, [((0, start + i, 0, start + i), ch)], PositionEncoding.UTF16)
    doc = store.get("file:///a.py")
    state = doc_state(doc, store.history.recent(doc.uri), 8)
    assert state.history and state.history[-1] == SRC
    out = predict(NextEditQuery((state,), doc.uri, 0), None, G)
    assert renamed(doc.text, out.predictions).count("size") == 5  # the definition + 4 uses


# ---------------------------------------------------------------------------- with a model
@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from engine import Engine
    from engine.testing import make_tiny_checkpoint

    return Engine.load(make_tiny_checkpoint(tmp_path_factory.mktemp("tiny-ne")), device="cpu", dtype="float32")


def test_model_refills_and_scores_every_location_deterministically(tiny):
    after = SRC.replace("def area(width,", "def area(w,", 1)
    a, q = run(after, SRC, model=EngineEdits(tiny))
    b, _ = run(after, SRC, model=EngineEdits(tiny))
    assert len(a.predictions) == 4 and [p.confidence for p in a.predictions] == [p.confidence for p in b.predictions]
    for p in a.predictions:  # a random model's refill is never 'w': the user's name, scored
        assert p.new_text == "w" and p.source in ("model", "scored") and 0.0 < p.confidence <= 1.0
    assert [p.confidence for p in a.predictions] == sorted((p.confidence for p in a.predictions), reverse=True)
    result = to_result(a, q, "tiny")
    assert msgspec.json.decode(msgspec.json.encode(result), type=NextEditResult) == result
    assert result.edits[0].document_version == 7 and result.position_encoding == "utf-16"


def test_cancelled_request_stops(tiny):
    token = CancelToken()
    token.cancel()
    after = SRC.replace("def area(width,", "def area(w,", 1)
    with pytest.raises(EngineCancelled):
        predict(NextEditQuery((DocState("file:///a.py", after, "python", 1, (SRC,), 1.0),), "file:///a.py", 0),
                EngineEdits(tiny), G, token)


def test_model_only_path_takes_tokens_whose_likelihood_dropped():
    src = "x = 1  # plain\nvalue = old_thing + 2\n"
    after = src.replace("plain", "edited")
    model = ScriptedModel("old_thing", "new_thing", 0.9)
    assert run(after, src, model=model)[0].predictions == [] and model.calls == []  # off by default
    fallback = NextEditOptions(model_fallback=True)
    out, _ = run(after, src, model=model, options=fallback)
    assert model.calls == ["scores", "scores", "refill"]
    assert [(p.old_text, p.new_text, p.kind, p.source) for p in out.predictions] == [
        ("old_thing", "new_thing", "model", "model")]
    assert "became unlikely" in out.predictions[0].reason
    unsure = ScriptedModel("old_thing", "new_thing", 0.2)  # not confident: nothing suggested
    assert run(after, src, model=unsure, options=fallback)[0].predictions == []


def test_edits_that_break_the_parse_are_dropped():
    src = "def f(a):\n    b = a  # plain\n    return b + 1\n"
    after = src.replace("plain", "edited")
    fallback = NextEditOptions(model_fallback=True)
    out, _ = run(after, src, model=ScriptedModel("b", "c", 0.99), options=fallback)
    assert renamed(after, out.predictions) == after.replace("b", "c")  # parses: kept
    out, _ = run(after, src, model=ScriptedModel("b", "(((", 0.99), options=fallback)
    assert out.predictions == []  # would not parse: dropped


# ---------------------------------------------------------------------------- patch / CLI
PATCH = """--- a/f.py
+++ b/f.py
@@ -1,3 +1,3 @@
-def area(width, height):
+def area(w, height):
     total = width * height
     return total + width
"""
FILE = "def area(width, height):\n    total = width * height\n    return total + width\n\n\nx = area(1, 2)\n"


def test_unified_diff():
    assert apply_unified_diff(FILE, PATCH, "f.py") == FILE.replace("(width,", "(w,")
    two = PATCH + PATCH.replace("f.py", "g.py")
    assert apply_unified_diff(FILE, two, "g.py") == FILE.replace("(width,", "(w,")
    with pytest.raises(PatchError, match="does not apply"):
        apply_unified_diff(FILE.replace("total", "sum"), PATCH, "f.py")
    with pytest.raises(PatchError, match="no hunks"):
        apply_unified_diff(FILE, "just text\n", "f.py")
    with pytest.raises(PatchError, match="malformed|truncated"):
        apply_unified_diff(FILE, "@@ -1,3 +1,3 @@\n-def area(width, height):\n*junk\n", "f.py")


def test_cli_next_edit_and_errors(tmp_path, tiny, capsys):
    f, p = tmp_path / "f.py", tmp_path / "edit.diff"
    f.write_text(FILE)
    p.write_text(PATCH)
    model = ["--model", str(tiny.path), "--dtype", "float32", "--device", "cpu"]
    assert cli.main(["next-edit", str(f), "--after-diff", str(p), "--format", "summary", *model]) == 0
    out = capsys.readouterr().out
    assert out.count("'width' -> 'w'") == 2 and ":2:13" in out
    assert cli.main(["next-edit", str(f), "--after-diff", str(p), "--json", *model]) == 0
    result = msgspec.json.decode(capsys.readouterr().out, type=NextEditResult)
    assert sorted((e.range.start.line, e.range.start.character, e.new_text) for e in result.edits) == [
        (1, 12, "w"), (2, 19, "w")]
    assert f.read_text() == FILE  # the file itself is not changed
    bad = tmp_path / "bad.diff"
    bad.write_text(PATCH.replace(" total = width", " total = other"))
    for argv, message in [([str(tmp_path / "missing.py"), "--after-diff", str(p)], "no such file"),
                          ([str(f), "--after-diff", str(tmp_path / "nope.diff")], "no such file"),
                          ([str(f), "--after-diff", str(bad)], "does not apply"),
                          ([str(f), "--after-diff", str(f)], "no hunks")]:
        assert cli.main(["next-edit", *argv, *model]) == 2
        err = capsys.readouterr().err
        assert "error:" in err and message in err and "Traceback" not in err
