"""NE105 removed-use: statements left using a definition the user deleted go."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState, NextEditQuery, apply_edits, predict
from mercury_lsp.next_edit.pipeline import rule_context
from mercury_lsp.next_edit.rules.follow import removed_import_name, removed_use
from mercury_lsp.next_edit.rules.follow.deleted import MAX_SITES, deleted_declarations
from mercury_lsp.syntax import Grammars

G = Grammars()


def doc(uri: str, text: str, history: tuple[str, ...] = (), grammar="go") -> DocState:
    return DocState(uri, text, grammar, 1, history, 1.0 if history else 0.0, (1.0,) * len(history))


def ask(*docs: DocState):
    return predict(NextEditQuery(docs, docs[0].uri, 0), None, G).predictions


def removed(*docs: DocState):
    ctx = rule_context(NextEditQuery(docs, docs[0].uri, 0), G)
    return removed_import_name.RULE.run(ctx) + removed_use.RULE.run(ctx)


def test_a_deleted_field_takes_the_statements_using_it():
    src = ("package cobra\n\ntype Command struct {\n\tname string\n\tflagErrorBuf *bytes.Buffer\n}\n\n"
           "func (c *Command) run() {\n\tstart()\n\tc.Println(c.flagErrorBuf)\n\tc.flags.Parse()\n}\n\n"
           "func (c *Command) init() {\n\tif c.flagErrorBuf == nil {\n\t\tc.flagErrorBuf = new(bytes.Buffer)\n\t}\n"
           "\tc.done = true\n}\n")
    after = src.replace("\tflagErrorBuf *bytes.Buffer\n", "")
    preds = ask(doc("file:///command.go", after, (src,)))
    assert apply_edits(after, [(p.start, p.end, p.new_text) for p in preds]) == after.replace(
        "\tc.Println(c.flagErrorBuf)\n", "").replace(
        "\tif c.flagErrorBuf == nil {\n\t\tc.flagErrorBuf = new(bytes.Buffer)\n\t}\n", "")


def test_a_deleted_package_variable_takes_its_assignment():
    src = "package cobra\n\nvar InitializeConfig func()\n\nfunc init() {\n\tInitializeConfig = func() {}\n}\n"
    after = src.replace("var InitializeConfig func()\n", "var initializers []func()\n")
    preds = ask(doc("file:///cobra.go", after, (src,)))
    assert [(p.old_text, p.new_text) for p in preds] == [("\tInitializeConfig = func() {}\n", "")]


def test_names_still_declared_moved_functions_and_definitions_are_left_alone():
    assert deleted_declarations("x\nfunc helper() {}\n", "x\n") == {"helper": 2}
    assert deleted_declarations("x\n\twith open(p) as f:\n", "x\n") == {}  # a keyword is no declaration
    fn = "func methodNotAllowed(w Writer) {\n\tw.Write(nil)\n}\n"
    uses = "".join(f"func f{i}() {{\n\tmethodNotAllowed(w)\n}}\n" for i in range(4))
    src = "package chi\n\n" + fn + uses
    assert removed(doc("file:///mux.go", "package chi\n\n" + uses, (src,))) == []  # cut to be pasted: 4 uses stay
    other = doc("file:///tree.go", "package chi\n\n" + fn.replace("methodNotAllowed", "helperName"))
    src = "package chi\n\nfunc helperName() {}\n\nfunc g() {\n\thelperName()\n}\n"
    after = src.replace("func helperName() {}\n", "")
    assert removed(doc("file:///mux.go", after, (src,)), other) == []  # defined in another open document
    src = "package chi\n\nvar limit = 3\n\nfunc Throttle(limit int) func() {\n\treturn nil\n}\n"
    after = src.replace("var limit = 3\n", "")
    assert removed(doc("file:///t.go", after, (src,))) == []  # a parameter's use is in a definition's line


def test_a_local_deleted_in_one_function_leaves_other_functions_and_attributes_alone():
    src = ("def host(self):\n    if self.absolute:\n        return self.url\n    name = self.raw\n"
           "    name = name.split(':')[0]\n    check()\n    log(name.upper())\n    return self.url\n\n\n"
           "def vars(self):\n    self.name = compute()\n    other(self.name)\n")
    after = src.replace("    name = self.raw\n    name = name.split(':')[0]\n", "")
    preds = ask(doc("file:///r.py", after, (src,), grammar="python"))
    got = apply_edits(after, [(p.start, p.end, p.new_text) for p in preds])
    assert got == after.replace("    log(name.upper())\n", "")  # its function's only, no attribute


def test_a_deleted_reassignment_of_a_parameter_is_no_deleted_variable():
    src = ("function got(url, opts, cb) {\n\topts = normalize(url, opts);\n\tcheck();\n\tif (cb) {\n\t\tcall(opts, cb);\n"
           "\t\treturn;\n\t}\n\treturn run(opts);\n}\n")
    after = src.replace("\topts = normalize(url, opts);\n", "")
    assert ask(doc("file:///index.js", after, (src,), grammar="javascript")) == []


def test_a_deleted_short_variable_declaration_takes_the_statements_using_it():
    # Go's ``name := value`` declares as ``let``/``var`` do (the bare ``name = value`` of Python
    # is the test above); its function's other statements using it go
    src = ("package errors\n\nfunc trim(name string, goal int) string {\n\tpathCnt := 0\n\tfor i := len(name) - 1; i > 0; i-- {\n"
           "\t\tif name[i] == '/' {\n\t\t\tpathCnt++\n\t\t}\n\t}\n\treturn name\n}\n")
    after = src.replace("\tpathCnt := 0\n", "")
    preds = ask(doc("file:///errors.go", after, (src,)))
    assert apply_edits(after, [(p.start, p.end, p.new_text) for p in preds]) == after.replace("\t\t\tpathCnt++\n", "")
    assert deleted_declarations(src, after) == {"pathCnt": MAX_SITES}
