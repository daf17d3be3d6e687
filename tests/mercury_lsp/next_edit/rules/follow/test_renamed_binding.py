"""NE101 renamed-binding: a renamed binding's other occurrences, scope-aware (parameters, locals,
nested scopes, attributes, importing documents), renames read over several hunks, and the
renames that are none (a switch to another declared name, another module imported)."""

from __future__ import annotations

from mercury_lsp.documents import DocumentStore, PositionEncoding
from mercury_lsp.next_edit import (
    DocState,
    NextEditQuery,
    predict,
)
from mercury_lsp.next_edit.service import doc_state
from mercury_lsp.syntax import Grammars, grammar_for
from tests.support import next_edit as ne
from tests.support.next_edit import AREA as SRC
from tests.support.next_edit import applied_all as applied
from tests.support.next_edit import doc, renamed, run

G = Grammars()


def ask(uri: str, text: str, history: tuple[str, ...], grammar: str, cursor: int = 0):
    times = tuple(float(len(history) - i) for i in range(len(history)))
    d = DocState(uri, text, grammar, 1, history, max(times, default=0.0), times)
    return predict(NextEditQuery((d,), uri, cursor), None, G).predictions






def test_an_imports_local_name_renamed_is_followed_after_another_edit():
    src = ("import test from 'ava';\nimport m from '.';\n\nconst mapper = x => x;\n\n"
           "test('main', async t => {\n\tt.deepEqual(await m([1], mapper), [1]);\n});\n")
    one = src.replace("import m from '.'", "import pMap from '.'")
    two = one.replace("const mapper = x => x;", "const mapper = value => value;")
    preds = ask("file:///test.js", two, (one, src), "javascript", cursor=two.index("value;"))
    assert applied(two, preds) == two.replace("await m(", "await pMap(")


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


def test_parameter_rename_is_scope_aware():
    after = SRC.replace("def area(width,", "def area(w,", 1)
    out, _ = run(after, SRC)
    got = renamed(after, out.predictions)
    # uses in area's own scope renamed; nested def/lambda/comprehension that rebind `width`, the
    # keyword name, the attribute and the module-level `width` untouched; the f-string use renamed
    assert got == SRC.replace("def area(width,", "def area(w,").replace("total = width *", "total = w *") \
        .replace("f(width=width)", "f(width=w)").replace('f"{width}"', 'f"{w}"').replace("total + width", "total + w")
    assert all(p.kind == "rename" and p.source == "syntax" and p.confidence == 0.8 for p in out.predictions)


def test_local_rename_from_a_use_and_from_its_definition():
    src = "def f():\n    count = 0\n    for i in range(3):\n        count += i\n    return count\ncount = 1\n"
    after = src.replace("count = 0", "n = 0")
    out, _ = run(after, src)
    assert renamed(after, out.predictions) == src.replace("count", "n").replace("n = 1", "count = 1")
    after = src.replace("return count", "return n")
    out, _ = run(after, src)
    assert renamed(after, out.predictions) == src.replace("count", "n").replace("n = 1", "count = 1")


def test_a_use_switched_to_a_variable_the_user_declared_is_no_rename():
    """``, oname = option.name()`` declared, then ``this.on(name`` -> ``this.on(oname``: ``name`` is
    still declared next to it, its other uses stay."""
    src = ("Command.prototype.option = function(option) {\n  var self = this\n    , name = camelcase(option.name());\n"
           "  this.on(name, function(val) {\n    self[name] = val;\n  });\n  return name;\n};\n")
    one = src.replace("    , name = camelcase(option.name());\n",
                      "    , oname = option.name()\n    , name = camelcase(oname);\n")
    after = one.replace("this.on(name,", "this.on(oname,")
    d = DocState("file:///c.js", after, "javascript", 7, (one, src), 1.0, (2.0, 1.0))
    out = predict(NextEditQuery((d,), d.uri, 0), None, G)
    assert [p for p in out.predictions if p.kind == "rename"] == []


def test_attribute_and_method_renames_cross_documents():
    a = "class P:\n    def __init__(self):\n        self.size = 1\n\n    def grow(self):\n        self.size += 1\n"
    b = "from a import P\np = P()\np.grow()\nprint(p.size)\nsize = 2\n"
    other = DocState("file:///b.py", b, "python", 3)
    after = a.replace("self.size = 1", "self.length = 1")
    out, _ = run(after, a, other)
    by_uri = {u: [p for p in out.predictions if p.uri == u] for u in ("file:///a.py", "file:///b.py")}
    assert renamed(after, by_uri["file:///a.py"]) == a.replace("size", "length")
    assert renamed(b, by_uri["file:///b.py"]) == b.replace("p.size", "p.length")
    assert "another document" in by_uri["file:///b.py"][0].reason
    after = a.replace("def grow", "def enlarge")
    out, _ = run(after, a, other)
    assert [(p.uri, p.new_text) for p in out.predictions] == [("file:///b.py", "enlarge")]


def test_module_function_rename_reaches_importing_documents():
    a = "def helper(x):\n    return x\n\n\nprint(helper(1))\n"
    b = "from a import helper\n\nhelper(2)\n"
    c = "helper = 3\n"  # does not import it: untouched
    after = a.replace("def helper", "def assist")
    out, _ = run(after, a, DocState("file:///b.py", b, "python", 1), DocState("file:///c.py", c, "python", 1))
    assert sorted((p.uri, p.start) for p in out.predictions) == [
        ("file:///a.py", after.index("helper(1)")), ("file:///b.py", b.index("helper")),
        ("file:///b.py", b.index("helper(2)"))]


def test_other_grammars_get_syntax_scoping():
    src = "function area(width, height) {\n  return width * height;\n}\nconst width = 2;\n"
    after = src.replace("area(width,", "area(w,")
    out, _ = run(after, src, uri="file:///a.js")
    assert renamed(after, out.predictions) == src.replace("width", "w").replace("const w", "const width")


def test_history_from_typed_edits_drives_the_rename():
    store = DocumentStore(grammar_for)
    store.open("file:///a.py", "python", 1, SRC)
    v = 1
    start = SRC.index("width")
    for _ in "width":  # backspace the old name, then type the new one, one change at a time
        v += 1
        store.change("file:///a.py", v, [((0, start + 4, 0, start + 5), "")], PositionEncoding.UTF16)
        start -= 1
    start = SRC.index("width")
    for i, ch in enumerate("size"):
        v += 1
        store.change("file:///a.py", v, [((0, start + i, 0, start + i), ch)], PositionEncoding.UTF16)
    doc = store.get("file:///a.py")
    state = doc_state(doc, store.history.recent(doc.uri), 8)
    assert state.history and state.history[-1] == SRC
    out = predict(NextEditQuery((state,), doc.uri, 0), None, G)
    assert renamed(doc.text, out.predictions).count("size") == 5  # the definition + 4 uses


def test_renames_read_line_by_line_over_several_hunks_and_a_swap():
    src = ("def med(it, n):\n    history = deque()\n    window = []\n    for x in it:\n"
           "        history.append(x)\n        insort(window, x)\n        i = bisect(window, history.popleft())\n"
           "        del window[i]\n    return window[n // 2]\n")
    after = src.replace("    history = deque()\n    window = []", "    window = deque()\n    ordered = []") \
        .replace("history.append(x)\n        insort(window, x)", "window.append(x)\n        insort(ordered, x)")
    out, _ = run(after, src)
    # every remaining old name follows its map, at once; the lines the user wrote stay as written
    assert renamed(after, out.predictions) == after.replace("bisect(window, history.popleft())",
                                                            "bisect(ordered, window.popleft())") \
        .replace("del window[i]", "del ordered[i]").replace("return window[", "return ordered[")


def test_a_rename_back_to_a_used_name_at_its_binding_follows_but_a_switch_at_a_use_does_not():
    src = "def area(width, h):\n    return width * h\n"
    shortened = src.replace("area(width,", "area(w,").replace("return width", "return w")
    back = shortened.replace("area(w,", "area(width,")  # the binding renamed back: its use follows
    out, _ = run(back, shortened)
    assert renamed(back, out.predictions) == src
    src = "a, b = 1, 2\nprint(f(a))\nprint(a)\n"
    out, _ = run(src.replace("f(a)", "f(b)"), src)  # switched to another existing name
    assert out.predictions == []
    src = "from unittest import TestCase\n\nclass T(TestCase):\n    pass\n"
    out, _ = run(src.replace("from unittest import TestCase", "from sys import version_info"), src)
    assert out.predictions == []  # an import replaced by another is no rename


def test_a_renamed_parameter_is_followed_past_comment_lines_that_change_other_words():
    src = ("def _sorted_window(iterator, k):\n    # two O(k) steps\n    window = []\n"
           "    if len(window) > k:\n        pass\n")
    one = src.replace("iterator, k)", "iterator, maxlen)")
    two = one.replace("O(k)", "O(n)")
    preds = ne.ask(doc("file:///r.py", two, (one, src), (2.0, 1.0)), cursor=two.index("O(n)"))
    assert ne.applied(two, preds, "file:///r.py") == two.replace("> k:", "> maxlen:")


LOOPS_JS = '''let title = "x";

class Report {
  rows(items) {
    for (const title of items) {
      console.log(title);
    }
  }
}

function other() {
  return title;
}
'''
LOOPS_GO = '''package r

type Report struct {
	title string
}

func build(items []string) []Report {
	var out []Report
	for _, title := range items {
		out = append(out, Report{title: title})
	}
	return out
}

func other(title string) map[string]int {
	keep := Report{title: "x"}
	_ = keep
	return map[string]int{title: 1}
}
'''


def test_a_loop_variable_renamed_stays_in_its_function_and_never_reaches_a_field_of_its_name():
    """The scope of a renamed loop variable is its binding's (the function), never a same-named
    module variable elsewhere, nor the field key of a struct literal (JavaScript, Go)."""
    after = LOOPS_JS.replace("for (const title of items)", "for (const heading of items)")
    preds = ask("file:///r.js", after, (LOOPS_JS,), "javascript", cursor=after.index("heading"))
    assert applied(after, preds) == after.replace("console.log(title)", "console.log(heading)")
    after = LOOPS_GO.replace("for _, title := range items", "for _, name := range items")
    preds = ask("file:///r.go", after, (LOOPS_GO,), "go", cursor=after.index("name"))
    assert applied(after, preds) == after.replace("Report{title: title}", "Report{title: name}")


RAW = """impl<T> RawTable<T> {
    pub fn find(&self, hash: u64) -> Option<Bucket<T>> {
        let index = self.table.find_inner(hash, &mut |index| self.eq(index));
        match index {
            Some(index) => Some(self.bucket(index)),
            None => None,
        }
    }

    fn get(&self, hash: u64) -> Option<&T> {
        let index = self.find(hash)?;
        if let Some(index) = self.slot(index) { return self.at(index); }
        Some(self.at(index))
    }
}
"""


def test_rust_a_local_renamed_leaves_a_closures_and_a_patterns_own_bindings_alone():
    after = RAW.replace("let index = self.table", "let found = self.table")
    out, _ = ne.run(after, RAW, uri="file:///raw.rs", cursor=after.index("found"))
    assert ne.applied_all(after, out.predictions) == after.replace("match index {", "match found {")
    after = RAW.replace("let index = self.find(hash)?;", "let slot = self.find(hash)?;")
    out, _ = ne.run(after, RAW, uri="file:///raw.rs", cursor=after.index("slot ="))
    assert ne.applied_all(after, out.predictions) == after.replace(
        "self.slot(index) {", "self.slot(slot) {").replace("Some(self.at(index))", "Some(self.at(slot))")


def test_go_and_javascript_a_function_literals_parameter_of_the_same_name_is_its_own():
    src = "package m\n\nfunc run(items []int) int {\n\tn := len(items)\n\tf := func(n int) int { return n * 2 }\n\treturn f(n)\n}\n"
    after = src.replace("\tn := len(items)", "\tcount := len(items)")
    out, _ = ne.run(after, src, uri="file:///m.go", cursor=after.index("count"))
    assert ne.applied_all(after, out.predictions) == after.replace("return f(n)", "return f(count)")
    src = "function run(items) {\n  const err = check(items);\n  try { go(); } catch (err) { log(err); }\n  return err;\n}\n"
    after = src.replace("const err = check", "const problem = check")
    out, _ = ne.run(after, src, uri="file:///m.js", cursor=after.index("problem"))
    assert ne.applied_all(after, out.predictions) == after.replace("return err;", "return problem;")


def test_rust_a_method_renamed_at_its_impl_reaches_its_calls_and_paths_not_a_field_of_its_name():
    a = ("pub struct Snapshot {\n    pub discard: bool,\n}\n\nimpl Snapshot {\n"
         "    pub fn discard(&self) -> bool {\n        self.discard\n    }\n\n"
         "    pub fn both(&self) -> bool {\n        self.discard() && Self::discard(self)\n    }\n}\n")
    b = "fn run(s: &Snapshot) {\n    s.discard()?;\n    let keep = s.discard;\n}\n"
    after = a.replace("pub fn discard", "pub fn reject")
    out, _ = run(after, a, DocState("file:///cli.rs", b, "rust", 1), uri="file:///cargo.rs")
    by_uri = {u: [p for p in out.predictions if p.uri == u and p.rule == "NE101"]
              for u in ("file:///cargo.rs", "file:///cli.rs")}
    assert renamed(after, by_uri["file:///cargo.rs"]) == after.replace(
        "self.discard() && Self::discard(self)", "self.reject() && Self::reject(self)")
    assert renamed(b, by_uri["file:///cli.rs"]) == b.replace("s.discard()", "s.reject()")


def test_rust_a_trait_method_renamed_reaches_the_impl_blocks_of_that_trait_only():
    a = ("trait Shape {\n    fn area(&self) -> f64;\n}\n\nimpl Shape for Square {\n"
         "    fn area(&self) -> f64 {\n        self.0 * self.0\n    }\n}\n\n"
         "impl Other for Square {\n    fn area(&self) -> f64 {\n        0.0\n    }\n}\n")
    after = a.replace("    fn area(&self) -> f64;", "    fn surface(&self) -> f64;")
    out, _ = run(after, a, uri="file:///shape.rs")
    preds = [p for p in out.predictions if p.rule == "NE101"]
    assert renamed(after, preds) == after.replace("impl Shape for Square {\n    fn area",
                                                  "impl Shape for Square {\n    fn surface")
