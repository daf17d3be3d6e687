"""A changed signature's calls rebuilt (``steps.calls``): arguments rebound to the new parameters, the layout kept."""

from __future__ import annotations

import pytest

from mercury_lsp.next_edit.steps.calls import rebind, splice
from mercury_lsp.next_edit.steps.detect import Signature


def sig(*params: str) -> Signature:
    return Signature("f", "", tuple((p.rstrip("="), p.endswith("=")) for p in params), False)


@pytest.mark.parametrize(("old", "new", "positional", "keywords", "example", "want"), [
    (("a", "b"), ("a", "b", "c"), ["1", "2"], [], "9", ["1", "2", "9"]),  # added: the example
    (("a", "b"), ("a", "c", "b"), ["1", "2"], [], "9", ["1", "9", "2"]),  # ... where the parameter sits
    (("a", "b"), ("a", "b", "c"), ["1"], [("b", "b=2")], "9", ["1", "b=2", "c=9"]),  # after keywords
    (("a", "b"), ("a", "b", "c"), ["1", "2"], [], None, None),  # no example: not from the syntax
    (("a", "b"), ("a", "b", "c="), ["1", "2"], [], None, ["1", "2"]),  # a default: nothing to pass
    (("a", "b", "c"), ("a", "c"), ["1", "2", "3"], [], None, ["1", "3"]),  # removed
    (("a", "b", "c"), ("a", "c"), ["1"], [("b", "b=2"), ("c", "c=3")], None, ["1", "c=3"]),  # ... keyword
    (("a", "b", "c"), ("c", "b", "a"), ["1", "2", "3"], [], None, ["3", "2", "1"]),  # reordered
    (("a", "b", "c="), ("c=", "a", "b"), ["1", "2"], [], None, ["a=1", "b=2"]),  # c not passed: by name
    (("a", "b"), ("a", "size"), ["1"], [("b", "b=2")], None, ["1", "size=2"]),  # renamed
    (("a", "b"), ("a", "size"), ["1", "2"], [], None, ["1", "2"]),  # renamed, positional: as is
    (("a", "b"), ("x", "y"), ["1"], [("b", "b=2")], None, ["1", "y=2"]),  # two renamed
    (("a", "b"), ("x", "y"), ["1", "2"], [], None, ["1", "2"]),  # ... positional: as is, no hole
])
def test_rebind(old, new, positional, keywords, example, want):
    assert rebind(sig(*old), sig(*new), positional, keywords, example) == want


def test_splice_keeps_the_layout():
    inner = "\n    first,\n    second,\n    third,\n"
    spans = [(inner.index(w), inner.index(w) + len(w)) for w in ("first", "second", "third")]
    old = ["first", "second", "third"]
    assert splice(inner, spans, old, old) is None
    assert splice(inner, spans, old, ["third", "second", "first"]) == "\n    third,\n    second,\n    first,\n"
    assert splice(inner, spans, old, ["first", "third"]) == "\n    first,\n    third,\n"
    assert splice(inner, spans, old, ["first", "second"]) == "\n    first,\n    second,\n"
    assert splice(inner, spans, old, ["x", "first", "second", "third"]) == "\n    x, first,\n    second,\n    third,\n"
    assert splice(inner, spans, old, ["first", "second", "third", "x"]) == "\n    first,\n    second,\n    third, x,\n"
    assert splice("", [], [], ["x"]) == "x"
    assert splice("a, b", [(0, 1), (3, 4)], ["a", "b"], ["b=1"]) == "b=1"
