"""NE306 respaced-tokens: a spacing-only edit between two tokens repeated where they stand."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState, NextEditQuery, apply_edits
from mercury_lsp.next_edit.pipeline import rule_context
from mercury_lsp.next_edit.rules.lines.respaced_tokens import RULE, Gap, gap_changes
from mercury_lsp.syntax import Grammars

G = Grammars()


def edits(text: str, before: str, *others: DocState, uri: str = "file:///m.py", grammar: str = "python"):
    home = DocState(uri, text, grammar, 1, (before,), 1.0, (1.0,))
    return RULE.run(rule_context(NextEditQuery((home, *others), uri, 0), G))


def applied(text: str, preds, uri: str) -> str:
    return apply_edits(text, [(p.start, p.end, p.new_text) for p in preds if p.uri == uri])


STUBS = ('class HasHTML(Protocol):\n    def __html__(self, /) -> str:\n        ...\n\n'
         'class TPEscape(Protocol):\n    def __call__(self, s: Any, /) -> Markup:\n        ...\n\n'
         'class Markup(str):\n    """Wraps text.\n\n    >>> class Foo:\n    ...     pass\n    """\n')


def test_a_stub_joined_onto_its_def_line_joins_the_other_stubs_not_a_doctest():
    after = STUBS.replace("-> str:\n        ...", "-> str: ...")
    got = edits(after, STUBS)
    assert applied(after, got, "file:///m.py") == STUBS.replace(":\n        ...", ": ...")
    assert [p.old_text for p in got] == ["\n        "]  # the docstring's '>>> class Foo:' / '...' is prose


def test_the_other_documents_of_the_language_follow_after_the_cursors():
    conftest = "class Escape(Protocol):\n    def __call__(self, s: Any) -> str:\n            ...\n"
    other = DocState("file:///conftest.py", conftest, "python", 1)
    after = STUBS.replace("-> str:\n        ...", "-> str: ...")
    got = edits(after, STUBS, other)
    assert [p.uri for p in got] == ["file:///m.py", "file:///conftest.py"]
    assert got[1].confidence < got[0].confidence
    assert applied(conftest, got, "file:///conftest.py") == conftest.replace(":\n            ...", ": ...")


def test_a_doubled_space_taken_out_in_go_goes_everywhere_it_stands():
    src = ('package cast\n\nfunc ToIntE(i interface{}) (int, error)  {\n\treturn 0, nil\n}\n\n'
           'func ToInt64E(i interface{}) (int64, error)  {\n\treturn 0, nil\n}\n\n'
           'func note() string {\n\treturn ")  {"\n}\n')
    after = src.replace("(int, error)  {", "(int, error) {")
    got = edits(after, src, uri="file:///caste.go", grammar="go")
    assert applied(after, got, "file:///caste.go") == after.replace("(int64, error)  {", "(int64, error) {")


def test_only_spacing_edits_with_something_to_say_are_repeated():
    assert gap_changes("f(a, b)\n", "f(a, c)\n") == []  # a token changed
    assert gap_changes("f(\n    a)\n", "f(a)\n") == [Gap("(", "a", "\n    ", "")]
    assert gap_changes("g(f(x)\n)\n", "g(f(x))\n") == []  # a join between two brackets
    assert gap_changes("f(a,b)\n", "f(a,\n  b)\n") == []  # a split: the site's indentation
    assert gap_changes("if(x) {}\n", "if (x) {}\n") == [Gap("if", "(", "", " ")]
    assert gap_changes("f(a,(b))\n", "f(a, (b))\n") == []  # a space between two separators
    assert gap_changes("a  =  b + c  +  d  *  e\n", "a = b + c + d * e\n") == []  # a reformat


def test_an_edit_that_is_no_respacing_offers_nothing():
    src = "def f():\n    return 1\n\ndef g():\n    return 2\n"
    assert edits(src.replace("return 1", "return 3"), src) == []
