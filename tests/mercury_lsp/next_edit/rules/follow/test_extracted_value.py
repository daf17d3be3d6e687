"""NE104 extracted-value: a value the user just named replaces its other occurrences."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState, NextEditQuery, predict
from mercury_lsp.next_edit.pipeline import rule_context
from mercury_lsp.next_edit.rules.follow.extracted_value import RULE, bindings
from mercury_lsp.syntax import Grammars
from tests.support import next_edit as ne
from tests.support.next_edit import applied_all as applied
from tests.support.next_edit import edited as doc

G = Grammars()


def ask(d: DocState, cursor: int = 0):
    return predict(NextEditQuery((d,), d.uri, cursor), None, G).predictions






def test_a_module_constant_replaces_its_value_elsewhere():
    src = ("import sys\n\n\ndef check(header):\n    if not isinstance(header['exp'], (int, long, float)):\n"
           "        raise ValueError()\n")
    after = src.replace("import sys\n", "import sys\nnumber_types = (int, long, float)\n")
    preds = ask(doc("file:///a.py", after, (src,)), cursor=after.index("float)") + 6)
    assert applied(after, preds) == after.replace("header['exp'], (int, long, float))", "header['exp'], number_types)")


def test_a_local_replaces_the_same_call_later_in_its_function_only():
    src = ("async function parse(response, options) {\n\tif (response.status === 204) {\n\t\treturn '';\n\t}\n"
           "\treturn options.parseJson(await response.text());\n}\n\n"
           "async function other(response) {\n\treturn await response.text();\n}\n")
    line = "\tif (response.status === 204) {\n"
    after = src.replace(line, "\tconst text = await response.text();\n" + line)
    preds = ask(doc("file:///k.js", after, (src,), grammar="javascript"), cursor=after.index("text();") + 7)
    assert applied(after, preds) == after.replace("parseJson(await response.text())", "parseJson(text)")


def test_names_in_use_bare_values_and_strings_are_not_extracted():
    assert bindings("x = 1\n", "x = 1\ncount = total\n") == []  # a bare name: a rename, not a value
    assert bindings("limit = 3\n", "limit = 3\nlimit = compute(3, 4)\n") == []  # not a new name
    src = "label = 'a'\nprint('value: compute(a, b)')\n"
    after = src.replace("label = 'a'\n", "label = 'a'\nresult = compute(a, b)\n")
    d = doc("file:///s.py", after, (src,))
    assert RULE.run(rule_context(NextEditQuery((d,), d.uri, 0), G)) == []  # only in a string


def test_an_expression_standing_at_too_many_places_is_left_alone():
    src = "".join(f"f{i}(compute(a, b))\n" for i in range(10))
    after = "value = compute(a, b)\n" + src
    d = doc("file:///m.py", after, (src,))
    assert RULE.run(rule_context(NextEditQuery((d,), d.uri, 0), G)) == []


def test_a_renamed_binding_is_no_new_value_to_name_elsewhere():
    src = "def f():\n    transport = mock.Mock()\n    other = mock.Mock()\n    return transport, other\n"
    after = src.replace("    transport = mock.Mock()", "    new_transport = mock.Mock()")
    preds = ne.ask(ne.doc("file:///t.py", after, (src,), (1.0,)), cursor=after.index("new_transport"))
    assert "other = mock.Mock()" in ne.applied(after, preds, "file:///t.py")


def test_a_string_spelling_the_new_name_does_not_make_it_old_typescript_and_python():
    src = ('describe("parse", () => {\n  bench("duplicates", () => {\n'
           '    cookie.parse(genCookies(2) + "; " + genCookies(2));\n  });\n});\n')
    after = src.replace('  bench("duplicates"', '  const duplicates = genCookies(2) + "; " + genCookies(2);\n  bench("duplicates"')
    d = doc("file:///parse.bench.ts", after, (src,), grammar="typescript")
    assert applied(after, ask(d)) == after.replace('cookie.parse(genCookies(2) + "; " + genCookies(2))',
                                                   "cookie.parse(duplicates)")
    src = "def test_sum():\n    log('total')\n    check(compute(a, b) + 1)\n"
    after = src.replace("    log(", "    total = compute(a, b) + 1\n    log(")
    assert applied(after, ask(doc("file:///t.py", after, (src,)))) == after.replace(
        "check(compute(a, b) + 1)", "check(total)")


def test_a_short_regular_expression_literal_is_specific_but_a_short_value_is_not_javascript():
    src = "function parse(str) {\n  var pairs = str.split(/; */);\n  return pairs.map(x => x / 2);\n}\n"
    after = "var pairSplitRegExp = /; */;\n" + src
    preds = ask(doc("file:///c.js", after, (src,), "javascript"), cursor=after.index("\n"))
    assert applied(after, preds) == after.replace("split(/; */)", "split(pairSplitRegExp)")
    after = "var half = x / 2;\n" + src  # four characters, no literal: agrees by chance
    assert ask(doc("file:///c.js", after, (src,), "javascript"), cursor=after.index("\n")) == []


def test_an_expression_the_edit_replaced_by_a_refined_value_follows_in_its_function_rust_and_python():
    src = ("fn walk(dent: &Entry, opts: &Opts) {\n    if dent.is_dir() {\n        push(dent);\n    }\n"
           "    if dent.is_dir() && opts.contents_first {\n        pop();\n    }\n}\n\n"
           "fn other(dent: &Entry) -> bool {\n    dent.is_dir()\n}\n")
    after = src.replace("    if dent.is_dir() {\n", "    let is_normal_dir = !dent.file_type().is_symlink() && dent.is_dir();\n"
                        "    if is_normal_dir {\n", 1)
    preds = ask(doc("file:///lib.rs", after, (src,), "rust"), cursor=after.index("if is_normal_dir {") + 17)
    assert applied(after, preds) == after.replace("if dent.is_dir() && opts", "if is_normal_dir && opts")
    src = "def f(path):\n    if os.path.isdir(path):\n        a()\n    return os.path.isdir(path)\n"
    after = src.replace("    if os.path.isdir(path):\n", "    real_dir = os.path.isdir(path) and not os.path.islink(path)\n"
                        "    if real_dir:\n", 1)
    preds = ask(doc("file:///f.py", after, (src,)), cursor=after.index("if real_dir:") + 12)
    assert applied(after, preds) == after.replace("return os.path.isdir(path)", "return real_dir")
