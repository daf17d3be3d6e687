"""HumanEval through the language server: the document a task is opened as, and the completion
read back from the item the server answers (the server itself is run by the benchmark)."""

from __future__ import annotations

from benchmarks.humaneval.lsp_pipeline import completion_of, document
from benchmarks.humaneval.tasks import Problem

P = Problem("T/0", "f", "def f(x):\n    y = x + 1\n", "    return y\n", "    y = y * 2\n", "assert f(1) == 4")


def test_the_document_has_the_line_indented_and_the_cursor_after_it():
    text, line, character = document(P)
    assert text == "def f(x):\n    y = x + 1\n    \n    return y\n"
    assert (line, character) == (2, 4)


def test_the_completion_is_what_stands_between_prompt_and_suffix():
    at = {"line": 2, "character": 4}
    item = {"insertText": "y = y * 2", "range": {"start": at, "end": at}}
    assert completion_of(P, item, "utf-16") == ("    y = y * 2\n", True)
    assert completion_of(P, None, "utf-16") == ("    \n", False)  # nothing shown: the line as typed
    whole = {"insertText": "    y = y * 2", "range": {"start": {"line": 2, "character": 0}, "end": at}}
    assert completion_of(P, whole, "utf-16") == ("    y = y * 2\n", True)
    into_suffix = {"insertText": "pass", "range": {"start": at, "end": {"line": 3, "character": 10}}}
    assert completion_of(P, into_suffix, "utf-16") == ("    \n", True)  # it broke the suffix: not scored as written
