"""Parameters stored as fields: a line starting with the receiver, in a method that stores its
parameters, gets the next parameter the body never mentions."""

from __future__ import annotations

import pytest

from mercury_lsp.memory.candidates import with_parallels
from mercury_lsp.memory.fields import _parameters, stored_parameters
from mercury_lsp.memory.query import Context, build_query


def texts(before: str, after: str = "", language: str = "python") -> list[tuple[str, int]]:
    query = build_query(Context("file:///x", before + after, len(before), language))
    return [(p.text, p.lines_away) for p in stored_parameters(query)]


INIT = "class Author:\n    def __init__(self, id, first, last, book_count, age):\n        self.id = id\n"


def test_python_the_first_parameter_the_body_does_not_mention():
    below = "\n        self.age = age\n"
    assert texts(INIT + "        self.first = first\n        self.last = last\n        self.", below) == [
        ("book_count = book_count", 1)]
    assert texts(INIT + "        self.first = first\n        self.last = last\n        self.bo", below) == [
        ("ok_count = book_count", 1)]
    assert texts(INIT + "        self", below) == [(".first = first", 1)]


def test_a_parameter_used_otherwise_counts_as_stored_and_a_long_header_is_read_whole():
    doc = ("    def __init__(\n        self,\n        message: str | list,\n        field_name: str = SCHEMA,\n"
           "        data: Mapping[str, Any] | None = None,\n        **kwargs,\n    ):\n"
           "        self.messages = [message]\n        self.")
    after = "\n        self.data = data\n        self.kwargs = kwargs\n        super().__init__(message)\n"
    assert texts(doc, after) == [("field_name = field_name", 1)]


@pytest.mark.parametrize("language,doc", [
    ("java", "  private Builder(TypeName type, String name, List<String> tags) {\n    this.type = type;\n    this."),
    ("typescript", "  constructor(private readonly type: string, name?: string) {\n    this.type = type;\n    this."),
])
def test_java_and_typescript_keep_the_stored_lines_shape(language, doc):
    assert texts(doc, "\n  }\n", language) == [("name = name;", 1)]


@pytest.mark.parametrize("doc", [
    "    def __init__(self, a, b):\n        self.",  # nothing stored yet: no pattern to follow
    "    def __init__(self, a, b):\n        self.a = a\n        self.b = b\n        self.",  # all stored
    "    def __init__(self, a, b):\n        self.a = a\n        self.c",  # a name that is no parameter
    "    def __init__(self, a, b):\n        self.a = a\n        other.",  # another receiver
    "    def __init__(self, a, b):\n        self.a = a\n        x = self.",  # not at the line's start
])
def test_nothing_without_a_stored_parameter_to_follow_or_one_left(doc):
    assert texts(doc) == []


def test_parameter_names_are_the_last_word_before_a_default_or_a_type():
    assert _parameters("def f(self, a, b: dict[str, int] = {}, *args, **kw) -> None:") == (
        ["a", "b", "args", "kw"], 0)
    assert _parameters("Foo(final Map<String, Integer> m,\n    @Nullable String... names) {") == (["m", "names"], 1)
    assert _parameters("def f(a,") == ([], 0)  # not closed: no header


def test_the_candidate_joins_the_parallel_lines():
    doc = INIT + "        self."
    query = build_query(Context("file:///x", doc, len(doc), "python"))
    got = {c.text: c.features for c in with_parallels(query, [])}
    f = got["first = first"]
    assert f.parallel == 1 and f.parallel_words == 1 and f.substituted
