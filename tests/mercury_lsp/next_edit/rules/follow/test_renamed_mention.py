"""NE117 renamed-mention: a renamed definition's name spelt as code in its documents' comments and
docstrings follows the rename — not a bare word, not a local's, not an imported module's."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.follow import renamed_binding
from mercury_lsp.next_edit.rules.follow.renamed_mention import RULE
from tests.support.next_edit import doc, rule_edits

PY = '''def patch_with_metaclass(metaclass):
    """Decorate a class to replace it with a metaclass-constructed version.

    Usage:

    @patch_with_metaclass(MyMeta)
    class MyClass(object):
        ...

    Older code: ``MyClass = patch_with_metaclass(MyClass)``; patch_with_metaclass is new in 1.4.
    """
    return metaclass


def use():
    # see `patch_with_metaclass` above
    return patch_with_metaclass(type)
'''
GO = '''package flag

// Handling says what to do with unknown flags; set it with SetHandling(h).
type Handling int

// SetHandling sets the handling (see `Handling`); SetHandling is new.
func SetHandling(h Handling) {}

func run() {
	// a call: SetHandling(0)
	SetHandling(0)
}
'''


def _mentions(after: str, before: str, uri: str, grammar: str = "python") -> list[tuple[int, str, str]]:
    d = doc(uri, after, (before,), (1.0,), grammar=grammar)
    return [(after.count("\n", 0, p.start) + 1, after[p.start:p.end], p.new_text) for p in rule_edits(RULE, d)]


def test_a_renamed_functions_usage_example_in_its_docstring_follows():
    after = PY.replace("def patch_with_metaclass", "def add_metaclass", 1)
    got = _mentions(after, PY, "file:///six.py")
    # the decorator and the call in the docstring, the backticked name in the comment; the bare
    # word of the sentence stays; the code's own use is NE101's
    assert got == [(6, "patch_with_metaclass", "add_metaclass"), (10, "patch_with_metaclass", "add_metaclass"),
                   (16, "patch_with_metaclass", "add_metaclass")]
    code = rule_edits(renamed_binding.RULE, doc("file:///six.py", after, (PY,), (1.0,)))
    assert [after.count("\n", 0, p.start) + 1 for p in code] == [17]


def test_a_renamed_go_function_follows_in_comments_where_it_reads_as_code():
    after = GO.replace("func SetHandling", "func SetUnknownHandling", 1)
    got = _mentions(after, GO, "file:///flag.go", "go")
    # the call in the type's comment, the doc comment's leading word (not the sentence's last
    # word: a bare word), the call in the body's comment
    assert [(line, after.split("\n")[line - 1][:25]) for line, _, _ in got] == [
        (3, "// Handling says what to "), (6, "// SetHandling sets the h"), (10, "\t// a call: SetHandling(0")]


def test_a_local_renamed_leaves_the_comments():
    src = "def f(items):\n    # count(items) is the total\n    count = len(items)\n    return count\n"
    after = src.replace("    count = len", "    total = len").replace("return count", "return total")
    assert _mentions(after, src, "file:///m.py") == []


def test_an_imported_module_switched_is_no_rename_of_the_docstrings():
    src = 'import cloudpickle\n\n\nclass T:\n    """Compatibility with ``cloudpickle``."""\n\n    def t(self):\n        cloudpickle.dumps(1)\n'
    after = src.replace("import cloudpickle", "import pytest", 1)
    assert _mentions(after, src, "file:///t.py") == []
