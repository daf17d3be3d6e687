"""NE502 like-line-ending: a half-typed line finished like the document's lines that start the same
way (Python, JavaScript, Go, Rust)."""

from __future__ import annotations

from mercury_lsp.completion.choose import memory_lines
from mercury_lsp.next_edit import DocState, NextEditQuery, predict
from mercury_lsp.next_edit.rules.complete import like_line_ending
from mercury_lsp.syntax import Grammars
from tests.support import memory as mem_support
from tests.support.next_edit import ask, doc, recall, rule_edits

G = Grammars()


def completions(before: str, typed: str, where: str, grammar: str, uri: str):
    """The user inserted ``typed`` (a line, no newline) after the line ``where``; the cursor ends it.
    Returns (cursor, [(start, new text, kind)])."""
    at = before.index(where) + len(where)
    after = before[:at] + typed + "\n" + before[at:]
    cursor = at + len(typed)
    q = NextEditQuery((DocState(uri, after, grammar, 2, (before,), 1.0, (1.0,)),), uri, cursor)
    return cursor, [(p.start, p.new_text, p.kind) for p in predict(q, None, G).predictions]


def test_a_javascript_line_that_parses_is_finished_like_its_siblings_with_their_names_renamed():
    ctor = "function Command(name) {\n  this.commands = [];\n  this._args = [];\n  this._name = name;\n}\n"
    cursor, got = completions(ctor, "  this._execs", "  this.commands = [];\n", "javascript", "file:///c.js")
    assert got == [(cursor, " = [];", "complete")]  # the most frequent ending of 'this.<name>'
    top = ("const getGlobal = p => globalThis[p];\n\nconst document = getGlobal('document');\n"
           "const Headers = getGlobal('Headers');\n\nexport {Headers};\n")
    cursor, got = completions(top, "const FormData = getGlobal", "getGlobal('Headers');\n", "javascript", "file:///k.js")
    assert got == [(cursor, "('FormData');", "complete")]  # renamed in the string too


def test_a_member_typed_alone_stores_the_parameter_it_is_named_after():
    init = ("class CodeGenerator:\n    def __init__(self, environment, name, stream=None):\n        self.name = name\n"
            "        self.stream = stream\n\n    def write(self, x):\n        self.stream.write(x)\n")
    cursor, got = completions(init, "        self.environment", "        self.name = name\n", "python", "file:///g.py")
    assert got == [(cursor, " = environment", "complete")]  # not the siblings' ' = stream'
    cursor, got = completions(init, "        self.environment = ", "        self.name = name\n", "python", "file:///g.py")
    assert got == [(cursor, "environment", "complete")]
    ctor = "class Queue {\n  constructor(limit, name) {\n    this.name = name;\n  }\n}\n"
    cursor, got = completions(ctor, "    this.limit", "    this.name = name;\n", "javascript", "file:///q.js")
    assert got == [(cursor, " = limit;", "complete")]  # ';' as the line above


def test_a_member_already_stored_or_named_after_no_parameter_is_not_given_one():
    init = "class C:\n    def __init__(self, size):\n        self.size = size\n        self.total = 0\n"
    _, got = completions(init, "        self.size", "        self.total = 0\n", "python", "file:///c.py")
    assert all(text != " = size" for _, text, _ in got)  # stored already
    _, got = completions(init, "        self.count", "        self.total = 0\n", "python", "file:///c.py")
    assert all(text != " = count" for _, text, _ in got)  # no parameter 'count'


def test_a_python_keyword_argument_is_given_the_comma_of_its_siblings():
    src = "setup(\n    name='x',\n    author='A',\n    url='http://x',\n)\n"
    cursor, got = completions(src, "    version=version", "    author='A',\n", "python", "file:///setup.py")
    assert got == [(cursor, ",", "complete")]


def test_a_go_line_retyped_after_its_removal_is_finished_like_the_removed_line():
    before = "package p\n\nfunc f(cmd *C, flags []string) error {\n\terr := cmd.execute(flags)\n\treturn err\n}\n"
    src = before.replace("\terr := cmd.execute(flags)\n", "")
    after = src.replace("{\n", "{\n\terr := cmd.execute\n", 1)
    cursor = after.index("cmd.execute") + len("cmd.execute")
    docs = (DocState("file:///c.go", after, "go", 3, (src, before), 2.0, (2.0, 1.0)),)
    got = predict(NextEditQuery(docs, docs[0].uri, cursor), None, G).predictions
    assert [(p.start, p.new_text) for p in got] == [(cursor, "(flags)")]


def test_a_rust_field_that_does_not_parse_is_finished_beside_the_renames_the_edit_implies():
    src = "struct Opts {\n    hidden: bool,\n    depth: usize,\n}\n"
    cursor, got = completions(src, "    max_depth: Option", "    hidden: bool,\n", "rust", "file:///m.rs")
    assert (cursor, ",", "complete") in got


def test_a_finished_line_keyword_swaps_and_a_lone_terminator_are_not_completions():
    src = "def f(a, b):\n    x = g(a).strip()\n    return x\n"
    assert completions(src, "    y = g(b)", "    x = g(a).strip()\n", "python", "file:///a.py")[1] == []
    js = "function f(g) {\n  const a = [];\n  const c = g(1);\n  return a;\n}\n"
    assert completions(js, "  let b = []", "  const a = [];\n", "javascript", "file:///a.js")[1] == []
    assert completions(js, "  let b = g", "  const a = [];\n", "javascript", "file:///a.js")[1] == []
    assert completions(js, "  const b = g", "  const a = [];\n", "javascript", "file:///a.js")[1] != []


def test_a_parsing_line_is_left_whole_when_a_like_line_ends_there_or_the_user_just_cut_it_short():
    init = "class S:\n    def __init__(self, c):\n        self.c = c or ()\n"
    short = init.replace("self.c = c or ()", "self.c = c")  # the user removed ' or ()'
    cursor = short.index("self.c = c") + len("self.c = c")
    docs = (DocState("file:///s.py", short, "python", 2, (init,), 1.0, (1.0,)),)
    assert predict(NextEditQuery(docs, docs[0].uri, cursor), None, G).predictions == []
    init = "class S:\n    def __init__(self, y, q, w):\n        self.x = y\n        self.p = q.strip()\n"
    cursor, got = completions(init, "        self.z = w", "self.x = y\n", "python", "file:///s.py")
    assert got == []  # 'self.x = y' ends there: 'self.p = q.strip()' is one way among others
    cursor, got = completions(init.replace("self.x = y", "self.x = y.upper()"), "        self.z = w", "self.x = y.upper()\n",
                              "python", "file:///s.py")
    assert got[0][1] in (".upper()", ".strip()")  # every like line goes on
    js = "function f() {\n  this.a = [];  // the a's\n}\n"
    cursor, got = completions(js, "  this.c", "// the a's\n", "javascript", "file:///a.js")
    assert got == [(cursor, " = [];", "complete")]  # its comment aside
    go = "package p\n\nfunc f(s string) {\n\tt := strings.ToUpper(s)\n}\n"
    assert completions(go, '\tu := "y"', "{\n", "go", "file:///a.go")[1] == []  # a string is no callee


def test_the_completion_does_not_let_a_copy_of_the_half_typed_line_pass_the_syntax_guard():
    block = "  const a = getGlobal('a');\n  const b = getGlobal('b');\n"
    src = f"function A() {{\n{block}}}\nfunction B() {{\n{block}}}\n"
    cursor, got = completions(src, "  const c = getGlobal(", "  const a = getGlobal('a');\n", "javascript", "file:///g.js")
    assert got == [(cursor, "'c');", "complete")]  # the same insertion in B would not parse


def test_a_string_typed_half_is_closed_and_ended_like_its_sibling_members():
    src = ("test('timeout', async t => {\n\tawait t.throwsAsync(p, {\n\t\tcode: timeoutErrorCode,\n"
           "\t\tmessage: 'The operation was aborted due to timeout',\n\t});\n});\n")
    cursor, got = completions(src, "\t\tname: 'TimeoutError", "await t.throwsAsync(p, {\n", "typescript",
                              "file:///abort.ts")
    assert got == [(cursor, "',", "complete")]
    # a backquoted string spans lines as it is: no line to finish
    tpl = "var T = `{{ .Name }}\n# NAME\n`\n"
    assert completions(tpl.replace("var T = `{{ .Name }}\n", ""), "var T = `{{if .N}}{{ .Name }}", "", "go",
                       "file:///t.go")[1] == []


def test_an_item_of_a_list_of_strings_is_closed_like_its_siblings_not_finished_as_a_name():
    src = 'extensions = [\n    "sphinx.ext.autodoc",\n    "sphinx.ext.intersphinx",\n]\n'
    cursor, got = completions(src, '    "notfound.extension', '"sphinx.ext.intersphinx",\n', "python", "file:///conf.py")
    assert got == [(cursor, '",', "complete")]  # not 's' (the name 'extensions' in the code)


def test_a_sibling_ending_that_names_its_own_things_is_no_ending_for_a_renamed_line():
    src = "import os\nimport re\nfrom functools import partial\nfrom typing import Any\n\nx = partial(os.getcwd)\n"
    cursor, got = completions(src, "from datetime import", "from functools import partial\n", "python",
                              "file:///t.py")
    assert got == []  # 'partial' is functools', not datetime's


def test_a_half_typed_line_is_finished_like_the_lines_that_start_the_same_way():
    src = ("export type BeforeError = {\n\tresponse: Response;\n\toptions: Options;\n};\n\n"
           "export type BeforeRetry = {\n\trequest: Request;\n\toptions: Options;\n};\n\n"
           "export function f(request: Request, init: Init) {}\n\n"
           "export type AfterResponse = {\n\toptions: Options;\n};\n")
    after = src.replace("export type AfterResponse = {\n", "export type AfterResponse = {\n\trequest:\n")
    cursor = after.index("\trequest:\n\toptions") + len("\trequest:")
    preds = ask(doc("file:///h.ts", after, (src,), (1.0,), grammar="typescript"), cursor=cursor)
    assert [(p.start, p.new_text, p.kind) for p in preds] == [(cursor, " Request;", "complete")]


# ---------------------------------------------------------------- the repository memory's lines
CLI_PY = """\
import argparse


def build_parser():
    parser = argparse.ArgumentParser(prog="tool")
    parser.add_argument("--verbose", action="store_true", help="say more")
    return parser
"""


def test_a_half_typed_line_no_document_line_starts_like_is_finished_like_the_repository_s(tmp_path, monkeypatch):
    monkeypatch.setenv("MERCURY_LSP_CACHE", str(tmp_path / "cache"))
    ws = tmp_path / "ws"
    mem_support.write(ws, {"tool/cli.py": CLI_PY})
    mem = mem_support.built(ws.resolve())
    try:
        before = "import argparse\n\n\ndef other_parser():\n    parser = argparse.ArgumentParser(prog=\"other\")\n    return parser\n"
        typed = '    parser.add_argument("--verbose", action='
        at = before.index("    return parser")
        after = before[:at] + typed + "\n" + before[at:]
        d = doc((ws / "tool/other.py").resolve().as_uri(), after, (before,), (1.0,))
        cursor = at + len(typed)
        assert rule_edits(like_line_ending.RULE, d, cursor=cursor) == []  # no line of the document starts so
        found = rule_edits(like_line_ending.RULE, d, cursor=cursor, memory=recall(mem, d))
        assert [(p.start, p.new_text) for p in found] == [(cursor, '"store_true", help="say more")')]
    finally:
        mem.close()


RELEASE_GO = """\
package release

import "fmt"

func Tag(version string) error {
	if version == "" {
		return fmt.Errorf("release: empty version %q", version)
	}
	return nil
}
"""


def test_a_go_line_is_finished_from_a_file_that_is_not_open(tmp_path, monkeypatch):
    monkeypatch.setenv("MERCURY_LSP_CACHE", str(tmp_path / "cache"))
    ws = tmp_path / "ws"
    mem_support.write(ws, {"release/tag.go": RELEASE_GO})
    mem = mem_support.built(ws.resolve())
    try:
        before = "package release\n\nimport \"fmt\"\n\nfunc Push(version string) error {\n\treturn nil\n}\n"
        typed = '\t\treturn fmt.Errorf("release: empty version'
        at = before.index("\treturn nil")
        after = before[:at] + '\tif version == "" {\n' + typed + "\n\t}\n" + before[at:]
        d = doc((ws / "release/push.go").resolve().as_uri(), after, (before,), (1.0,), grammar="go")
        cursor = after.index(typed) + len(typed)
        assert rule_edits(like_line_ending.RULE, d, cursor=cursor) == []
        found = rule_edits(like_line_ending.RULE, d, cursor=cursor, memory=recall(mem, d))
        assert [p.new_text for p in found] == [' %q", version)']
    finally:
        mem.close()


def test_a_line_that_parses_gets_no_ending_from_the_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("MERCURY_LSP_CACHE", str(tmp_path / "cache"))
    ws = tmp_path / "ws"
    mem_support.write(ws, {"pkg/funcs.go": "package pkg\n\ntype Handler func(name string) error {\n}\n"
                                           "func Handler2(name string) error {\n\treturn nil\n}\n"})
    mem = mem_support.built(ws.resolve())
    try:
        before = "package pkg\n\n"
        after = before + "type Handler func(name string) error\n"
        d = doc((ws / "pkg/types.go").resolve().as_uri(), after, (before,), (1.0,), grammar="go")
        cursor = len(after) - 1
        assert recall(mem, d).endings(d.uri, after, cursor)  # the memory has an ending ...
        assert rule_edits(like_line_ending.RULE, d, cursor=cursor, memory=recall(mem, d)) == []  # ... not used
    finally:
        mem.close()


def test_the_memory_s_ending_must_follow_a_line_that_starts_like_the_typed_one(tmp_path, monkeypatch):
    monkeypatch.setenv("MERCURY_LSP_CACHE", str(tmp_path / "cache"))
    ws = tmp_path / "ws"
    funcs = "".join(f"func F{i}(a []string, b []string) ([]string, error) {{\n\treturn a, nil\n}}\n" for i in range(12))
    mem_support.write(ws, {"pkg/list.go": "package pkg\n\n" + funcs})
    mem = mem_support.built(ws.resolve())
    try:
        before = "package pkg\n\nfunc f() {\n}\n"
        typed = "\tqueries := make([]string,"
        after = before.replace("{\n}", "{\n" + typed + "\n}")
        d = doc((ws / "pkg/f.go").resolve().as_uri(), after, (before,), (1.0,), grammar="go")
        cursor = after.index(typed) + len(typed)
        lines = memory_lines(recall(mem, d).request, d.uri, after, cursor)
        assert any(s.text == " error) {" and s.probability >= recall(mem, d).min_probability for s in lines)
        assert recall(mem, d).endings(d.uri, after, cursor) == []  # after '[]string,' only, not the line's start
        assert rule_edits(like_line_ending.RULE, d, cursor=cursor, memory=recall(mem, d)) == []
    finally:
        mem.close()
