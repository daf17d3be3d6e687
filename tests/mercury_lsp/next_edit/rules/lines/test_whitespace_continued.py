"""NE304 whitespace-continued: a whitespace-only edit continued below."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState, NextEditQuery, apply_edits
from mercury_lsp.next_edit.pipeline import rule_context
from mercury_lsp.next_edit.rules.lines.whitespace_continued import RULE
from mercury_lsp.syntax import Grammars

G = Grammars()


def doc(text: str, before: str) -> DocState:
    return DocState("file:///m.py", text, "python", 1, (before,), 1.0, (1.0,))


def edits(text: str, before: str):
    return RULE.run(rule_context(NextEditQuery((doc(text, before),), "file:///m.py", 0), G))


def test_a_dedented_docstring_is_dedented_below_one_paragraph_per_edit():
    src = ('"""\n    itsdangerous\n    ~~~~~~~~~~~~\n\n    A module that implements\n    various functions.\n\n'
           '    :copyright: 2011\n"""\nimport os\n    \n')
    after = src.replace("    itsdangerous\n    ~~~~~~~~~~~~\n", "itsdangerous\n~~~~~~~~~~~~\n")
    got = edits(after, src)
    assert [p.new_text for p in got] == ["A module that implements\nvarious functions.", ":copyright: 2011"]
    assert apply_edits(after, [(p.start, p.end, p.new_text) for p in got]) == (
        '"""\nitsdangerous\n~~~~~~~~~~~~\n\nA module that implements\nvarious functions.\n\n'
        ':copyright: 2011\n"""\nimport os\n    \n')


def test_stripped_trailing_whitespace_is_stripped_on_the_next_lines():
    src = "def f():\n    x = 1   \n    \n    return x  \n\n\ny = 2 \n"
    after = src.replace("    x = 1   \n", "    x = 1\n")
    got = edits(after, src)
    assert [(after[p.start:p.end], p.new_text) for p in got] == [("    ", ""), ("  ", "")]


def test_indentation_added_or_text_changed_is_not_continued():
    src = "def f():\n    a()\n    b()\n"
    assert edits(src.replace("    a()\n", "        a()\n"), src) == []  # indented: where would it end?
    assert edits(src.replace("    a()\n", "a(1)\n"), src) == []  # not whitespace only


def test_indentation_converted_to_tabs_converts_the_next_run_of_lines_below():
    src = ("test('a', async t => {\n  queue.onEmpty().then(() => {\n    t.is(queue.size, 0);\n  });\n});\n\n"
           "test('b', async t => {\n  queue.start();\n  await queue.onIdle();\n});\n")
    after = src.replace("  queue.onEmpty().then(() => {\n    t.is(queue.size, 0);\n  });\n",
                        "\tqueue.onEmpty().then(() => {\n\t\tt.is(queue.size, 0);\n\t});\n")
    got = edits(after, src)
    assert [p.new_text for p in got] == ["\tqueue.start();\n\tawait queue.onIdle();"]
    mixed = src.replace("  queue.start();\n", "   queue.start();\n")  # 3 spaces: no whole number of tabs
    assert [p.new_text for p in edits(after.replace("  queue.start();\n", "   queue.start();\n"), mixed)] == [
        "\tawait queue.onIdle();"]
    assert edits(src.replace("  queue.onEmpty", "\t queue.onEmpty", 1), src) == []  # no conversion


def test_indentation_converted_to_spaces_converts_the_next_run_too():
    src = "def f():\n\tif x:\n\t\treturn 1\n\n\ndef g():\n\treturn 2\n"
    after = src.replace("\tif x:\n\t\treturn 1\n", "    if x:\n        return 1\n")
    assert [p.new_text for p in edits(after, src)] == ["    return 2"]
