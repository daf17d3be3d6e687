"""Renames read line by line over the whole recent history (``steps.candidates.line_renames``)."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState, NextEditQuery, apply_edits, predict
from mercury_lsp.next_edit.steps.candidates import line_renames
from mercury_lsp.syntax import Grammars

G = Grammars()


def ask(uri: str, text: str, history: tuple[str, ...], grammar: str, cursor: int = 0):
    times = tuple(float(len(history) - i) for i in range(len(history)))
    d = DocState(uri, text, grammar, 1, history, max(times, default=0.0), times)
    return predict(NextEditQuery((d,), uri, cursor), None, G).predictions


GO_ENUM = ("package flag\n\nconst (\n\t// UnknownFlagsHandlingErrorOnUnknown returns an error\n"
           "\tUnknownFlagsHandlingErrorOnUnknown UnknownFlagsHandling = iota\n"
           "\tUnknownFlagsHandlingIgnoreUnknown\n\tUnknownFlagsHandlingPassUnknownToArgs\n)\n"
           + "".join(f"\nfunc f{i}() {{}}\n" for i in range(60))
           + "\nfunc g(h UnknownFlagsHandling) UnknownFlagsHandling {\n"
             "\tif h != UnknownFlagsHandlingErrorOnUnknown {\n\t\treturn UnknownFlagsHandlingIgnoreUnknown\n\t}\n"
             "\treturn UnknownFlagsHandlingPassUnknownToArgs\n}\n")


def applied(text: str, preds) -> str:
    return apply_edits(text, [(p.start, p.end, p.new_text) for p in preds])


def test_every_rename_of_the_history_is_followed_not_only_the_newest():
    """Two enum members renamed, then a third: the uses of all three follow, though the history's
    first and last changes are far apart and the lone member lines hold one token each."""
    one = GO_ENUM.replace("UnknownFlagsHandlingErrorOnUnknown returns", "ErrorOnUnknownFlag returns") \
        .replace("\tUnknownFlagsHandlingErrorOnUnknown UnknownFlagsHandling = iota\n\tUnknownFlagsHandlingIgnoreUnknown\n",
                 "\tErrorOnUnknownFlag UnknownFlagsHandling = iota\n\tIgnoreUnknownFlag\n")
    two = one.replace("\tUnknownFlagsHandlingPassUnknownToArgs\n)", "\tPassUnknownFlagToArgs\n)")
    renames = {(old, new) for _, old, new in line_renames(GO_ENUM, two)[0]}
    assert ("UnknownFlagsHandlingIgnoreUnknown", "IgnoreUnknownFlag") in renames
    preds = ask("file:///flag.go", two, (one, GO_ENUM), "go", cursor=two.index("PassUnknownFlagToArgs"))
    assert applied(two, preds) == two.replace("UnknownFlagsHandlingErrorOnUnknown", "ErrorOnUnknownFlag") \
        .replace("UnknownFlagsHandlingIgnoreUnknown", "IgnoreUnknownFlag") \
        .replace("UnknownFlagsHandlingPassUnknownToArgs", "PassUnknownFlagToArgs")


def test_another_module_imported_is_no_rename():
    src = "from a import x\n\nprint(x)\n"
    assert line_renames(src, src.replace("from a import x", "from b import y"))[0] == []
    assert line_renames(src, src.replace("from a import x", "from a import y"))[0] == []


def test_a_switch_between_two_imported_names_is_no_rename_rust():
    """``Display::fmt`` -> ``Debug::fmt`` in one arm, both traits imported: the user chose the other
    import there; the import line and the other arms keep ``Display`` (no rule renames them)."""
    src = ("use core::fmt::{self, Debug, Display};\n\nimpl Display for Number {\n"
           "    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n        match self.n {\n"
           "            N::PosInt(u) => Display::fmt(&u, f),\n            N::Float(x) => Display::fmt(&x, f),\n"
           "        }\n    }\n}\n")
    after = src.replace("N::Float(x) => Display::fmt", "N::Float(x) => Debug::fmt")
    preds = ask("file:///number.rs", after, (src,), "rust")
    assert not [p for p in preds if p.kind == "rename"]


def test_a_switch_between_two_imported_names_is_no_rename_python():
    src = "from json import dumps, loads\n\n\ndef save(x):\n    a = dumps(x)\n    b = dumps(a)\n    return b\n"
    after = src.replace("a = dumps(x)", "a = loads(x)")
    preds = ask("file:///s.py", after, (src,), "python")
    assert not [p for p in preds if p.kind == "rename"]
    fresh = src.replace("a = dumps(x)", "a = encode(x)")  # a name not imported: a rename to follow
    assert [p.new_text for p in ask("file:///s.py", fresh, (src,), "python") if p.kind == "rename"]


def test_a_retyped_loop_header_renames_its_variable_once_its_list_is_read_renamed_go_and_python():
    """``cases`` -> ``testCases`` in one hunk; the loop over it retyped with lines added in another,
    its variable renamed too (two renames in the retyped line, one of them read already) to a
    name the function spells already (a type, a keyword): the loop variable's other uses follow."""
    src = ("package cast\n\nfunc bench(b *testing.B) {\n\ttype testCase struct{ name string }\n"
           "\tcases = append(\n\t\tcases,\n\t)\n"
           "\tfor _, c := range cases {\n\t\tb.Run(c.name, func(b *testing.B) {\n"
           "\t\t\t_, _ = c.specific(c.input)\n\t\t})\n\t}\n}\n")
    one = src.replace("\tcases = append(\n\t\tcases,", "\ttestCases = append(\n\t\ttestCases,")
    two = one.replace("\tfor _, c := range cases {\n\t\tb.Run(c.name",
                      "\tfor _, testCase := range testCases {\n\t\ttestCase := testCase\n\n\t\tb.Run(testCase.name")
    preds = ask("file:///number_test.go", two, (one, src), "go", cursor=two.index("testCase.name"))
    assert "\t\t\t_, _ = testCase.specific(testCase.input)\n" in applied(two, preds)
    # two renames no aligned pair reads (a line of another attribute retyped) pair nothing
    src = "def f(self, missing, getsizeof):\n    self.__missing = missing\n    self.__size = getsizeof\n"
    after = "def f(self, missing, getsizeof):\n    if getsizeof:\n        self.__getsizeof = getsizeof\n"
    assert ("__missing", "__getsizeof") not in {(o, n) for _, o, n in line_renames(src, after)[0]}
    src = ("def run(cases):\n    setup(test_case=True)\n    cases = sorted(\n        cases,\n    )\n    for c in cases:\n"
           "        check(c.name)\n        use(c.value)\n")
    one = src.replace("    cases = sorted(\n        cases,", "    test_cases = sorted(\n        test_cases,")
    two = one.replace("    for c in cases:\n        check(c.name)",
                      "    for test_case in test_cases:\n        log(test_case)\n        check(test_case.name)")
    preds = ask("file:///t.py", two, (one, src), "python", cursor=two.index("test_case.name"))
    assert "        use(test_case.value)\n" in applied(two, preds)


def test_a_definition_renamed_as_its_visibility_changes_is_a_rename_typescript_and_rust():
    src = ("export type OmnipresentEventData = {a: string};\n\n"
           "export type AllEventData = EventData & OmnipresentEventData;\n")
    after = src.replace("export type OmnipresentEventData =", "type _OmnipresentEventData =")
    preds = ask("file:///index.d.ts", after, (src,), "typescript", cursor=after.index("_Omni"))
    assert applied(after, preds) == after.replace("& OmnipresentEventData", "& _OmnipresentEventData")
    src = "pub struct Parser {\n    depth: usize,\n}\n\nfn make() -> Parser {\n    Parser { depth: 0 }\n}\n"
    after = src.replace("pub struct Parser {", "struct RawParser {")
    preds = ask("file:///lib.rs", after, (src,), "rust", cursor=after.index("RawParser"))
    assert applied(after, preds) == after.replace("-> Parser", "-> RawParser").replace("    Parser {", "    RawParser {")


SWITCH_GO = '''package toml

import (
	"log"
	"testing"
)

func TestA() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
	log.Print("x")
}

func ExampleB() {
	log.Fatal("y")
}
'''


def test_switch_to_a_new_parameter_stays_in_the_function_that_binds_it():
    """``log.Fatal`` -> ``t.Fatal`` once the test takes ``t``: the function's other ``log`` uses
    follow, never an example function's, which has no ``t``."""
    mid = SWITCH_GO.replace("func TestA() {", "func TestA(t *testing.T) {")
    after = mid.replace("\t\tlog.Fatal(err)", "\t\tt.Fatal(err)")
    preds = ask("file:///a_test.go", after, (mid, SWITCH_GO), "go")
    got = apply_edits(after, [(p.start, p.end, p.new_text) for p in preds])
    assert 't.Print("x")' in got and 'log.Fatal("y")' in got and '"log"' in got


def test_switch_to_a_new_python_parameter_stays_in_its_function():
    before = 'import logging\n\n\ndef run():\n    logging.info("a")\n    logging.warning("b")\n\n\ndef other():\n    logging.info("c")\n'
    mid = before.replace("def run():", "def run(logging_):")
    after = mid.replace('logging.info("a")', 'logging_.info("a")')
    preds = ask("file:///a.py", after, (mid, before), "python")
    got = apply_edits(after, [(p.start, p.end, p.new_text) for p in preds])
    assert 'logging.info("c")' in got and "import logging\n" in got


def test_no_rename_for_a_swap_a_library_callee_or_a_library_attribute():
    """Two names swapped in a line (JavaScript), a builtin macro switched at one call (Rust), an
    attribute of another library's object (a mock's ``return_value``, Python): none is a rename."""
    js = "test('order', t => {\n\tt.is(f(red, italic), g(red));\n\tt.is(f(red, italic), h(italic));\n});\n"
    after = js.replace("t.is(f(red, italic), g(red))", "t.is(f(italic, red), g(red))")
    assert [p for p in ask("file:///t.js", after, (js,), "javascript") if p.rule == "NE101"] == []
    rs = 'fn show(a: &str) {\n    println!("{}", a);\n    println!("{}", a);\n    println!("done");\n}\n'
    after = rs.replace('    println!("{}", a);\n', '    print!("{}", a);\n', 1)
    assert [p for p in ask("file:///s.rs", after, (rs,), "rust") if p.rule == "NE101"] == []
    py = ("def spy(result, e):\n    result.return_value = e\n    return result\n\n\n"
          "def check(spy):\n    assert spy.return_value == 1\n")
    after = py.replace("result.return_value = e", "result.side_effect = e")
    assert [p for p in ask("file:///p.py", after, (py,), "python") if p.rule == "NE101"] == []
    own = "class Box:\n    def __init__(self):\n        self.size = 0\n\n    def grow(self):\n        self.size += 1\n"
    after = own.replace("self.size = 0", "self.length = 0")
    assert [p.new_text for p in ask("file:///b.py", after, (own,), "python") if p.rule == "NE101"] == ["length"]


def test_names_reordered_in_a_line_are_no_renames_however_many():
    before = "t.is(out, ANSI(italic[0]) + ANSI(bold[0]) + ANSI(red[0]) + val)\n"
    after = "t.is(out, ANSI(red[0]) + ANSI(bold[0]) + ANSI(italic[0]) + val)\n"
    assert line_renames(before, after)[0] == []  # a swap of two
    after = "t.is(out, ANSI(bold[0]) + ANSI(red[0]) + ANSI(italic[0]) + val)\n"
    assert line_renames(before, after)[0] == []  # a cycle of three
    renamed = "t.is(out, ANSI(slant[0]) + ANSI(bold[0]) + ANSI(red[0]) + val)\n"
    assert {(o, n) for _, o, n in line_renames(before, renamed)[0]} == {("italic", "slant")}
