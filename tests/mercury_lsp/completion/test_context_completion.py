"""Windows, span kinds, shaping, suffix trimming, the syntax guard and the cache — no model."""

from __future__ import annotations

from mercury_lsp.completion import SuggestionCache, run_pipeline, sanitize, suffix_overlap
from mercury_lsp.config import Settings
from mercury_lsp.context import Budget, build_window, choose_span
from mercury_lsp.documents import DocumentStore
from mercury_lsp.syntax import Grammars, grammar_for
from tests.support.fakes import FakeSession
from tests.support.settings import drafts

GRAMMARS = Grammars()


def snap_at(text: str, marker: str = "|", lang: str = "python", uri: str = "file:///t.py"):
    cursor = text.index(marker)
    store = DocumentStore(grammar_for)
    doc = store.open(uri, lang, 1, text.replace(marker, "", 1))
    snap = doc.snapshot(1 << 20)
    return snap, cursor, GRAMMARS.parse(snap)


def kind(text: str, lang: str = "python", uri: str = "file:///t.py"):
    snap, cursor, tree = snap_at(text, lang=lang, uri=uri)
    return choose_span(snap, tree, cursor)[0]


def test_span_kinds_by_syntax():
    assert kind("def f(a):|\n") == "block"
    assert kind("def f(a):\n    x = 1\n    |\n") == "statement"
    assert kind("def f(a):\n    |\n") == "block"  # empty body right under the header
    assert kind("x = foo(|)\n") == "line"
    assert kind("x = 1  # note:|\n") == "line"  # a comment ending in ':' opens nothing
    assert kind("x = foo(|\n") == "statement"
    assert kind("int main() {|\n", lang="c", uri="file:///t.c") == "block"
    assert kind("some text:|\n", lang="plaintext", uri="file:///t.txt") == "block"  # line fallback
    # code inside a C++ template, or after TypeScript's type keyword 'string', is no prose
    assert kind("template <typename T>\nT twice(T x) {|\n", lang="cpp", uri="file:///t.cpp") == "block"
    assert kind("function f(a: string) {|\n", lang="typescript", uri="file:///t.ts") == "block"
    assert kind("let s: string = 'a: b {|';\n", lang="typescript", uri="file:///t.ts") == "line"  # in a string


def test_identifier_rest_is_replaced_not_split():
    snap, cursor, tree = snap_at("value = compu|te_total(x)\n")
    kind_, replace_end, _ = choose_span(snap, tree, cursor)
    assert kind_ == "line" and snap.text[cursor:replace_end] == "te_total"
    w = build_window(snap, tree, cursor, drafts(), Budget(256, 3.0))
    assert w.prefix.endswith("compu") and w.suffix.startswith("(x)")


def test_windows_cut_at_node_boundaries_and_prefer_edited_scope():
    funcs = "".join(f"def f{i}(a):\n    return a + {i}\n\n\n" for i in range(60))
    text = "import os\n\n\n" + funcs + "def g(x):\n    y = x\n    |\n    return y\n\n\ndef h():\n    pass\n"
    snap, cursor, tree = snap_at(text)
    w = build_window(snap, tree, cursor, drafts(), Budget(256, 3.0))
    assert w.prefix.endswith("def g(x):\n    y = x\n    ")
    assert w.prefix.startswith("import os")  # imports are preferred among the nodes before
    assert len(w.prefix) <= w.prefix_chars_budget and len(w.suffix) <= w.suffix_chars_budget
    for chunk in w.prefix.split("\n\n"):
        assert not chunk.strip() or chunk.strip().startswith(("import", "def", "return", "y ="))
    assert w.suffix.startswith("\n    return y\n")
    assert w.suffix.endswith("\n")  # whole lines only
    # A recent edit far above pulls its function into the window.
    store = DocumentStore(grammar_for)
    doc = store.open("file:///t.py", "python", 1, snap.text)
    line = doc.text.split("\n").index("def f3(a):") + 1
    store.change("file:///t.py", 2, [((line, 12, line, 12), "b")], "utf-16")
    snap2 = doc.snapshot(1 << 20)
    w2 = build_window(snap2, GRAMMARS.parse(snap2), cursor + 1, drafts(), Budget(256, 3.0))
    assert "def f3(a):\n    return ab + 3" in w2.prefix


def test_sanitize_and_suffix_overlap():
    assert sanitize("abc\ufffddef") == "abc"
    assert sanitize("ab\x12c") == "ab"
    assert suffix_overlap("x, y)", ")\n") == "x, y"
    assert suffix_overlap("a + b", "b = 3\n") is None  # a one-letter repeat is a coincidence
    assert suffix_overlap("return total\n", "return total\n") == ""


def test_pipeline_trims_repeated_closer_but_keeps_needed_one():
    snap, cursor, _ = snap_at("print(|)\n")
    r = run_pipeline(FakeSession("x, y)"), snap, cursor, drafts(), GRAMMARS, None)
    assert r.text == "x, y"
    r = run_pipeline(FakeSession("foo()"), snap, cursor, drafts(), GRAMMARS, None)
    assert r.text == "foo()"  # trimming would unbalance: the guard keeps it


def test_syntax_guard_cuts_to_valid_lines_or_drops():
    snap, cursor, _ = snap_at("def f(a):|\n")
    r = run_pipeline(FakeSession("\n    b = a * 2\n    return (b"), snap, cursor, drafts(), GRAMMARS, None)
    assert r.text == "\n    b = a * 2"
    snap, cursor, _ = snap_at("x = 1|\n")
    r = run_pipeline(FakeSession(" ]]]"), snap, cursor, drafts(), GRAMMARS, None)
    assert r.text == "" and r.guard_dropped
    off = drafts(syntax_guard="off")
    assert run_pipeline(FakeSession(" ]]]"), snap, cursor, off, GRAMMARS, None).text == " ]]]"


def test_multiline_shape_follows_the_block():
    snap, cursor, _ = snap_at("def f(a):|\n\nprint(1)\n")
    r = run_pipeline(FakeSession("\n    return a\nprint(2)\n"), snap, cursor, drafts(), GRAMMARS, None)
    assert r.text == "\n    return a"
    snap, cursor, _ = snap_at("x = foo(a|)\n")
    r = run_pipeline(FakeSession(", b)\ny = 2"), snap, cursor, drafts(), GRAMMARS, None)
    assert r.text == ", b"


def test_line_spans_ask_the_engine_for_one_line():
    snap, cursor, _ = snap_at("x = foo(a|)\n")
    session = FakeSession(", b)\ny = 2")
    r = run_pipeline(session, snap, cursor, drafts(), GRAMMARS, None)
    assert r.kind == "line" and session.specs[-1].options.single_line
    snap, cursor, _ = snap_at("def f(a):|\n\nprint(1)\n")
    run_pipeline(session, snap, cursor, drafts(), GRAMMARS, None)
    assert not session.specs[-1].options.single_line  # a block span stays multi-line


def test_the_context_cache_setting_reaches_the_engine_spec():
    snap, cursor, _ = snap_at("x = foo(a|)\n")
    session = FakeSession(", b)")
    run_pipeline(session, snap, cursor, drafts(), GRAMMARS, None)
    run_pipeline(session, snap, cursor, drafts(context_cache=False), GRAMMARS, None)
    assert [s.options.context_reuse for s in session.specs] == [True, False]
    assert {s.uri for s in session.specs} == {snap.uri}  # the seam knows the document


def test_cache_typing_along_and_exact():
    cache = SuggestionCache(8)
    text = "def f():\n    ret\n"
    cursor = text.index("ret") + 3
    cache.put("u", text, cursor, cursor, "urn 42", "line")
    assert cache.get("u", text, cursor) == ("urn 42", cursor, "line")
    typed = text[:cursor] + "ur" + text[cursor:]
    assert cache.get("u", typed, cursor + 2) == ("n 42", cursor + 2, "line")
    other = text[:cursor] + "ux" + text[cursor:]
    assert cache.get("u", other, cursor + 2) is None
    assert cache.get("v", typed, cursor + 2) is None


def test_the_local_session_passes_the_settings_options_to_the_engine():
    from mercury_engine.types import InfillResult
    from mercury_lsp.backend.local import LocalSession
    from mercury_lsp.schema import EngineInfo, InfillSpec

    class RecordingEngine:
        context_tokens = 256

        def __init__(self) -> None:
            self.calls = []
            self.tokenizer = type("Tok", (), {"decode": staticmethod(lambda ids: "x" * len(ids))})()

        def infill(self, prefix, suffix="", max_tokens=32, options=None, *, cancel=None, callback=None):
            self.calls.append({"sampler": options.sampler, "single_line": options.single_line,
                               "context_reuse": options.context_reuse})
            return InfillResult(text="x", token_ids=[1], confidences=[0.9], steps=1, forwards=1, trimmed=False,
                                prompt_tokens=2, stop_reason="stop", timings={})

    eng = RecordingEngine()
    info = EngineInfo(model="fake", device="cpu", dtype="float32", context_tokens=256, chars_per_token=3.0,
                      load_ms=0.0)
    session = LocalSession(eng, info)
    for settings, single_line in ((Settings(), True), (Settings(context_cache=False), False)):
        options = settings.infill_options(single_line=single_line, context_scope="file:///a.py")
        session.infill(InfillSpec(prefix="a", suffix="", max_tokens=8, options=options), None)
    assert [c["single_line"] for c in eng.calls] == [True, False]
    assert [c["context_reuse"] for c in eng.calls] == [True, False]  # the contextCache setting's way in
    assert [c["sampler"] for c in eng.calls] == ["fast", "fast"]  # "auto": the engine's default

