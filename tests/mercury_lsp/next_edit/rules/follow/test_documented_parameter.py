"""NE115 documented-parameter: a parameter renamed in its documentation (JSDoc, Sphinx) is renamed
in the signature it documents — the parameter only, and not when the documentation was fixed to
match the code."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.follow.documented_parameter import RULE, _renamed_tag
from tests.support.next_edit import doc, rule_edits

JS = ("/**\n * Parse a cookie header.\n *\n * @param {string} str\n * @param {object} [opt]\n * @return {object}\n */\n\n"
      "function parse(str, opt) {\n  opt = opt || {};\n  return decode(str, opt.decode);\n}\n")
PY = ('def parse(header, opt=None):\n    """Parse a cookie header.\n\n    :param header: the header.\n'
      '    :param dict opt: the options.\n    """\n    return decode(header, opt)\n')


def test_a_jsdoc_param_renamed_renames_the_parameter_below_it_only():
    after = JS.replace("[opt]", "[options]")
    preds = rule_edits(RULE, doc("file:///index.js", after, (JS,), (1.0,), grammar="javascript"))
    assert [(after[p.start:p.end], p.new_text) for p in preds] == [("opt", "options")]
    assert after[preds[0].start - 5:preds[0].end + 1] == "str, opt)"


def test_a_sphinx_param_renamed_renames_the_parameter_of_its_function():
    after = PY.replace(":param dict opt:", ":param dict options:")
    preds = rule_edits(RULE, doc("file:///c.py", after, (PY,), (1.0,)))
    assert [(after[p.start:p.end], p.new_text) for p in preds] == [("opt", "options")]
    assert after[:preds[0].end].endswith("def parse(header, opt")


def test_documentation_fixed_to_match_the_code_or_rewritten_is_left():
    fixed = PY.replace("def parse(header, opt=None)", "def parse(header, options=None)")
    after = fixed.replace(":param dict opt:", ":param dict options:")
    assert rule_edits(RULE, doc("file:///c.py", after, (fixed,), (1.0,))) == []  # 'options' is the parameter
    rewritten = JS.replace("@param {object} [opt]", "@param {object} [options] the parser's options")
    assert _renamed_tag(JS, rewritten) is None
    other = JS.replace("[opt]", "[flags]").replace("function parse(str, opt)", "function parse(str)")
    assert rule_edits(RULE, doc("file:///index.js", other, (JS.replace("function parse(str, opt)", "function parse(str)"),),
                                (1.0,), grammar="javascript")) == []  # no parameter of the old name
