"""A suggestion on a fresh auto-indented line is indented once, not twice (issue 15).

The editor has already indented the new line and the cursor sits at the end of that indentation;
the model writes the indentation again from column 0. The suggestion must fit the position: the
inline item (range from column 0) carries the line's indentation once, in every language.
"""

from __future__ import annotations

import pytest

from mercury_lsp.completion import Suggestion, inline_items, run_pipeline
from mercury_lsp.completion.indent import fit_indent
from mercury_lsp.documents import DocumentStore, PositionEncoding
from mercury_lsp.syntax import Grammars, grammar_for
from tests.support.fakes import FakeSession
from tests.support.settings import drafts

GRAMMARS = Grammars()

# (language id, uri, text with the cursor marked "|" after the editor's auto-indent, what the
# model writes there (indentation from column 0), the line expected after accepting)
CASES = [
    ("python", "file:///a.py", "def add(a, b):\n    |\n", "    return a + b", "    return a + b"),
    ("javascript", "file:///a.js", "function add(a, b) {\n  |\n}\n", "  return a + b;", "  return a + b;"),
    ("go", "file:///a.go", "package m\n\nfunc add(a, b int) int {\n\t|\n}\n", "\treturn a + b", "\treturn a + b"),
    ("rust", "file:///a.rs", "fn add(a: i32, b: i32) -> i32 {\n    |\n}\n", "    a + b", "    a + b"),
]


def _open(lang: str, uri: str, marked: str):
    cursor = marked.index("|")
    store = DocumentStore(grammar_for)
    doc = store.open(uri, lang, 1, marked.replace("|", "", 1))
    return doc, cursor


@pytest.mark.parametrize(("lang", "uri", "marked", "model_text", "want_line"), CASES,
                         ids=[c[0] for c in CASES])
def test_fresh_indented_line_is_indented_once(lang, uri, marked, model_text, want_line):
    doc, cursor = _open(lang, uri, marked)
    snap = doc.snapshot(1 << 20)
    result = run_pipeline(FakeSession(model_text), snap, cursor, drafts(), GRAMMARS, None)
    assert result.text == model_text.lstrip()  # the line already has the indentation
    s = Suggestion(result.text, cursor, result.replace_end, result.kind, doc.version, cached=False)
    item = inline_items(doc, s, PositionEncoding.UTF16).items[0]
    line = doc.line_of(cursor)
    assert (item.range.start.line, item.range.start.character) == (line, 0)
    assert item.range.end.character == cursor - doc.line_starts[line]
    assert item.insert_text == want_line
    # Accepting replaces the range with the item's text: the whole line, indented once.
    lines = doc.text.split("\n")
    lines[line] = item.insert_text + lines[line][item.range.end.character:]
    assert "\n".join(lines).split("\n")[line] == want_line


def test_fit_indent_keeps_what_the_line_lacks():
    # Already relative to the cursor: unchanged.
    assert fit_indent("return a + b", "    ") == "return a + b"
    # Deeper than the editor's indentation (the model opens a nested level): the extra is kept.
    assert fit_indent("        x = 1", "    ") == "    x = 1"
    # Shallower (the editor indented more): the editor's indentation wins, nothing is added.
    assert fit_indent("  x = 1", "    ") == "x = 1"
    # Later lines are absolute already and are left alone.
    assert fit_indent("    if a:\n        return b", "    ") == "if a:\n        return b"
    # Mixed tabs and spaces: the editor's indentation wins.
    assert fit_indent("    x", "\t") == "x"
    # Not at a fresh indentation (code before the cursor, or column 0): unchanged.
    assert fit_indent("    # note", "x = 1") == "    # note"
    assert fit_indent("    x = 1", "") == "    x = 1"
    # A suggestion starting with a new line keeps its text.
    assert fit_indent("\n    x = 1", "    ") == "\n    x = 1"
