"""NE103 dropped-argument: a removed parameter or local leaves the calls that pass it."""

from __future__ import annotations

from tests.support.next_edit import renamed, run


def test_a_removed_parameter_or_local_leaves_the_calls_that_pass_it():
    src = "def validate(self, value, salt=None):\n    self.unsign(value, salt)\n    return check(salt, value)\n"
    after = src.replace(", salt=None)", ")")
    out, _ = run(after, src)
    assert renamed(after, out.predictions) == after.replace(", salt)", ")").replace("(salt, ", "(")
    assert {p.kind for p in out.predictions} == {"signature"}
    src = "function f(a) {\n  var w = 40;\n  return g(a, w);\n}\nfunction h(w) { return g(w); }\n"
    after = src.replace("  var w = 40;\n", "")
    out, _ = run(after, src, uri="file:///a.js")
    assert renamed(after, out.predictions) == after.replace("g(a, w)", "g(a)")  # h's own w stays
    src = "def f(err):\n    err = 1\n    log(err)\n"  # still bound in the function: nothing goes
    assert run(src.replace("    err = 1\n", ""), src)[0].predictions == []



def test_a_local_renamed_is_not_dropped_nor_a_closures_own_parameter():
    src = ("fn find(t: &Table, hash: u64) -> usize {\n    let index = t.find_inner(hash, |index| t.eq(index));\n"
           "    t.at(index)\n}\n")
    after = src.replace("let index = ", "let found = ")  # renamed: NE101 follows it, nothing is dropped
    assert {p.rule for p in run(after, src, uri="file:///raw.rs")[0].predictions} <= {"NE101"}
    src = "function f(a) {\n  var w = 40;\n  g(a, w);\n  return a.map(function (w) { return g(a, w); });\n}\n"
    after = src.replace("  var w = 40;\n", "")  # the inner function's own w is never dropped
    out, _ = run(after, src, uri="file:///a.js")
    assert "g(a, w); });" in renamed(after, out.predictions)
