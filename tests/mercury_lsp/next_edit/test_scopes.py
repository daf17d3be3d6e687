"""next_edit.scopes: whether a name is new (``fresh_name``)."""

from __future__ import annotations

from mercury_lsp.next_edit.scopes import fresh_name
from tests.support.next_edit import edited


def test_a_name_only_a_string_spelt_before_is_fresh_javascript_and_python():
    before = "var fn = compile('options');\nrun(opts);\n"
    after = before.replace("run(opts)", "run(options)")
    assert fresh_name("options", edited("file:///a.js", after, (before,), grammar="javascript"), None)
    code = "var options = {};\n" + before
    assert not fresh_name("options", edited("file:///a.js", code.replace("run(opts)", "run(options)"), (code,),
                                            grammar="javascript"), None)
    before = 'log("total")\nprint(n)\n'
    after = before.replace("print(n)", "print(total)")
    assert fresh_name("total", edited("file:///a.py", after, (before,)), None)
    assert not fresh_name("total", edited("file:///a.py", "total = 1\n" + after, ("total = 1\n" + before,)), None)
