"""NE110 extracted-function: the copies of a new helper's body become calls of it."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.follow import extracted_function
from tests.support import next_edit as ne


def edits(*docs):
    return ne.rule_edits(extracted_function.RULE, *docs)


JS = """function getListeners(instance, eventName) {
	const key = typeof eventName === 'string' || typeof eventName === 'symbol' ? eventName : anyProducer;
	return key;
}

function describe(x) {
	return typeof x.name === 'string' || typeof x.name === 'symbol';
}

function loose(x) {
	return flag && typeof x === 'string' || typeof x === 'symbol';
}
"""
JS_HELPER = "const isEventKeyType = key => typeof key === 'string' || typeof key === 'symbol';\n\n"


def test_an_arrow_helper_replaces_its_copies_with_the_arguments_they_had():
    after = JS_HELPER + JS
    d = ne.doc("file:///index.js", after, (JS,), (1.0,), grammar="javascript")
    out = ne.applied(after, edits(d), d.uri)
    assert "const key = isEventKeyType(eventName) ? eventName : anyProducer;" in out
    assert "return isEventKeyType(x.name);" in out
    assert "flag && typeof x === 'string' || typeof x === 'symbol'" in out  # not one node: left alone
    assert out.startswith(JS_HELPER)  # never inside the helper itself


def test_a_helper_that_was_there_before_is_no_extraction():
    before = JS_HELPER + JS
    after = before.replace("function loose", "function looser")
    d = ne.doc("file:///index.js", after, (before,), (1.0,), grammar="javascript")
    assert edits(d) == []


PY = '''class Registry:
    def add(self, name, value):
        if name.strip().lower() in self.items:
            raise KeyError(name)
        self.items[name.strip().lower()] = value

    def get(self, label):
        return self.items[label.strip().lower()]


def outside(name):
    return name.strip().lower()
'''


def test_a_method_helper_is_called_through_its_receiver_in_its_own_class_only():
    after = PY.replace("class Registry:\n", "class Registry:\n    def _key(self, name):\n"
                       '        """The key a name is stored under."""\n        return name.strip().lower()\n\n')
    d = ne.doc("file:///registry.py", after, (PY,), (1.0,))
    out = ne.applied(after, edits(d), d.uri)
    assert "if self._key(name) in self.items:" in out
    assert "self.items[self._key(name)] = value" in out
    assert "return self.items[self._key(label)]" in out
    assert "def outside(name):\n    return name.strip().lower()" in out


GO = """package cmd

func compare(contentA, contentB []byte) bool {
	a := bytes.Replace(contentA, []byte("\\r\\n"), []byte("\\n"), -1)
	return bytes.Equal(a, bytes.Replace(contentB, []byte("\\r\\n"), []byte("\\n"), -1))
}
"""
GO_HELPER = """
// ensureLF converts any \\r\\n to \\n
func ensureLF(content []byte) []byte {
	return bytes.Replace(content, []byte("\\r\\n"), []byte("\\n"), -1)
}
"""


def test_a_go_function_replaces_its_copies():
    after = GO + GO_HELPER
    d = ne.doc("file:///golden_test.go", after, (GO,), (1.0,), grammar="go")
    out = ne.applied(after, edits(d), d.uri)
    assert "a := ensureLF(contentA)\n\treturn bytes.Equal(a, ensureLF(contentB))" in out


def test_a_statement_body_becomes_a_call_statement():
    src = ("fn main() {\n    let mut cfg = Config::default();\n    cfg.verbose = true;\n    cfg.retries = 3;\n"
           "    run(cfg);\n}\n\nfn test_run() {\n    let mut other = Config::default();\n    other.verbose = true;\n"
           "    other.retries = 3;\n    check(other);\n}\n")
    helper = "\nfn defaults(cfg: &mut Config) {\n    cfg.verbose = true;\n    cfg.retries = 3;\n}\n"
    after = src + helper
    d = ne.doc("file:///main.rs", after, (src,), (1.0,), grammar="rust")
    out = ne.applied(after, edits(d), d.uri)
    assert "let mut cfg = Config::default();\n    defaults(cfg);\n    run(cfg);" in out
    assert "let mut other = Config::default();\n    defaults(other);\n    check(other);" in out


def test_a_value_on_several_lines_replaces_its_copy_with_its_name():
    src = ("function json(options) {\n  const normalized = normalize(options)\n\n  return function parser(req, res) {\n"
           "    read(req, res, {\n      ...normalized,\n\n      // assert charset per RFC 7159 sec 8.1\n"
           "      isValidCharset: (charset) => charset.slice(0, 4) === 'utf-'\n    })\n  }\n}\n")
    after = src.replace("  const normalized = normalize(options)\n",
                        "  const normalized = normalize(options)\n  const readOptions = {\n    ...normalized,\n"
                        "    // assert charset per RFC 7159 sec 8.1\n"
                        "    isValidCharset: (charset) => charset.slice(0, 4) === 'utf-'\n  }\n")
    d = ne.doc("file:///json.js", after, (src,), (1.0,), grammar="javascript")
    out = ne.applied(after, edits(d), d.uri)
    assert "    read(req, res, readOptions)\n" in out


def test_a_body_too_plain_to_tell_is_left_alone():
    src = "def f(a):\n    return a + 1\n\n\ndef g(b):\n    return b + 1\n"
    after = "def inc(x):\n    return x + 1\n\n\n" + src
    d = ne.doc("file:///m.py", after, (src,), (1.0,))
    assert edits(d) == []
