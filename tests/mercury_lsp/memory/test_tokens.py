"""The memory's tokens: words, one punctuation byte, one NEWLINE per run of line breaks; ids are
the same for the same text in every file and every process."""

from __future__ import annotations

from mercury_lsp.memory.tokens import NEWLINE, RESERVED, token_id, tokenize


def texts(data: bytes) -> list[str]:
    t = tokenize(data)
    return [data[a:b].decode() for a, b in zip(t.starts, t.ends, strict=True)]


def test_words_punctuation_and_one_newline_per_run_of_blank_lines():
    assert texts(b"def f(x):\n\n\n    return x+1  # done\n") == [
        "def", "f", "(", "x", ")", ":", "\n", "return", "x", "+", "1", "#", "done", "\n"]


def test_indentation_and_blank_lines_do_not_change_the_ids():
    a = tokenize(b"foo(\n    a,\n    b)\n").ids
    b = tokenize(b"foo(\n\n  a,\n\t\tb)\n").ids
    assert list(a) == list(b)
    assert list(a).count(NEWLINE) == 3


def test_ids_depend_on_the_token_text_only():
    assert token_id("render") == tokenize(b"x = render(1)").ids[2]
    assert token_id("render") != token_id("rendez")
    long_a, long_b = "a_rather_long_identifier_name_x", "a_rather_long_identifier_name_y"
    assert token_id(long_a) != token_id(long_b)  # past the packed bytes: hashed, still distinct
    assert min(token_id(w) for w in ("a", "(", "x", long_a)) >= RESERVED


def test_non_ascii_names_are_words():
    assert texts("café = naïve\n".encode()) == ["café", "=", "naïve", "\n"]


def test_empty_text_has_no_tokens():
    assert len(tokenize(b"")) == 0
    assert len(tokenize(b"   \t ")) == 0
