"""NE116 threaded-parameter: a parameter added to a function is passed on by the call in its body
that passes its other parameters along."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState
from mercury_lsp.next_edit.rules.follow.threaded_parameter import RULE
from tests.support.next_edit import applied_all, rule_edits


def threaded(before: str, after: str, uri: str, grammar: str) -> str:
    home = DocState(uri, after, grammar, 1, (before,), 1.0, (1.0,))
    return applied_all(after, rule_edits(RULE, home))


def test_go_a_parameter_added_last_is_passed_last_to_the_call_threading_the_others():
    src = ("package exec\n\nfunc (t *Template) generate(command string, input string) Ticket {\n"
           "\tlog(\"gen\")\n\treturn NewTicket(command)\n}\n\nfunc NewTicket(command string) Ticket {\n\treturn Ticket{}\n}\n")
    after = src.replace("input string)", "input string, outPerm *sync.Mutex)")
    assert threaded(src, after, "file:///job.go", "go") == after.replace("NewTicket(command)",
                                                                       "NewTicket(command, outPerm)")


def test_rust_a_parameter_goes_before_the_one_that_follows_it_in_the_signature():
    src = ("fn generate(node: &Node, filename: &str) -> Gen {\n    Gen::new(true, filename)\n}\n\n"
           "impl Gen {\n    fn new(child: bool, filename: &str) -> Gen {\n        Gen {}\n    }\n}\n")
    after = src.replace("node: &Node, ", "node: &Node, env: &Env, ")
    assert threaded(src, after, "file:///gen.rs", "rust") == after.replace("Gen::new(true, filename)",
                                                                          "Gen::new(true, env, filename)")


def test_python_keywords_naming_themselves_get_one_more():
    src = "def load(path, strict=False):\n    return parse(path=path, strict=strict)\n\n\ndef parse(path, strict):\n    pass\n"
    after = src.replace("strict=False)", "strict=False, encoding=None)")
    assert threaded(src, after, "file:///m.py", "python") == after.replace(
        "strict=strict)", "strict=strict, encoding=encoding)")


def test_javascript_the_call_passing_the_most_parameters_is_the_one():
    src = ("function send(url, body) {\n  log(url);\n  return request(url, body);\n}\n"
           "function log(x) {}\nfunction request(url, body) {}\n")
    after = src.replace("send(url, body)", "send(url, body, headers)")
    assert threaded(src, after, "file:///a.js", "javascript") == after.replace("return request(url, body)",
                                                                              "return request(url, body, headers)")


def test_a_call_of_code_the_user_does_not_have_open_gets_nothing():
    src = "def strip_ansi(value):\n    return _ansi_re.sub('', value)\n"
    after = src.replace("(value)", "(value, keep_links=False)", 1)
    assert threaded(src, after, "file:///m.py", "python") == after


def test_nothing_when_the_body_uses_it_ties_or_passes_none_or_it_is_recursion():
    uses = "def f(a):\n    return g(a)\n"
    assert threaded(uses, "def f(a, b):\n    print(b)\n    return g(a)\n", "file:///m.py", "python") \
        == "def f(a, b):\n    print(b)\n    return g(a)\n"
    tie = "def f(a):\n    g(a)\n    h(a)\n\ndef g(a):\n    pass\n\ndef h(a):\n    pass\n"
    assert threaded(tie, tie.replace("f(a)", "f(a, b)"), "file:///m.py", "python") == tie.replace("f(a)", "f(a, b)")
    none = "def f(a):\n    return g(1)\n"
    assert threaded(none, none.replace("f(a)", "f(a, b)"), "file:///m.py", "python") == none.replace("f(a)", "f(a, b)")
    rec = "def f(a):\n    return a and f(a[1:]) or f(a)\n"
    assert threaded(rec, rec.replace("def f(a)", "def f(a, b)"), "file:///m.py", "python") \
        == rec.replace("def f(a)", "def f(a, b)")
