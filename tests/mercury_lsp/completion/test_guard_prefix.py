"""The syntax guard's prefix fallback: a suggestion whose first line adds parse errors is cut to
the longest valid prefix of that line at a word boundary, never to broken or trivial text."""

from __future__ import annotations

import pytest

from mercury_lsp.completion import run_pipeline
from mercury_lsp.completion.pipeline import PREFIX_MAX_TRIES, PREFIX_MIN_CHARS, word_prefixes
from mercury_lsp.config import Settings
from mercury_lsp.documents import DocumentStore
from mercury_lsp.syntax import Grammars, SyntaxGuard, grammar_for
from tests.support.fakes import FakeSession
from tests.support.settings import drafts

GRAMMARS = Grammars()
DROP = drafts(syntax_guard="drop")


def complete(text: str, model_text: str, settings: Settings | None = None):
    cursor = text.index("|")
    doc = DocumentStore(grammar_for).open("file:///t.py", "python", 1, text.replace("|", "", 1))
    return run_pipeline(FakeSession(model_text), doc.snapshot(1 << 20), cursor, settings or drafts(),
                        GRAMMARS, None)


def test_default_guard_is_prefix():
    assert Settings().syntax_guard == "prefix"


@pytest.mark.parametrize(("doc", "raw", "shown"), [
    ("def f(args):\n    return|\n", " func(args", " func"),  # an unclosed call: its name stays
    ("def f(args):\n    source = get_source|\n", "(args))", "(args)"),  # one closer too many
    ("def f():\n    x = 1\n    |\n", "return = = None", "return"),
])
def test_a_failing_line_is_cut_to_its_longest_valid_prefix(doc, raw, shown):
    r = complete(doc, raw)
    assert (r.text, r.guard_prefix, r.guard_dropped) == (shown, True, False)
    old = complete(doc, raw, DROP)  # the old guard drops the whole line
    assert (old.text, old.guard_prefix, old.guard_dropped) == ("", False, True)


@pytest.mark.parametrize(("doc", "raw"), [
    ("def f(func):\n    return func_repr|\n", "(func,"),  # no prefix is valid
    ("def f(a, b):\n    for h in (|\n", "'. None:"),  # parses in error recovery, but a half string
    ("x = 1|\n", " ]]]"),
    ("def f(a):\n    return|\n", "s(,"),  # "returns" parses, but one letter says nothing
])
def test_no_valid_nontrivial_prefix_drops_the_suggestion(doc, raw):
    r = complete(doc, raw)
    assert r.text == "" and r.guard_dropped and not r.guard_prefix


def test_a_valid_line_is_shown_whole_and_lines_are_cut_before_prefixes():
    r = complete("def f(args):\n    return|\n", " func(args)")
    assert r.text == " func(args)" and not r.guard_prefix
    r = complete("def f(a):|\n", "\n    b = a * 2\n    return (b")
    assert r.text == "\n    b = a * 2" and not r.guard_prefix  # its last valid line, as before


def test_guard_off_shows_the_raw_text():
    assert complete("def f(args):\n    return|\n", " func(args", drafts(syntax_guard="off")).text == " func(args"


def test_word_prefixes_cut_between_words_longest_first():
    assert word_prefixes(" func(args") == [" func(", " func"]
    assert word_prefixes("(args))") == ["(args)", "(args"]
    assert word_prefixes("    return = = None") == ["    return = =", "    return =", "    return"]
    assert word_prefixes("identifier") == []  # never half a name
    assert word_prefixes("'. None:") == []  # every prefix leaves the string open
    assert word_prefixes('f("a\\"b", x') == ['f("a\\"b",', 'f("a\\"b"', "f("]  # escapes honoured
    for line in (" func(args", "a.b(c, d[e]) + 1", "x = 'a b' + c"):
        for cut in word_prefixes(line):
            assert line.startswith(cut) and len(cut.strip()) >= PREFIX_MIN_CHARS
            i = len(cut)
            assert not (line[i - 1].isalnum() and line[i].isalnum())


def test_prefix_tries_are_bounded(monkeypatch):
    calls = []
    real = SyntaxGuard.accepts

    def counting(self, *args):
        calls.append(args[-1].new)
        return real(self, *args)

    monkeypatch.setattr(SyntaxGuard, "accepts", counting)
    raw = " (a, b, c, d, e, f, g, h"
    r = complete("def f(a):\n    return|\n", raw)
    prefixes = [c for c in calls if c != raw]
    assert prefixes == word_prefixes(raw)[:PREFIX_MAX_TRIES]
    assert r.text == "" and r.guard_dropped


def test_requests_and_prefetches_count_the_guards_work():
    import asyncio

    from mercury_lsp.completion import CompletionService
    from mercury_lsp.documents import PositionEncoding

    class Engine:
        ready = True

        def __init__(self, text):
            self.session = FakeSession(text)

        async def run(self, job, token):
            return job(self.session)

    store = DocumentStore(grammar_for)
    text = "def f(args):\n    return\n"
    store.open("file:///t.py", "python", 1, text)
    cursor = text.index("return") + len("return")
    config = drafts(prefetch=True)
    service = CompletionService(Engine(" func(args"), store, GRAMMARS, lambda: config)
    asyncio.run(service.prefetch("file:///t.py", cursor))
    assert service.counters.guard_prefix == 1
    service.engine = Engine("(func,")
    service.cache.clear()
    s = asyncio.run(service.suggest("file:///t.py", 1, 10, PositionEncoding.UTF16))
    assert s is None and service.counters.guard_dropped == 1 and service.counters.guard_prefix == 1
