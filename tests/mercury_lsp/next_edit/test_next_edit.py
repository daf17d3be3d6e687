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
    assert all(p.kind == "rename" and p.source == "syntax" and p.confidence == 0.8 for p in out.predictions)


def test_local_rename_from_a_use_and_from_its_definition():
    src = "def f():\n    count = 0\n    for i in range(3):\n        count += i\n    return count\ncount = 1\n"
    after = src.replace("count = 0", "n = 0")
    out, _ = run(after, src)
    assert renamed(after, out.predictions) == src.replace("count", "n").replace("n = 1", "count = 1")
    after = src.replace("return count", "return n")
    out, _ = run(after, src)
    assert renamed(after, out.predictions) == src.replace("count", "n").replace("n = 1", "count = 1")


def test_a_use_switched_to_a_variable_the_user_declared_is_no_rename():
    """``, oname = option.name()`` declared, then ``this.on(name`` -> ``this.on(oname``: ``name`` is
    still declared next to it, its other uses stay."""
    src = ("Command.prototype.option = function(option) {\n  var self = this\n    , name = camelcase(option.name());\n"
           "  this.on(name, function(val) {\n    self[name] = val;\n  });\n  return name;\n};\n")
    one = src.replace("    , name = camelcase(option.name());\n",
                      "    , oname = option.name()\n    , name = camelcase(oname);\n")
    after = one.replace("this.on(name,", "this.on(oname,")
    d = DocState("file:///c.js", after, "javascript", 7, (one, src), 1.0, (2.0, 1.0))
    out = predict(NextEditQuery((d,), d.uri, 0), None, G)
    assert [p for p in out.predictions if p.kind == "rename"] == []


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
    from mercury_engine import Engine
    from mercury_train.testing import make_tiny_checkpoint

    return Engine.load(make_tiny_checkpoint(tmp_path_factory.mktemp("tiny-ne")), device="cpu", dtype="float32")


SIG = "def area(w, h):\n    return w * h\n\n\nx = area(1, 2)\ny = area(3, 4)\n"


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


# ---------------------------------------------------------------------------- renames over the history
def test_renames_read_line_by_line_over_several_hunks_and_a_swap():
    src = ("def med(it, n):\n    history = deque()\n    window = []\n    for x in it:\n"
           "        history.append(x)\n        insort(window, x)\n        i = bisect(window, history.popleft())\n"
           "        del window[i]\n    return window[n // 2]\n")
    after = src.replace("    history = deque()\n    window = []", "    window = deque()\n    ordered = []") \
        .replace("history.append(x)\n        insort(window, x)", "window.append(x)\n        insort(ordered, x)")
    out, _ = run(after, src)
    # every remaining old name follows its map, at once; the lines the user wrote stay as written
    assert renamed(after, out.predictions) == after.replace("bisect(window, history.popleft())",
                                                            "bisect(ordered, window.popleft())") \
        .replace("del window[i]", "del ordered[i]").replace("return window[", "return ordered[")


def test_a_rename_back_to_a_used_name_at_its_binding_follows_but_a_switch_at_a_use_does_not():
    src = "def area(width, h):\n    return width * h\n"
    shortened = src.replace("area(width,", "area(w,").replace("return width", "return w")
    back = shortened.replace("area(w,", "area(width,")  # the binding renamed back: its use follows
    out, _ = run(back, shortened)
    assert renamed(back, out.predictions) == src
    src = "a, b = 1, 2\nprint(f(a))\nprint(a)\n"
    out, _ = run(src.replace("f(a)", "f(b)"), src)  # switched to another existing name
    assert out.predictions == []
    src = "from unittest import TestCase\n\nclass T(TestCase):\n    pass\n"
    out, _ = run(src.replace("from unittest import TestCase", "from sys import version_info"), src)
    assert out.predictions == []  # an import replaced by another is no rename


# ---------------------------------------------------------------------------- the line at the cursor
def test_a_name_cut_short_at_the_cursor_is_finished_from_the_document():
    src = "def handle_request(r):\n    return r\n\n\nx = 1\n"
    after = src + "y = handle_re"
    out, _ = run(after, src, cursor=len(after))
    assert [(p.new_text, p.kind, p.source) for p in out.predictions] == [("quest", "complete", "syntax")]
    after = src + "y = hand  # handle_re"  # no single name, or not code: nothing
    assert run(after, src, cursor=len(after))[0].predictions == []


def test_the_model_finishes_a_half_typed_line_only_when_it_repairs_the_parse():
    src = "def f(a, b):\n    return a\n\n\n"
    after = src + "y = f(1,\nz = 2\n"
    cursor = after.index("f(1,") + len("f(1,")
    on = NextEditOptions(complete_line_model=True)
    out, _ = run(after, src, model=ScriptedModel("x", " 2)", 0.9), cursor=cursor, options=on)
    assert [(p.start, p.new_text, p.kind, p.source) for p in out.predictions] == [(cursor, " 2)", "complete", "model")]
    assert run(after, src, model=ScriptedModel("x", " 2", 0.9), cursor=cursor, options=on)[0].predictions == []
    assert run(after, src, model=ScriptedModel("x", " 2)", 0.2), cursor=cursor, options=on)[0].predictions == []
    model = ScriptedModel("x", " 2)", 0.9)  # off by default: the model is not asked
    assert run(after, src, model=model, cursor=cursor)[0].predictions == [] and model.calls == []


def test_a_line_written_again_supersedes_its_old_version_in_the_same_block_only():
    src = "setup(\n    name='x',\n    version='0.24',\n    zip_safe=False,\n)\n"
    after = src.replace("    name='x',\n", "    name='x',\n    version=version,\n")
    out, _ = run(after, src)
    assert renamed(after, out.predictions) == after.replace("    version='0.24',\n", "")
    assert out.predictions[0].old_text == "    version='0.24',\n"
    # the same local in the function above is another statement; an in-place edit supersedes nothing
    src = "def a():\n    key = 1\n    return key\n\n\ndef b():\n    return 2\n"
    after = src.replace("def b():\n", "def b():\n    key = 2\n")
    assert run(after, src)[0].predictions == []
    assert run(src.replace("key = 1", "key = 3"), src)[0].predictions == []


# ---------------------------------------------------------------------------- imports
def test_an_import_whose_last_use_the_edit_rewrote_goes_and_a_missing_one_is_copied():
    src = "package p\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc f() string {\n\treturn fmt.Sprint(os.Args)\n}\n"
    after = src.replace("fmt.Sprint(os.Args)", "os.Args[0]")
    out, _ = run(after, src, uri="file:///a.go")
    assert [(p.old_text, p.new_text, p.kind) for p in out.predictions] == [("\t\"fmt\"\n", "", "import")]
    other = DocState("file:///b.go", "package p\n\nimport (\n\t\"net/http\"\n)\n", "go", 1)
    after = src.replace("return fmt.Sprint(os.Args)", "return fmt.Sprint(os.Args, http.StatusOK)")
    out, _ = run(after, src, other, uri="file:///a.go")
    assert [(p.new_text, p.kind) for p in out.predictions] == [("\t\"net/http\"\n", "import")]
    assert renamed(after, out.predictions).count('"net/http"') == 1


def test_a_removed_parameter_or_local_leaves_the_calls_that_pass_it():
    src = "def validate(self, value, salt=None):\n    self.unsign(value, salt)\n    return check(salt, value)\n"
    after = src.replace(", salt=None)", ")")
    out, _ = run(after, src)
    assert renamed(after, out.predictions) == after.replace(", salt)", ")").replace("(salt, ", "(")
    assert {p.kind for p in out.predictions} == {"signature"}
    src = "function f(a) {\n  var w = 40;\n  return g(a, w);\n}\nfunction h(w) { return g(w); }\n"
    after = src.replace("  var w = 40;\n", "")
    out, _ = run(after, src, uri="file:///a.js")
    assert renamed(after, out.predictions) == after.replace("g(a, w)", "g(a)")  # h's own w stays
    src = "def f(err):\n    err = 1\n    log(err)\n"  # still bound in the function: nothing goes
    assert run(src.replace("    err = 1\n", ""), src)[0].predictions == []


def test_an_item_added_to_one_functions_list_is_not_repeated_in_another_functions_lists():
    src = ("def show(args, kwargs):\n    return args\n\n\ndef other(args, kwargs):\n    return kwargs\n\n\n"
           "x = show(args, kwargs)\ny = other(args, kwargs)\n")
    after = src.replace("x = show(args, kwargs)", "x = show(args, kwargs, None)")
    assert run(after, src)[0].predictions == []  # other(args, kwargs) is another function's call
