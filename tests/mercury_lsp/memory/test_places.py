"""Places read around a typed word: a new name typed where the code elsewhere has another one
(the wildcard search) gets that place's rest of line with the place's name replaced by the new one
(``self.width = width`` there, ``self.height`` typed here: `` = height``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mercury_lsp.memory.query import Context
from tests.support.memory import built, write


@pytest.fixture
def cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MERCURY_LSP_CACHE", str(tmp_path / "cache"))


def texts(root: Path, files: dict[str, str], name: str, doc: str, language: str) -> list[str]:
    return at_cursor(root, files, name, doc, "", language)


def test_a_new_name_replaces_the_places_own_in_python(tmp_path, cache):
    shape = "class Box:\n    def __init__(self, width):\n        self.width = width\n"
    doc = "class Frame:\n    def __init__(self, height):\n        self.height"
    got = texts(tmp_path / "ws", {"box.py": shape}, "frame.py", doc, "python")
    assert " = height" in got


def test_a_new_name_replaces_the_places_own_inside_longer_names_in_typescript(tmp_path, cache):
    lib = "export function slice(rawEnd: number) {\n  const end = normalizeSliceIndex(rawEnd, source.length)\n}\n"
    doc = "export function other(rawStart: number) {\n  const start"
    got = texts(tmp_path / "ws", {"lib.ts": lib}, "other.ts", doc, "typescript")
    assert " = normalizeSliceIndex(rawStart, source.length)" in got


def at_cursor(root: Path, files: dict[str, str], name: str, before: str, after: str, language: str) -> list[str]:
    write(root, files)
    mem = built(root.resolve())
    try:
        doc = before + after
        return [c.text for c in mem.candidates(Context((root / name).as_uri(), doc, len(before), language))]
    finally:
        mem.close()


NEXT_LINE = {
    "python": ("test_a.py", "def test_a():\n    serial = split(array)\n    parallel = par_split(array)\n"
               "    assert serial == parallel\n", "def test_b():\n    serial = split(",
               "\n    parallel = par_split(array_ref)\n    assert serial == parallel\n", "array_ref)"),
    "rust": ("lib.rs", "fn a() {\n    let serial = s.split(array);\n    let parallel = p.par_split(array);\n"
             "    assert_eq!(serial, parallel);\n}\n", "fn b() {\n    let serial = s.split(",
             "\n    let parallel = p.par_split(array_ref);\n    assert_eq!(serial, parallel);\n}\n", "array_ref);"),
}


@pytest.mark.parametrize("language", sorted(NEXT_LINE))
def test_the_word_the_next_line_changes_is_changed_in_the_copy_too(tmp_path, cache, language):
    name, other, before, after, want = NEXT_LINE[language]
    assert want in at_cursor(tmp_path / "ws", {name: other}, "other" + name[-3:], before, after, language)


def test_the_pieces_two_names_differ_in_are_swapped_alone_too():
    from mercury_lsp.memory.places import substitute

    # Python: the snake_case piece, on its own after a dot
    assert substitute("= total_seconds(span.seconds)", "total_seconds", "total_minutes") == \
        "= total_minutes(span.minutes)"
    # Java: the camelCase piece, in another letter case
    assert substitute("(extracted, DATE_FORMAT);", "assertEqualsDate", "assertEqualsTime") == "(extracted, TIME_FORMAT);"
    assert substitute("(a, b)", "parseInt", "readByte") is None  # nothing shared: no pieces to swap


TWO_WORDS = {
    "python": ("a.py", "def f():\n    place(row, top, width=row + top)\n", "def g():\n    place(col, left, width=",
               "\n", "col + left)"),
    "rust": ("a.rs", "fn f() {\n    place(row, top, width(row, top));\n}\n", "fn g() {\n    place(col, left, width(",
             "\n}\n", "col, left));"),
}


@pytest.mark.parametrize("language", sorted(TWO_WORDS))
def test_two_words_apart(tmp_path, cache, language):
    name, other, before, after, want = TWO_WORDS[language]
    assert want in at_cursor(tmp_path / "ws", {name: other}, "b" + name[-3:], before, after, language)


KEYWORD_TYPED = {
    # the typed keyword stands for nothing: `lambda` is not a new name for the place's `dt`
    "python": ("schema.py", "created = fields.DateTime(dump_default=dt.datetime(2017, 9, 29))\n",
               "class S:\n    updated = fields.DateTime(dump_default=lambda", ".datetime(2017, 9, 29))"),
    # nor `func` for the place's `handler`
    "go": ("routes.go", "package routes\n\nfunc init() {\n\tmux.HandleFunc(\"/users\", handler.ServeUsers)\n}\n",
           "package other\n\nfunc setup() {\n\tmux.HandleFunc(\"/items\", func", ".ServeUsers)"),
}


@pytest.mark.parametrize("language", sorted(KEYWORD_TYPED))
def test_a_typed_keyword_is_never_read_as_a_new_name(tmp_path, cache, language):
    name, other, before, wrong = KEYWORD_TYPED[language]
    ext = name.rsplit(".", 1)[1]
    got = at_cursor(tmp_path / "ws", {name: other}, f"doc.{ext}", before, "\n", language)
    assert wrong not in got


def test_a_keyword_apart_is_not_swapped_into_the_rest_python(tmp_path, cache):
    # `if` and `while` differ; the rest keeps the place's words (no `while` put for `if` in it)
    from mercury_lsp.memory.places import substitute

    assert substitute("if ready: return if_count", "if", "while") is None
    assert substitute("self.width = width", "width", "height") == "self.height = height"


def test_a_place_earlier_on_the_cursors_own_line_is_not_a_continuation(tmp_path, cache):
    doc = "def check(value):\n    if value is True or value is"
    got = texts(tmp_path / "ws", {"other.py": "x = 1\n"}, "check.py", doc, "python")
    assert " True or value is" not in got
