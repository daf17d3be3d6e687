"""NE302 moved-lines: lines written again elsewhere leave their old copy to delete."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState
from mercury_lsp.next_edit.rules.lines.moved_lines import RULE
from tests.support.next_edit import applied, ask, doc, rule_edits


def test_a_line_written_again_nearby_leaves_its_old_copy_to_delete():
    src = ("Command.prototype.outputHelp = function() {\n  this.emit('help');\n"
           "  process.stdout.write(this.helpInformation());\n};\n")
    after = src.replace("  this.emit('help');\n", "  process.stdout.write(this.helpInformation());\n  this.emit('help');\n")
    preds = ask(doc("file:///c.js", after, (src,), (1.0,), grammar="javascript"))
    assert applied(after, preds, "file:///c.js") == src.replace("  process.stdout.write(this.helpInformation());\n", "") \
        .replace("  this.emit('help');\n", "  process.stdout.write(this.helpInformation());\n  this.emit('help');\n")


def test_a_block_moved_to_another_file_is_deleted_from_the_old_one():
    fn = "pub fn is_executable(md: &fs::Metadata) -> bool {\n    md.permissions().mode() & 0o111 != 0\n}\n"
    old = "use std::fs;\n\npub fn other() {}\n\n" + fn + "\npub fn last() {}\n"
    helper0 = "use std::path::Path;\n"
    helper1 = helper0 + "\n" + fn
    preds = ask(doc("file:///fshelper.rs", helper1, (helper0,), (1.0,), grammar="rust"),
                doc("file:///internal.rs", old, grammar="rust"))
    assert applied(old, preds, "file:///internal.rs") == "use std::fs;\n\npub fn other() {}\n\npub fn last() {}\n"


def test_imports_short_lines_and_several_old_copies_are_not_moves():
    imp = "from datetime import timedelta\n"
    b = doc("file:///b.py", imp + "x = 1\n")
    a0 = "import os\n"
    assert ask(doc("file:///a.py", a0 + imp, (a0,), (1.0,)), b) == []  # an import added: not a move
    two = "register_handler(items)\nother()\nregister_handler(items)\n"
    after = "register_handler(items)\n" + two  # pasted once more: which old copy would go?
    assert not [p for p in ask(doc("file:///c.py", after, (two,), (1.0,))) if p.new_text == ""]


def test_a_line_duplicated_in_place_is_not_a_move():
    body = "    register_handler(items, retries=3)\n    return items\n"
    src = "def f(items):\n" + body + "\n\ndef g(items):\n" + body
    after = src.replace(body, "    register_handler(items, retries=3)\n" + body, 1)
    assert ask(doc("file:///d.py", after, (src,), (1.0,))) == []  # no old copy deleted, no copy repeated


def test_one_line_written_in_another_function_leaves_its_namesake_line_alone():
    line = "        self.option_name = option_name\n"
    cls = "class {}(Exception):\n    def __init__(self, option_name, message):\n        self.message = message\n{}\n"
    src = cls.format("BadParameter", line) + cls.format("BadOptionUsage", "")
    at = src.index("class BadOptionUsage")
    after = src[:at] + src[at:].replace("        self.message = message\n", "        self.message = message\n" + line)
    preds = ask(doc("file:///e.py", after, (src,), (1.0,)), cursor=after.rindex("option_name"))
    assert not [p for p in preds if p.new_text == "" and "option_name" in p.old_text]


def test_an_import_written_again_in_its_own_document_leaves_its_old_copy_to_delete():
    src = ("import test from 'ava';\nimport delay from 'delay';\n"
           "// eslint-disable-next-line @typescript-eslint/no-require-imports\n"
           "import EventEmitter = require('eventemitter3');\n\nconst x = new EventEmitter();\n")
    imp = "import EventEmitter = require('eventemitter3');\n"
    after = imp + src
    preds = ask(doc("file:///t.ts", after, (src,), (1.0,), grammar="typescript"), cursor=len(imp) - 1)
    directive = "// eslint-disable-next-line @typescript-eslint/no-require-imports\n"
    assert [(p.old_text, p.new_text) for p in preds] == [(directive + imp, "")]  # its directive too
    assert preds[0].start > len(imp)  # the old copy, not the one just written


def test_the_same_lines_written_at_two_places_are_no_move_python():
    """``@pytest.mark.benchmark()`` written above one test, then above another: the first copy is
    the user's own, just written — not an old copy to delete."""
    src = ("class TestX:\n    def test_one(self):\n        assert run_the_first_case()\n\n"
           "    def test_two(self):\n        assert run_the_second_case()\n")
    one = src.replace("    def test_one", "    @pytest.mark.benchmark()\n    def test_one")
    two = one.replace("    def test_two", "    @pytest.mark.benchmark()\n    def test_two")
    d = DocState("file:///t.py", two, "python", 1, (one, src), 2.0, (2.0, 1.0))
    assert rule_edits(RULE, d, cursor=two.index("test_two")) == []


def test_a_block_pasted_at_two_places_is_no_move_but_a_pasted_copy_of_old_lines_is_go():
    src = ("package p\n\nfunc a() {\n\tstart()\n}\n\nfunc b() {\n\tstart()\n}\n\n"
           "func c() {\n\twd, err := os.Getwd()\n\tcheck(err)\n}\n")
    block = "\tdir := makeTheTemporaryFolder(t)\n\tdefer os.RemoveAll(dir)\n"
    one = src.replace("func a() {\n", "func a() {\n" + block)
    two = one.replace("func b() {\n", "func b() {\n" + block)
    d = DocState("file:///p.go", two, "go", 1, (one, src), 2.0, (2.0, 1.0))
    assert rule_edits(RULE, d) == []
    moved = src.replace("func a() {\n", "func a() {\n\twd, err := os.Getwd()\n\tcheck(err)\n")
    d = DocState("file:///p.go", moved, "go", 1, (src,), 1.0, (1.0,))
    assert [p.old_text for p in rule_edits(RULE, d)] == ["\twd, err := os.Getwd()\n\tcheck(err)\n"]


def test_a_short_import_moved_up_its_file_leaves_its_old_line_rust_and_python():
    src = "use std::fmt;\nuse serde::de;\nuse std::result;\n\npub fn f() {}\n"
    after = "use std::fmt;\nuse std::result;\nuse serde::de;\nuse std::result;\n\npub fn f() {}\n"
    preds = rule_edits(RULE, doc("file:///error.rs", after, (src,), (1.0,), grammar="rust"))
    assert applied(after, preds, "file:///error.rs") == "use std::fmt;\nuse std::result;\nuse serde::de;\n\npub fn f() {}\n"
    src = "import os\nimport sys\nimport functools\n\nx = 1\n"
    after = "import functools\n" + src
    preds = rule_edits(RULE, doc("file:///m.py", after, (src,), (1.0,)))
    assert applied(after, preds, "file:///m.py") == "import functools\nimport os\nimport sys\n\nx = 1\n"
