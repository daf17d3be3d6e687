"""Parallel lines: a line near the cursor that the typed line follows token for token but for a
few words gives its rest of line with those words swapped."""

from __future__ import annotations

from mercury_lsp.memory.parallel import MAX_WORDS, parallels
from mercury_lsp.memory.query import Context, build_query


def texts(doc: str, language: str, after: str = "") -> list[tuple[str, int]]:
    query = build_query(Context("file:///x", doc + after, len(doc), language))
    return [(p.text, p.words) for p in parallels(query)]


def test_rust_a_line_per_escape():
    doc = '    fn tab() {\n        assert_eq!(b(b"\\t"), unescape(r"\\t"));\n        assert_eq!(b(b"\\r"'
    assert texts(doc, "rust")[0] == ('), unescape(r"\\r"));', 1)


def test_python_the_name_is_swapped_inside_the_rest_and_lines_below_count():
    doc = "def size(box):\n    width = measure(box."
    after = "\n    height = measure(box.height, \"height\")\n"
    assert ('width, "width")', 1) in texts(doc, "python", after)  # ``height`` typed as ``width``


def test_punctuation_must_agree_and_few_words_may_differ():
    doc = "x = call(a, b)\ny = call(a; "
    assert texts(doc, "python") == []  # ``,`` against ``;``
    many = "f(a, b, c, d)\ng(w, x, y, "
    assert MAX_WORDS < 4 and texts(many, "python") == []


def test_a_space_the_line_has_not_is_no_parallel():
    line = "    total = compute(alpha)\n"
    assert texts(line + "    total = compute", "python") == [("(alpha)", 0)]
    assert texts(line + "    total = compute ", "python") == []
