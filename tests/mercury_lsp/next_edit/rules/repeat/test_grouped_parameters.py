"""NE206 grouped-parameters: consecutive parameters of one type written with the type once, at the
other signatures that spell it for each — where the language groups parameters (Go), and nowhere
else (TypeScript, Python)."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.repeat.grouped_parameters import RULE, _grouped
from tests.support.next_edit import applied, ask, doc, rule_edits

ROUTE = ("package middleware\n\nfunc (hr HeaderRouter) Route(header string, match string, h Handler) HeaderRouter {\n"
         "\treturn hr\n}\n")
THROTTLE = ("package middleware\n\nfunc ThrottleBacklog(limit int, backlogLimit int, timeout time.Duration) Handler {\n"
            "\treturn nil\n}\n\nfunc WithValue(key interface{}, val interface{}) Handler {\n\treturn nil\n}\n\n"
            "func Keep(a int, b string, rest ...string) {}\n")


def test_the_other_signatures_of_the_package_group_their_parameters_of_one_type():
    after = ROUTE.replace("header string, match string", "header, match string")
    home = doc("file:///m/route_headers.go", after, (ROUTE,), (1.0,), grammar="go")
    other = doc("file:///m/throttle.go", THROTTLE, grammar="go")
    preds = [p for p in ask(home, other) if p.rule == "NE206"]
    assert applied(THROTTLE, preds, other.uri) == THROTTLE.replace(
        "limit int, backlogLimit int", "limit, backlogLimit int").replace(
        "key interface{}, val interface{}", "key, val interface{}")


def test_a_run_of_three_is_one_edit_and_results_are_parameter_lists_too():
    src = ("package p\n\nfunc a(x int, y int) {}\n\nfunc b(r int, g int, b int) (w int, h int) {\n\treturn 0, 0\n}\n")
    after = src.replace("a(x int, y int)", "a(x, y int)")
    preds = rule_edits(RULE, doc("file:///p.go", after, (src,), (1.0,), grammar="go"))
    assert sorted(p.new_text for p in preds) == ["r, g, b int", "w, h int"]


def test_an_edit_that_grouped_nothing_is_no_example():
    src = "package p\n\nfunc a(x int, y int) {}\n\nfunc b(r int, g int) {}\n"
    renamed = src.replace("a(x int, y int)", "a(x int, z int)")
    assert not _grouped(src, renamed)
    assert rule_edits(RULE, doc("file:///p.go", renamed, (src,), (1.0,), grammar="go")) == []


def test_languages_without_grouped_parameters_are_left_alone():
    ts = "function route(header: string, match: string) {}\nfunction other(a: string, b: string) {}\n"
    ts_after = ts.replace("header: string, match: string", "header: string, match?: string")
    assert rule_edits(RULE, doc("file:///r.ts", ts_after, (ts,), (1.0,), grammar="typescript")) == []
    py = "def route(header: str, match: str):\n    pass\n\n\ndef other(a: str, b: str):\n    pass\n"
    py_after = py.replace("def route(header: str, match: str)", "def route(header, match: str)")
    assert rule_edits(RULE, doc("file:///r.py", py_after, (py,), (1.0,))) == []
