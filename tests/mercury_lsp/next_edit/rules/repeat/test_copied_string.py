"""NE210 copied-string: a string literal the user rewrote, and its copies elsewhere."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.repeat import copied_string
from tests.support.next_edit import applied, ask, doc, rule_edits

MESSAGE = "JWE Shared Protected and JWE Shared Unprotected names must be disjoint"
SRC = f"""export function check(a, b) {{
  if (!disjoint(a, b)) {{
    throw new JWEInvalid('{MESSAGE}')
  }}
  // JWE Shared Unprotected is checked below
  if (bad(b)) throw new JWEInvalid('JWE Shared Unprotected header is bad')
}}
"""
TEST = f"""test('rejects', async t => {{
  await t.throwsAsync(check(a, a), {{ message: '{MESSAGE}' }})
  await t.throwsAsync(check(b, b), {{ message: "{MESSAGE}" }})
}})
"""


def test_the_copies_of_a_rewritten_message_follow_in_a_test_of_another_language_typescript():
    after = SRC.replace("'JWE Shared Protected and", "'JWE Protected and", 1)
    src = doc("file:///src/check.ts", after, (SRC,), (1.0,), grammar="typescript")
    test = doc("file:///test/check.test.mjs", TEST, grammar="javascript")
    preds = rule_edits(copied_string.RULE, src, test, cursor=after.index("JWE Protected"))
    new = MESSAGE.replace("JWE Shared Protected", "JWE Protected")
    assert applied(TEST, preds, test.uri) == TEST.replace(MESSAGE, new)  # inside each copy's own quotes
    # the pipeline: the copies, and not the other strings that share the words around the change
    preds = ask(src, test, cursor=after.index("JWE Protected"))
    assert preds and all(p.uri == test.uri and p.rule == "NE210" for p in preds)


def test_a_short_or_unshared_string_has_no_copies_python():
    src = 'def f():\n    log("retry")\n    log("retry")\n    raise ValueError("the size must be a positive number")\n'
    short = src.replace('log("retry")', 'log("again")', 1)
    assert rule_edits(copied_string.RULE, doc("file:///m.py", short, (src,), (1.0,))) == []
    once = src.replace("the size must be", "the size has to be")
    assert rule_edits(copied_string.RULE, doc("file:///m.py", once, (src,), (1.0,))) == []
    twice = src + 'def g():\n    raise ValueError("the size must be a positive number")\n'
    after = twice.replace("the size must be", "the size has to be", 1)
    preds = rule_edits(copied_string.RULE, doc("file:///m.py", after, (twice,), (1.0,)))
    assert applied(after, preds, "file:///m.py") == twice.replace("the size must be", "the size has to be")
