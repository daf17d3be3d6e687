"""NE208 hole-repeat: the last change repeated where the same tokens stand but for the one name,
string or number it carried."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.repeat import hole_repeat
from tests.support.next_edit import applied_all, edited, rule_edits


def edits(uri: str, before: str, old: str, new: str, grammar: str, cursor: int | None = None):
    after = before.replace(old, new, 1)
    at = after.index(new) + len(new) if cursor is None else cursor
    return after, rule_edits(hole_repeat.RULE, edited(uri, after, (before,), grammar), cursor=at)


def test_a_string_hole_is_filled_from_each_place():
    src = ('fn map() {\n    let mut m = Map::new();\n    m.insert(String::from("first"), 1);\n    m.insert(String::from("x"), 2);\n'
           '    m.insert(String::from("hi\\tquoted"), 3);\n    m.insert(key, 4);\n}\n')
    after, got = edits("file:///t.rs", src, 'String::from("first")', '"first".to_owned()', "rust")
    assert applied_all(after, got) == after.replace('String::from("x")', '"x".to_owned()').replace(
        'String::from("hi\\tquoted")', '"hi\\tquoted".to_owned()')


def test_the_same_change_at_several_lines_is_one_example():
    src = ('fn map() {\n    m.insert(String::from("first"), 1);\n    m.insert(String::from("third"), 3);\n}\n\n'
           'fn other() {\n    n.push(String::from("y"));\n}\n')
    after = src.replace('String::from("first")', '"first".to_owned()').replace('String::from("third")', '"third".to_owned()')
    got = rule_edits(hole_repeat.RULE, edited("file:///t.rs", after, (src,), "rust"), cursor=0)
    assert applied_all(after, got) == after.replace('String::from("y")', '"y".to_owned()')


def test_a_shape_of_keywords_goes_to_its_next_place_below_alone():
    src = ("def rule(bymonth=None, byyearday=None, bymonthday=None):\n    if not bymonth:\n        bymonth = ()\n"
           "    if not byyearday:\n        byyearday = ()\n    if not bymonthday:\n        bymonthday = ()\n")
    after, got = edits("file:///r.py", src, "if not bymonth:", "if bymonth is None:", "python")
    assert applied_all(after, got) == after.replace("if not byyearday:", "if byyearday is None:")
    assert [p.confidence for p in got] == [0.35]  # a guess at the next place


def test_the_hole_stands_for_the_same_token_at_each_of_its_places():
    src = ("function env() {\n  if (window && window.process) {\n    return true;\n  }\n"
           "  if (document && document.body) {\n    return false;\n  }\n  if (document && navigator.userAgent) {\n  }\n}\n")
    after, got = edits("file:///b.js", src, "window && window.process", "typeof window !== 'undefined' && window.process",
                       "javascript")
    assert applied_all(after, got) == after.replace("(document && document.body",
                                                    "(typeof document !== 'undefined' && document.body")


def test_new_code_in_place_of_the_old_a_rename_and_no_hole_are_left_alone():
    src = ("def test(request):\n    server_sock.settimeout(1)\n    conn.settimeout(1)\n")
    assert edits("file:///t.py", src, "server_sock.settimeout(1)", "request.addfinalizer(server_sock.close)",
                 "python")[1] == []  # three names brought: new code
    src = "def f():\n    total = compute(a)\n    other = compute(b)\n"
    assert edits("file:///f.py", src, "compute(a)", "measure(a)", "python")[1] == []  # no hole in 'compute'
    src = "def f():\n    x = a + 1\n    y = b + 1\n"
    assert edits("file:///f.py", src, "a + 1", "b + 1", "python")[1] == []  # one name for another


def test_an_insertion_that_repeats_the_name_beside_it_holes_that_name_python_and_go():
    src = ("def sync(reqs, compiled):\n    for ireq in reqs:\n        key = ireq.req.key\n"
           "    lut = {r.req.key: r for r in compiled}\n    other = r.key\n")
    after, got = edits("file:///s.py", src, "key = ireq.req.key", "key = ireq.link or ireq.req.key", "python")
    assert applied_all(after, got) == after.replace("{r.req.key:", "{r.link or r.req.key:")
    src = ("package p\n\nfunc f(a, b *T) {\n\tuse(a.conf.Name)\n\tshow(b.conf.Name)\n\tshow(b.Name)\n}\n")
    after, got = edits("file:///p.go", src, "use(a.conf.Name)", "use(a.Alias + a.conf.Name)", "go")
    assert applied_all(after, got) == after.replace("show(b.conf.Name)", "show(b.Alias + b.conf.Name)")
