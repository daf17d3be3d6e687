"""NE111 adopted-name: one use switched to a new name; the old name's other uses follow."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.follow import adopted_name
from tests.support import next_edit as ne


def edits(*docs):
    return ne.rule_edits(adopted_name.RULE, *docs)


JS = """function logger(format, options) {
  var opts = options || {}
  var immediate = opts.immediate
  var skip = options.skip || false
  var stream = options.stream || process.stdout
  return options
}

function other(options) {
  return options.skip
}
"""


def test_a_local_made_from_the_old_name_takes_its_other_uses_in_its_function():
    before = JS.replace("var immediate = opts.immediate", "var immediate = options.immediate;")
    src = before.replace("  var opts = options || {}\n", "")
    d = ne.doc("file:///index.js", JS, (before, src), (2.0, 1.0), grammar="javascript")
    out = ne.applied(JS, edits(d), d.uri)
    assert "var opts = options || {}" in out  # its own binding keeps the old name
    assert "var skip = opts.skip || false\n  var stream = opts.stream || process.stdout\n  return opts\n" in out
    assert "function other(options) {\n  return options.skip" in out


def test_a_local_not_made_from_the_old_name_is_another_value():
    src = "function f(option) {\n  var name = camel(option.name())\n  this.on(name, go)\n  return name\n}\n"
    after = src.replace("var name = camel(option.name())", "var oname = option.name()\n  var name = camel(oname)")
    after2 = after.replace("this.on(name, go)", "this.on(oname, go)")
    d = ne.doc("file:///c.js", after2, (after, src), (2.0, 1.0), grammar="javascript")
    assert edits(d) == []


PY = """from datetime import datetime


def my_len(items):
    return len(items) if items is not None else 0


def total(a, b):
    return len(a) + len(b)


def first(a):
    return a[0] if len(a) else None
"""


def test_calls_of_a_builtin_follow_a_new_helper_but_never_inside_the_helper():
    before = PY
    src = before.replace("\n\ndef my_len(items):\n    return len(items) if items is not None else 0\n", "")
    switched = before.replace("return len(a) + len(b)", "return my_len(a) + len(b)")
    d = ne.doc("file:///m.py", switched, (before, src), (2.0, 1.0))
    out = ne.applied(switched, edits(d), d.uri)
    assert "def my_len(items):\n    return len(items) if items is not None else 0" in out  # no recursion
    assert "return my_len(a) + my_len(b)" in out and "return a[0] if my_len(a) else None" in out


def test_a_module_alias_takes_only_the_member_the_example_switched():
    src = "import typing as t\n\n\nclass A(t.Protocol):\n    x: t.Any\n\n\nclass B(t.Protocol):\n    y: int\n"
    imported = src.replace("import typing as t\n", "import typing as t\nimport typing_extensions as te\n")
    after = imported.replace("class A(t.Protocol)", "class A(te.Protocol)")
    d = ne.doc("file:///m.py", after, (imported, src), (2.0, 1.0))
    assert ne.applied(after, edits(d), d.uri) == after.replace("class B(t.Protocol)", "class B(te.Protocol)")


RS = """impl Deserializer {
    fn parse_whitespace(&mut self) -> Result<bool> {
        Ok(self.eof()?)
    }

    fn end(&mut self) -> Result<()> {
        if self.eof()? {
            return Ok(());
        }
        Ok(())
    }
}

fn next(de: &mut Deserializer) -> bool {
    match de.eof() {
        Ok(true) => false,
        _ => true,
    }
}
"""


def test_a_method_switched_twice_is_switched_at_its_other_calls_but_in_its_replacement():
    one = RS.replace("if self.eof()? {", "if self.parse_whitespace()? { // true if eof")
    two = one
    base = RS + "\nfn check(de: &mut Deserializer) -> bool {\n    de.eof().unwrap()\n}\n"
    first = one + "\nfn check(de: &mut Deserializer) -> bool {\n    de.eof().unwrap()\n}\n"
    second = two + "\nfn check(de: &mut Deserializer) -> bool {\n    de.parse_whitespace().unwrap()\n}\n"
    d = ne.doc("file:///de.rs", second, (first, base), (2.0, 1.0), grammar="rust")
    out = ne.applied(second, edits(d), d.uri)
    assert "match de.parse_whitespace() {" in out
    assert "Ok(self.eof()?)" in out  # the replacement's own body calls the old one


def test_a_renamed_binding_is_no_switch():
    src = "function run(resolve, reject) {\n  go(resolve, reject)\n  reject(1)\n}\n"
    after = src.replace("(resolve, reject) {", "(resolve, reject_) {")
    d = ne.doc("file:///r.js", after, (src,), (1.0,), grammar="javascript")
    assert edits(d) == []


def test_a_crate_switched_where_it_is_declared_is_switched_in_the_other_documents():
    lib0 = "extern crate num;\nextern crate serde;\n\npub mod value;\n"
    lib1 = lib0.replace("extern crate num;", "extern crate num_traits;")
    lib = ne.doc("file:///src/lib.rs", lib1, (lib0,), (1.0,), grammar="rust")
    value = ne.doc("file:///src/value.rs", "use num::NumCast;\nuse serde::Serialize;\n\n"
                   "fn f(x: f64) -> Option<u8> {\n    num::cast(x) // num\n}\n", grammar="rust")
    out = ne.applied(value.text, edits(lib, value), value.uri)
    assert out == value.text.replace("use num::", "use num_traits::").replace("    num::cast", "    num_traits::cast")


def test_a_member_switched_once_follows_on_its_own_receiver_only():
    src = ("def f(cache, other):\n    a = cache.get('a')\n    b = cache.get('b')\n    c = other.get('c')\n"
           "    return a, b, c\n")
    helper = "def fetch_all():\n    pass\n\n\n"
    before = helper.replace("fetch_all", "fetch") + src  # a new method name: 'fetch' defined just now
    after = before.replace("a = cache.get('a')", "a = cache.fetch('a')")
    d = ne.doc("file:///c.py", after, (before, src), (2.0, 1.0))
    out = ne.applied(after, edits(d), d.uri)
    assert "b = cache.fetch('b')" in out and "c = other.get('c')" in out


GO_TEST = """package toml

import (
	"log"
	"testing"
)

func TestDecode(t *testing.T) {
	if _, err := Decode(blob, &m); err != nil {
		log.Fatal(err)
	}
	if _, err := Decode(blob, &o); err != nil {
		log.Fatal(err)
	}
}

func helper() {
	log.Fatal("no t here")
}
"""


def test_a_module_switched_to_the_functions_own_parameter_follows_in_that_function():
    """``log.Fatal`` -> ``t.Fatal`` in a test taking ``t``: ``t`` is spelt all over the file (other
    tests take it too), yet it is this function's own value; its other ``log.Fatal`` follows, the
    helper's (no ``t`` there) stays."""
    after = GO_TEST.replace("\t\tlog.Fatal(err)", "\t\tt.Fatal(err)", 1)
    d = ne.doc("file:///decode_test.go", after, (GO_TEST,), (1.0,), grammar="go")
    got = [(after.count("\n", 0, p.start) + 1, p.new_text) for p in edits(d)]
    assert got == [(13, "t")]


PY_LOG = '''import logging


def run(jobs, log):
    logging.info("start")
    for j in jobs:
        logging.info("job %s", j)
    return len(jobs)


def main():
    logging.info("main")
'''


def test_a_module_switched_to_a_parameter_follows_in_python_in_that_function_only():
    after = PY_LOG.replace('    logging.info("start")', '    log.info("start")', 1)
    got = [(after.count("\n", 0, p.start) + 1, p.new_text) for p in edits(ne.doc("file:///r.py", after, (PY_LOG,), (1.0,)))]
    assert got == [(7, "log")]


def test_one_use_switched_between_two_locals_of_the_function_is_no_migration():
    src = ("def median(it, maxlen):\n    window = []\n    ordered = []\n    for x in it:\n"
           "        window.append(x)\n        n = len(window)\n        yield window[n // 2]\n")
    after = src.replace("n = len(window)", "n = len(ordered)")
    assert edits(ne.doc("file:///m.py", after, (src,), (1.0,))) == []


def test_a_member_switched_to_one_no_document_has_yet_is_no_migration_python_and_javascript():
    # one entry of a dispatch table switched to a handler still to write: the other entries that
    # name the old handler keep it (heldout5: jinja's handle_assign_name)
    src = ("class Translator:\n    def __init__(self):\n        self.handlers = {\n"
           "            Name: self.handle_name,\n            AssName: self.handle_name,\n        }\n\n"
           "    def handle_name(self, node):\n        return node.name\n")
    after = src.replace("AssName: self.handle_name,", "AssName: self.handle_assign_name,")
    d = ne.doc("file:///t.py", after, (src,), (1.0,))
    assert ne.ask(d, cursor=after.index("handle_assign_name,") + 19) == []
    # a new handler written first: the switch is a migration the other entry follows
    helper = src + "\n    def handle_assign_name(self, node):\n        return node.name\n"
    switched = helper.replace("AssName: self.handle_name,", "AssName: self.handle_assign_name,")
    d = ne.doc("file:///t.py", switched, (helper, src), (2.0, 1.0))
    assert "Name: self.handle_assign_name," in ne.applied(switched, edits(d), d.uri).replace("AssName", "")
    js = "const handlers = {\n  a: api.readOne,\n  b: api.readOne,\n}\n"
    js_after = js.replace("a: api.readOne", "a: api.readMany")
    d = ne.doc("file:///h.js", js_after, (js,), (1.0,), grammar="javascript")
    assert edits(d) == []
