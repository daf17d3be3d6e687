"""The brackets open at the cursor, read past literals and comments, and the check that a
candidate closes only what is open."""

from __future__ import annotations

from mercury_lsp.completion.brackets import closes_unopened, open_at


def at_end(text: str, language: str = "") -> str:
    return open_at(text, len(text), language)


def test_python_brackets_inside_strings_do_not_count():
    doc = 'def f():\n    call(x, "a (string", [1, 2,\n        \'b]\', {"k": (3'
    assert at_end(doc) == "([{("
    assert not closes_unopened(at_end(doc), ")}])")
    assert closes_unopened(at_end(doc), "))")  # the second closes the "{"


def test_rust_lifetimes_are_not_literals():
    doc = "fn parse<'a>(input: &'a str) -> Result<&'a str, Error> {\n    let x = foo(input.map(|c| {\n        c"
    assert at_end(doc, "rust") == "{(({"
    assert not closes_unopened(at_end(doc, "rust"), " })", "rust")
    assert closes_unopened(at_end(doc, "rust"), ")", "rust")  # the innermost open one is a "{"
    assert not closes_unopened("(", "'x')", "rust")  # a char literal, then the closer


def test_go_comments_and_javascript_templates_are_skipped():
    go = "func f() {\n\t// a comment (with a bracket\n\tx := g(a,\n\t\tb"
    assert at_end(go) == "{("
    js = "app.get(`/a/${(x}`, (req) => {\n  /* ( */ send(res"
    assert at_end(js) == "({("


def test_a_closer_with_nothing_open_is_a_mismatch():
    assert closes_unopened("", ")")
    assert not closes_unopened("", "foo(bar)")
    assert not closes_unopened("{", "}")
