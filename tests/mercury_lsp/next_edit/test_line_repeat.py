"""Whole lines repeated and moved (``line_repeat``, ``moved``): lines deleted or inserted again
where the same lines stand, the old copy of lines written again, and what is no such repeat (a
long new block, lines the user just wrote, one line written in another function). The helpers are
``test_repeat``'s."""

from __future__ import annotations

from mercury_lsp.next_edit import NextEditQuery
from mercury_lsp.next_edit.pipeline import rule_context
from mercury_lsp.next_edit.rules.lines.blocks import line_changes
from mercury_lsp.next_edit.rules.lines.repeated_lines import RULE
from tests.mercury_lsp.next_edit.test_repeat import G, applied, ask, doc


def test_deleted_lines_are_deleted_where_they_still_stand():
    src = ('func a() {\n\tfmt.Println(filename)\n\tdo()\n\tfmt.Println("err:", err)\n}\n\n'
           'func b() {\n\tfmt.Println("err:", err)\n\treturn\n}\n')
    after = src.replace('\tdo()\n\tfmt.Println("err:", err)\n', "\tdo()\n", 1)
    preds = ask(doc("file:///h.go", after, (src,), (1.0,), grammar="go"))
    assert applied(after, preds, "file:///h.go") == after.replace('\tfmt.Println("err:", err)\n', "")


def test_inserted_lines_go_above_every_line_like_the_one_below_them():
    flush = "\tfl := f.basicWriter.ResponseWriter.(http.Flusher)\n\tfl.Flush()\n}\n"
    src = ("package middleware\n\nfunc (f *flushWriter) Flush() {\n" + flush
           + "\nfunc (f *httpFancyWriter) Flush() {\n" + flush)
    after = src.replace("(f *flushWriter) Flush() {\n", "(f *flushWriter) Flush() {\n\tf.wroteHeader = true\n")
    preds = ask(doc("file:///w.go", after, (src,), (1.0,), grammar="go"))
    assert applied(after, preds, "file:///w.go") == after.replace(
        "(f *httpFancyWriter) Flush() {\n", "(f *httpFancyWriter) Flush() {\n\tf.wroteHeader = true\n")


def test_lines_between_braces_or_too_short_are_not_repeated():
    src = "if a {\n}\nif b {\n}\nx := 1\ny := 1\n"
    after = src.replace("if a {\n}\n", "if a {\n\tcleanup(resources)\n}\n").replace("x := 1\n", "")
    assert line_changes(src, after) == [] or RULE.run(rule_context(NextEditQuery(
        (doc("file:///a.go", after, (src,), (1.0,), grammar="go"),), "file:///a.go", 0), G)) == []


def test_lines_that_could_go_in_at_many_places_are_not_inserted():
    body = "\tfl := f.basicWriter.ResponseWriter.(http.Flusher)\n\tfl.Flush()\n}\n"
    src = "package m\n" + "".join(f"\nfunc (f *w{i}) Flush() {{\n" + body for i in range(4))
    after = src.replace("(f *w0) Flush() {\n", "(f *w0) Flush() {\n\tf.wroteHeader = true\n")
    assert ask(doc("file:///w.go", after, (src,), (1.0,), grammar="go")) == []


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


def test_a_doctest_line_written_again_next_to_its_old_version_leaves_the_old_one_to_delete():
    src = '    """\n        >>> f = open(path)\n        >>> after = lambda: f.close()\n    """\n'
    after = src.replace("        >>> after = lambda", "        >>> after = f.close\n        >>> after = lambda")
    preds = ask(doc("file:///d.py", after, (src,), (1.0,)), cursor=after.index("f.close\n") + 7)
    assert applied(after, preds, "file:///d.py") == src.replace("lambda: f.close()", "f.close")


def test_lines_the_user_just_wrote_are_never_deleted_as_a_repeat():
    # a line moved: deleted in one place and written again in another; the deletion is no change
    # to repeat where the user just put it
    a0 = 'import (\n\t"fmt"\n\t"encoding/json"\n)\n\nfunc f() {\n\tfmt.Println(1)\n}\n'
    a1 = a0.replace('\t"encoding/json"\n', "")
    a2 = a1.replace('\t"fmt"\n', '\t"encoding/json"\n\t"fmt"\n')
    preds = ask(doc("file:///m.go", a2, (a1, a0), (2.0, 1.0), grammar="go"), cursor=a2.index("fmt"))
    assert not [p for p in preds if p.new_text == "" and "encoding/json" in p.old_text]


def test_a_long_inserted_block_is_new_code_not_a_repeat():
    src = "func a(r *R) int {\n\tstart()\n\tfinish()\n}\n\nfunc b(r *R) int {\n\tstart()\n\tfinish()\n}\n"
    block = "\t// the closest match\n\tif r.NotFound != nil {\n\t\tmatch.Handler = r.NotFound\n\t\treturn true\n\t}\n"
    after = src.replace("\tstart()\n\tfinish()\n", "\tstart()\n" + block + "\tfinish()\n", 1)
    preds = ask(doc("file:///r.go", after, (src,), (1.0,), grammar="go"))
    assert not [p for p in preds if "closest match" in p.new_text]
    short = src.replace("\tstart()\n\tfinish()\n", "\tstart()\n\tr.done = true\n\tfinish()\n", 1)
    preds = ask(doc("file:///r.go", short, (src,), (1.0,), grammar="go"))
    assert applied(short, preds, "file:///r.go") == src.replace("\tstart()\n\tfinish()\n",
                                                               "\tstart()\n\tr.done = true\n\tfinish()\n")


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
