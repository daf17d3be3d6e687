"""The pipeline (``pipeline.predict``) with a model: only the holes go to the model, a cancel stops
it, edits that break the parse are dropped; ``next-edit`` on a patch and its command line."""

from __future__ import annotations

import msgspec
import pytest

from mercury_lsp import cli
from mercury_lsp.engine_client import CancelToken, EngineCancelled
from mercury_lsp.next_edit import (
    DocState,
    EngineEdits,
    NextEditOptions,
    NextEditQuery,
    predict,
    to_result,
)
from mercury_lsp.next_edit.command import PatchError, apply_unified_diff
from mercury_lsp.schema import NextEditResult
from mercury_lsp.syntax import Grammars
from tests.support.fakes import ScriptedModel
from tests.support.next_edit import AREA as SRC
from tests.support.next_edit import ask, doc, renamed, run

G = Grammars()

pytestmark = pytest.mark.usefixtures("one_torch_thread")



@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from mercury_engine import Engine
    from mercury_train.testing import make_tiny_checkpoint

    return Engine.load(make_tiny_checkpoint(tmp_path_factory.mktemp("tiny-ne")), device="cpu", dtype="float32")


SIG = "def area(w, h):\n    return w * h\n\n\nx = area(1, 2)\ny = area(3, 4)\n"


PATCH = """--- a/f.py
+++ b/f.py
@@ -1,3 +1,3 @@
-def area(width, height):
+def area(w, height):
     total = width * height
     return total + width
"""


FILE = "def area(width, height):\n    total = width * height\n    return total + width\n\n\nx = area(1, 2)\n"


def test_the_model_fills_only_the_holes_the_syntax_leaves():
    after = SRC.replace("def area(width,", "def area(w,", 1)
    model = ScriptedModel("x", "1, 2, 3", 0.9)
    out, _ = run(after, SRC, model=model)
    assert model.calls == [] and len(out.predictions) == 4  # a rename the syntax determines: no model
    assert all(p.source == "syntax" and p.confidence == 0.8 for p in out.predictions)
    # a new parameter no call shows yet: the calls are holes, refilled by the model (nearest first)
    after = SIG.replace("def area(w, h)", "def area(w, h, d)")
    out, _ = run(after, SIG, model=model)
    assert model.calls == ["refill"]
    assert [(p.old_text, p.new_text, p.source) for p in out.predictions] == [
        ("1, 2", "1, 2, 3", "model"), ("3, 4", "1, 2, 3", "model")]
    # model work past its time box is left out; the request still answers, each hole's call with
    # a placeholder named after the new parameter
    out, _ = run(after, SIG, model=model, options=NextEditOptions(model_budget_ms=0))
    assert [(p.old_text, p.new_text, p.source, p.confidence) for p in out.predictions] == [
        ("1, 2", "1, 2, d", "syntax", 0.3), ("3, 4", "3, 4, d", "syntax", 0.3)]


def test_tiny_model_refills_holes_deterministically(tiny):
    after = SIG.replace("def area(w, h)", "def area(w, h, d)")
    opts = NextEditOptions(model_budget_ms=600_000)
    a, q = run(after, SIG, model=EngineEdits(tiny), options=opts)
    b, _ = run(after, SIG, model=EngineEdits(tiny), options=opts)
    assert [(p.new_text, p.confidence) for p in a.predictions] == [(p.new_text, p.confidence) for p in b.predictions]
    assert a.predictions and all(p.kind == "signature" for p in a.predictions)
    assert all(p.source == "model" or p.new_text.endswith(", d") for p in a.predictions)  # or the placeholder
    result = to_result(a, q, "tiny")
    assert msgspec.json.decode(msgspec.json.encode(result), type=NextEditResult) == result
    assert all(e.document_version == 7 for e in result.edits) and result.position_encoding == "utf-16"


def test_cancelled_request_stops(tiny):
    token = CancelToken()
    token.cancel()
    after = SRC.replace("def area(width,", "def area(w,", 1)
    with pytest.raises(EngineCancelled):
        predict(NextEditQuery((DocState("file:///a.py", after, "python", 1, (SRC,), 1.0),), "file:///a.py", 0),
                EngineEdits(tiny), G, token)


def test_edits_that_break_the_parse_are_dropped():
    src = "def f(a):\n    b = a  # plain\n    return b + 1\n"
    after = src.replace("plain", "edited")
    fallback = NextEditOptions(model_fallback=True)
    out, _ = run(after, src, model=ScriptedModel("b", "c", 0.99), options=fallback)
    assert renamed(after, out.predictions) == after.replace("b", "c")  # parses: kept
    out, _ = run(after, src, model=ScriptedModel("b", "(((", 0.99), options=fallback)
    assert out.predictions == []  # would not parse: dropped


@pytest.mark.parametrize(("uri", "before", "old", "new", "site", "want"), [
    ("file:///six.py", "def keys(d):\n    return getattr(d, _iterkeys)()\n\n\ndef values(d):\n    return getattr(d, _itervalues)()\n",
     "return getattr(d, _iterkeys)()", "return iter(getattr(d, _iterkeys)())",
     "return getattr(d, _itervalues)()", "return iter(getattr(d, _itervalues)())"),
    ("file:///m.go", "package m\n\nfunc a() {\n\tx := lookup(table, keyA)\n\ty := lookup(table, keyB)\n\tuse(x, y)\n}\n",
     "x := lookup(table, keyA)", "x := must(lookup(table, keyA))",
     "y := lookup(table, keyB)", "y := must(lookup(table, keyB))"),
])
def test_an_edit_hidden_by_one_that_breaks_the_parse_gets_its_place_back(uri, before, old, new, site, want):
    # NE204 repeats the wrap's opening half alone (it would not parse); NE207's whole wrap of the
    # same line, which it had hidden, is offered instead
    after = before.replace(old, new)
    out, _ = run(after, before, uri=uri)
    assert renamed(after, out.predictions) == after.replace(site, want)


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


def test_a_rule_that_raises_costs_its_own_edits_not_the_requests(monkeypatch, caplog):
    """Outside the test suite's strict mode, a rule's bug is logged (its code and where, no text of
    the user's) and skipped: the other rules still answer."""
    import dataclasses

    from mercury_lsp.next_edit import pipeline

    def broken(ctx):
        raise IndexError("a bug")

    after = SRC.replace("def area(width, height):", "def area(w, height):")
    bad = dataclasses.replace(pipeline.REGISTRY[-1], code="NE901", run=broken, fallback=False)
    monkeypatch.setattr(pipeline, "REGISTRY", (bad, *pipeline.REGISTRY[:-1]))
    monkeypatch.setattr(pipeline, "STRICT_RULES", False)
    with caplog.at_level("WARNING", logger="mercury_lsp.next_edit.pipeline"):
        out, _ = run(after, SRC, options=NextEditOptions(model_fallback=True))
    assert out.predictions and {p.rule for p in out.predictions} == {"NE101"}
    assert "rule NE901 failed (IndexError at test_pipeline.py:" in caplog.text and "width" not in caplog.text
    monkeypatch.setattr(pipeline, "STRICT_RULES", True)
    with pytest.raises(IndexError):
        run(after, SRC, options=NextEditOptions(model_fallback=True))


def test_a_minified_bundle_is_never_read_nor_edited():
    src = "function go(err) {\n  return err\n}\n\nfunction stop(err) {\n  return err\n}\n"
    after = src.replace("  return err\n}\n\nfunction stop", "  return wrap(err)\n}\n\nfunction stop", 1)
    bundle = doc("file:///dist/app.min.js", "function a(err){return err};" * 40 + "\n", grammar="javascript")
    mine = doc("file:///app.js", after, (src,), (1.0,), grammar="javascript")
    preds = ask(mine, bundle, cursor=after.index("wrap(err)") + 9)
    assert preds and all(p.uri == mine.uri for p in preds)  # the user's file still gets its repeat
    edited = bundle.text.replace("return err", "return wrap(err)", 1)
    assert ask(doc(bundle.uri, edited, (bundle.text,), (1.0,), grammar="javascript"), cursor=40) == []
