"""Renames read from the whole recent history (``candidates``): several renames in one history,
an import's local name renamed, lone enum members, hunks far apart; and their scope (a name other
functions define or bind themselves, an old name declared anew)."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState, NextEditQuery, apply_edits, predict
from mercury_lsp.next_edit.steps.candidates import line_renames
from mercury_lsp.syntax import Grammars

G = Grammars()


def ask(uri: str, text: str, history: tuple[str, ...], grammar: str, cursor: int = 0):
    times = tuple(float(len(history) - i) for i in range(len(history)))
    d = DocState(uri, text, grammar, 1, history, max(times, default=0.0), times)
    return predict(NextEditQuery((d,), uri, cursor), None, G).predictions


def applied(text: str, preds) -> str:
    return apply_edits(text, [(p.start, p.end, p.new_text) for p in preds])


GO_ENUM = ("package flag\n\nconst (\n\t// UnknownFlagsHandlingErrorOnUnknown returns an error\n"
           "\tUnknownFlagsHandlingErrorOnUnknown UnknownFlagsHandling = iota\n"
           "\tUnknownFlagsHandlingIgnoreUnknown\n\tUnknownFlagsHandlingPassUnknownToArgs\n)\n"
           + "".join(f"\nfunc f{i}() {{}}\n" for i in range(60))
           + "\nfunc g(h UnknownFlagsHandling) UnknownFlagsHandling {\n"
             "\tif h != UnknownFlagsHandlingErrorOnUnknown {\n\t\treturn UnknownFlagsHandlingIgnoreUnknown\n\t}\n"
             "\treturn UnknownFlagsHandlingPassUnknownToArgs\n}\n")


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


def test_an_imports_local_name_renamed_is_followed_after_another_edit():
    src = ("import test from 'ava';\nimport m from '.';\n\nconst mapper = x => x;\n\n"
           "test('main', async t => {\n\tt.deepEqual(await m([1], mapper), [1]);\n});\n")
    one = src.replace("import m from '.'", "import pMap from '.'")
    two = one.replace("const mapper = x => x;", "const mapper = value => value;")
    preds = ask("file:///test.js", two, (one, src), "javascript", cursor=two.index("value;"))
    assert applied(two, preds) == two.replace("await m(", "await pMap(")


def test_another_module_imported_is_no_rename():
    src = "from a import x\n\nprint(x)\n"
    assert line_renames(src, src.replace("from a import x", "from b import y"))[0] == []
    assert line_renames(src, src.replace("from a import x", "from a import y"))[0] == []


def test_a_type_renamed_in_one_function_leaves_the_namesakes_other_functions_define():
    fn = ("#[test]\nfn test_{n}() {{\n    #[derive(Error, Debug)]\n    enum Error {{\n        Repro,\n    }}\n"
          "    assert(Error::Repro);\n}}\n\n")
    src = "use thiserror::Error;\n\n" + "".join(fn.format(n=n) for n in ("a", "b", "c"))
    at = src.index("fn test_b")
    head, tail = src[:at], src[at:]
    after = head + tail.replace("enum Error {", "enum Error0 {", 1)
    preds = ask("file:///t.rs", after, (src,), "rust", after.index("Error0"))
    want = head + tail.replace("enum Error {", "enum Error0 {", 1).replace("assert(Error::", "assert(Error0::", 1)
    assert applied(after, preds) == want  # not test_a's or test_c's, nor derive's macro


def test_a_loop_variable_renamed_in_one_go_test_stays_in_that_test():
    fn = ("func Test{n}(t *testing.T) {{\n\tfor _, c := range cases {{\n\t\tif c.in != c.want {{\n"
          "\t\t\tt.Fatal(c.in)\n\t\t}}\n\t}}\n}}\n\n")
    src = "package p\n\n" + fn.format(n="A") + fn.format(n="B")
    at = src.index("func TestB")
    head, tail = src[:at], src[at:]
    after = head + tail.replace("c.in != c.want", "testCase.in != testCase.want", 1)
    preds = ask("file:///p_test.go", after, (src,), "go", after.index("testCase.want"))
    assert all(p.start >= len(head) for p in preds)  # TestA binds its own c


def test_a_renamed_parameter_whose_old_name_is_declared_anew_is_no_rename():
    src = "function parse(str, opt) {\n  opt = opt || {};\n  var dec = opt.decode || decode;\n  return dec(str);\n}\n"
    after = src.replace("function parse(str, opt) {\n  opt = opt || {};\n",
                        "function parse(str, options) {\n  var opt = options || {};\n")
    preds = ask("file:///index.js", after, (src,), "javascript", after.index("var opt"))
    assert not [p for p in preds if p.kind == "rename"]  # opt.decode is the new var's
