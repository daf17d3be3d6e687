"""NE506 closing-bracket: a bracket the user opened before a block is closed after the block
(Rust, JavaScript, Go)."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.complete import closing_bracket
from tests.support.next_edit import applied_all, doc, rule_edits

RUST = """fn fmt(member: &Member) {
    let formatvar = match &member {
        Member::Unnamed(index) => format_ident!("_{}", index),
        Member::Named(id) => id.clone(),
    };
    use_it(formatvar);
}
"""

JS = """function parser(options) {
  var opts = {
    type: undefined,
    strict: true
  }
  return opts
}
"""


def edits(uri: str, before: str, old: str, new: str, grammar: str):
    after = before.replace(old, new, 1)
    return after, rule_edits(closing_bracket.RULE, doc(uri, after, (before,), (1.0,), grammar=grammar),
                             cursor=after.index(new) + len(new))


def test_a_call_opened_around_a_match_is_closed_after_its_block_rust():
    after, got = edits("file:///fmt.rs", RUST, "= match &member {", "= IdentUnraw::new(match &member {", "rust")
    assert applied_all(after, got) == after.replace("    };\n    use_it", "    });\n    use_it")
    assert [p.new_text for p in got] == [")"]


def test_a_call_opened_around_an_object_is_closed_after_it_javascript():
    after, got = edits("file:///p.js", JS, "var opts = {", "var opts = Object.create(options || null, {", "javascript")
    assert applied_all(after, got) == after.replace("  }\n  return", "  })\n  return")


def test_nothing_when_the_block_is_closed_already_or_the_line_opens_no_block():
    closed = JS.replace("var opts = {", "var opts = Object.create(null, {").replace("  }\n  return", "  })\n  return")
    assert rule_edits(closing_bracket.RULE, doc("file:///p.js", closed, (JS,), (1.0,), grammar="javascript"),
                      cursor=0) == []
    go = "package p\n\nfunc f() {\n\tx := g(1)\n}\n"
    after = go.replace("g(1)", "g(h(1)")
    assert rule_edits(closing_bracket.RULE, doc("file:///p.go", after, (go,), (1.0,), grammar="go"), cursor=0) == []
    assert closing_bracket.open_before_block("    let v = f(match x {  // a { note") == (["("], 22)
    assert closing_bracket.open_before_block("if (a) {") == ([], 7)
    assert closing_bracket.open_before_block("f(a)) {") is None
