"""NE207 shaped-repeat: a rewrite of whole lines repeated at the next lines that read as its old
ones but for a name or two, each carried over."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.repeat import shaped_repeat
from tests.support.next_edit import applied, ask, doc, rule_edits

GO = """package mux

func setVars(r *Request, val interface{}) {
\tcontext.Set(r, varsKey, val)
}

func setCurrentRoute(r *Request, val interface{}) {
\tcontext.Set(r, routeKey, val)
}
"""


def test_a_wrapped_call_wraps_the_next_call_that_differs_in_one_name_go():
    after = GO.replace("\tcontext.Set(r, varsKey, val)\n", "\tif val != nil {\n\t\tcontext.Set(r, varsKey, val)\n\t}\n")
    preds = ask(doc("file:///mux.go", after, (GO,), (1.0,), grammar="go"), cursor=after.index("\t}\n"))
    assert applied(after, preds, "file:///mux.go") == after.replace(
        "\tcontext.Set(r, routeKey, val)\n", "\tif val != nil {\n\t\tcontext.Set(r, routeKey, val)\n\t}\n")
    assert [p.rule for p in preds] == ["NE207"] and preds[0].confidence == 0.45


JS = """function handle(result, options) {
\tconst stdout = result.stdout;
\tconst stderr = result.stderr;
\tlog(stdout, stderr);
\tconst code = result.code;
\tconst signal = result.signal;
\treturn {code, signal};
}
"""


def test_two_lines_turned_into_a_destructuring_turn_the_next_pair_javascript():
    after = JS.replace("\tconst stdout = result.stdout;\n\tconst stderr = result.stderr;\n",
                       "\tconst {stdout, stderr} = result;\n")
    preds = ask(doc("file:///index.js", after, (JS,), (1.0,), grammar="javascript"), cursor=after.index("result;"))
    assert applied(after, [p for p in preds if p.rule == "NE207"], "file:///index.js") == after.replace(
        "\tconst code = result.code;\n\tconst signal = result.signal;\n", "\tconst {code, signal} = result;\n")


def test_the_site_is_reindented_and_only_the_nearest_one_is_offered_python():
    src = ("def a(x):\n    check(x, 'a')\n\n\nclass B:\n    def b(self, y):\n        check(y, 'a')\n"
           "        check(z, 'a')\n")
    after = src.replace("    check(x, 'a')\n", "    if x:\n        check(x, 'a')\n")
    preds = rule_edits(shaped_repeat.RULE, doc("file:///m.py", after, (src,), (1.0,)))
    assert [(p.old_text, p.new_text) for p in preds] == [
        ("        check(y, 'a')", "        if y:\n            check(y, 'a')")]


def test_a_hole_the_rewrite_replaced_or_reordered_tokens_offer_nothing():
    # the example's string was replaced, not carried: nothing says what the next one becomes
    src = 'setup(\n    license="BSD",\n    maintainer="Pallets Team",\n)\n'
    after = src.replace('"BSD"', '"BSD-3-Clause"')
    assert rule_edits(shaped_repeat.RULE, doc("file:///setup.py", after, (src,), (1.0,))) == []
    # the next derive lists the same names in another order: a reordering, not a sibling
    src = "#[derive(Copy, Clone, Eq)]\nstruct A;\n#[derive(Clone, Eq, Copy)]\nstruct B;\n"
    after = src.replace("#[derive(Copy, Clone, Eq)]", "#[derive(Copy, Clone, Eq, Hash)]")
    assert rule_edits(shaped_repeat.RULE, doc("file:///lib.rs", after, (src,), (1.0,), grammar="rust")) == []
    # an insertion of a line is no rewrite of its neighbour
    src = "x = f(a, 1)\ny = f(b, 1)\n"
    after = "import os\n" + src
    assert rule_edits(shaped_repeat.RULE, doc("file:///m.py", after, (src,), (1.0,))) == []


def test_a_rename_of_a_member_is_not_repeated_at_another_class_python():
    before = ("class Base:\n    def __init__(self):\n        self.count = 0\n\n\n"
              "class Other:\n    def __init__(self):\n        self.count = 5\n")
    after = before.replace("self.count = 0", "self.total = 0")
    assert rule_edits(shaped_repeat.RULE, doc("file:///m.py", after, (before,), (1.0,))) == []


def test_a_name_only_one_function_binds_is_not_carried_to_another_go():
    before = ('package p\n\nfunc TestA() {\n\tlog.Print("a")\n}\n\n'
              'func ExampleB() {\n\tlog.Print("c")\n}\n\nfunc TestC(t *testing.T) {\n\tlog.Print("d")\n}\n')
    mid = before.replace("func TestA() {", "func TestA(t *testing.T) {")
    after = mid.replace('\tlog.Print("a")', '\tt.Log("a")')
    preds = rule_edits(shaped_repeat.RULE, doc("file:///p_test.go", after, (mid, before), (2.0, 1.0), grammar="go"))
    assert [after[p.start:p.end] for p in preds] == ['\tlog.Print("d")']  # TestC takes a t, ExampleB none


TABLE = """const colors = {
\treset: [0, 0],
\tbold: [1, 22],
\tdim: [2, 22],

\t// colors
\tblack: [30, 39],
\tred: [31, 39],
\tgreen: [32, 39],
};
"""


def test_each_row_of_a_table_rewritten_alike_rewrites_the_next_rows_below_javascript():
    after = TABLE.replace("[0, 0]", "code(0, 0)").replace("[1, 22]", "code(1, 22)").replace("[2, 22]", "code(2, 22)")
    preds = rule_edits(shaped_repeat.RULE, doc("file:///k.js", after, (TABLE,), (1.0,), grammar="javascript"),
                       cursor=after.index("code(2, 22),") + 12)
    assert applied(after, preds, "file:///k.js") == after.replace("[30, 39]", "code(30, 39)").replace(
        "[31, 39]", "code(31, 39)").replace("[32, 39]", "code(32, 39)")
    assert len(preds) == 1  # the run of rows is one edit


ROWS = """LEVELS = {
    "debug": Level(10, "grey"),
    "info": Level(20, "blue"),
}
ALIASES = {
    "warn": Level(30, "yellow"),
    "fatal": Level(50, "red"),
}
"""


def test_rows_rewritten_each_their_own_way_teach_no_rule_python():
    after = ROWS.replace('Level(10, "grey")', 'Level(10, color="grey")').replace('Level(20, "blue")', 'Level(20, "blue", bold=True)')
    assert shaped_repeat.line_rule(ROWS.split("\n")[1:3], after.split("\n")[1:3]) is None
    after = ROWS.replace('Level(10, "grey")', 'Level[10, "grey"]').replace('Level(20, "blue")', 'Level[20, "blue"]')
    preds = rule_edits(shaped_repeat.RULE, doc("file:///l.py", after, (ROWS,), (1.0,)), cursor=after.index("}"))
    assert applied(after, preds, "file:///l.py") == after.replace('Level(30, "yellow")', 'Level[30, "yellow"]').replace(
        'Level(50, "red")', 'Level[50, "red"]')


def test_a_hole_the_rewrite_spells_in_a_string_is_filled_there_too_python_and_go():
    src = ("if PY3:\n    def viewkeys(d, **kw):\n        return d.keys(**kw)\n\n"
           "    def viewvalues(d, **kw):\n        return d.values(**kw)\n")
    after = src.replace("    def viewkeys(d, **kw):\n        return d.keys(**kw)\n", '    viewkeys = operator.methodcaller("keys")\n')
    preds = rule_edits(shaped_repeat.RULE, doc("file:///six.py", after, (src,), (1.0,)), cursor=after.index(")\n") + 1)
    assert applied(after, preds, "file:///six.py") == after.replace(
        "    def viewvalues(d, **kw):\n        return d.values(**kw)", '    viewvalues = operator.methodcaller("values")')
    go = "package p\n\nfunc init() {\n\tregister(alpha)\n\tregister(beta)\n}\n"
    after = go.replace("\tregister(alpha)", '\tregisterNamed("alpha", alpha)')
    preds = rule_edits(shaped_repeat.RULE, doc("file:///p.go", after, (go,), (1.0,), grammar="go"), cursor=0)
    assert applied(after, preds, "file:///p.go") == after.replace("\tregister(beta)", '\tregisterNamed("beta", beta)')


IMPORTS = """import EventEmitter from 'eventemitter3';
import test from 'ava';
import inRange from 'in-range';
import randomInt from 'random-int';
"""


def test_two_edits_rewriting_lines_alike_rewrite_the_next_line_that_reads_as_them_typescript():
    # one example alone shares no name with the next import (keywords and punctuation only): two
    # edits made alike are the rows of a rule whose holes are where they differ
    v1 = IMPORTS.replace("import EventEmitter from 'eventemitter3';", "import EventEmitter = require('eventemitter3');")
    v2 = v1.replace("import inRange from 'in-range';", "import inRange = require('in-range');")
    one = doc("file:///test.ts", v1, (IMPORTS,), (1.0,), grammar="typescript")
    assert rule_edits(shaped_repeat.RULE, one, cursor=v1.index("import test")) == []
    two = doc("file:///test.ts", v2, (v1, IMPORTS), (2.0, 1.0), grammar="typescript")
    preds = rule_edits(shaped_repeat.RULE, two, cursor=v2.index("import randomInt"))
    assert applied(v2, preds, "file:///test.ts") == v2.replace(
        "import randomInt from 'random-int';", "import randomInt = require('random-int');")


EXCEPTS = """try:
    load()
except IOError, e:
    log(e)
try:
    save()
except OSError, err:
    log(err)
try:
    close()
except ValueError, exc:
    log(exc)
"""


def test_two_edits_rewriting_lines_alike_rewrite_the_next_one_and_unlike_ones_teach_nothing_python():
    v1 = EXCEPTS.replace("except IOError, e:", "except IOError as e:")
    v2 = v1.replace("except OSError, err:", "except OSError as err:")
    d = doc("file:///m.py", v2, (v1, EXCEPTS), (2.0, 1.0))
    preds = rule_edits(shaped_repeat.RULE, d, cursor=v2.index("as err:") + 7)
    assert applied(v2, preds, "file:///m.py") == v2.replace("except ValueError, exc:", "except ValueError as exc:")
    # the second edit rewrote its line another way: no rule the two share
    other = v1.replace("except OSError, err:", "except (OSError, err):")
    d = doc("file:///m.py", other, (v1, EXCEPTS), (2.0, 1.0))
    assert rule_edits(shaped_repeat.RULE, d, cursor=other.index("err):") + 5) == []


COLORS = """const CODES = {
\tblack: [30, 39],
\tred: [31, 39],
\tgreen: [32, 39],
};
const BG = {
\tbgBlack: [40, 49],
\tbgRed: [41, 49],
\tbgWhite: [47, 49]
};
"""


def test_rows_teach_a_constant_they_carry_and_the_last_row_needs_no_separator_javascript():
    # every row ends in 39, carried over: the next table's 49 is its own, and its last row has no comma
    after = COLORS.replace("[30, 39]", "code(30, 39)").replace("[31, 39]", "code(31, 39)").replace(
        "[32, 39]", "code(32, 39)")
    preds = rule_edits(shaped_repeat.RULE, doc("file:///k.js", after, (COLORS,), (1.0,), grammar="javascript"),
                       cursor=after.index("code(32, 39),") + 13)
    assert applied(after, preds, "file:///k.js") == after.replace("[40, 49]", "code(40, 49)").replace(
        "[41, 49]", "code(41, 49)").replace("[47, 49]", "code(47, 49)")


CASES = """package m

var small = []struct{ in, want string }{
\t{"a", "b"},
\t{"c", "d"},
}

var large = []struct{ in, want string }{
\t{"e", "f"},
\t{"g", "h"}}
"""


def test_rows_rewritten_alike_reach_the_next_table_but_not_a_row_that_differs_elsewhere_go():
    after = CASES.replace('{"a", "b"}', '{in: "a", want: "b"}').replace('{"c", "d"}', '{in: "c", want: "d"}')
    preds = rule_edits(shaped_repeat.RULE, doc("file:///m_test.go", after, (CASES,), (1.0,), grammar="go"),
                       cursor=after.index('"d"},') + 5)
    # the last row closes the table on its own line: it reads as no row, the one above is rewritten
    assert applied(after, preds, "file:///m_test.go") == after.replace('{"e", "f"}', '{in: "e", want: "f"}')
