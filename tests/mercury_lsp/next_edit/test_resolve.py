"""The one overlap resolver: edits in priority order, an edit dropped when its closed span meets a
kept one in its document (overlapping, touching, or inserting at the same place); the earlier
wins; no-ops never block; only kept edits block."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState, NextEditQuery, predict
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.resolve import ranked, resolve
from mercury_lsp.syntax import Grammars
from tests.support.next_edit import applied, doc
from tests.support.next_edit import ask as predicted

G = Grammars()


def edit(start: int, end: int, new: str = "x", uri: str = "file:///a", old: str = "", conf: float = 0.5) -> Prediction:
    return Prediction(uri, start, end, new, conf, "", "repeat", "syntax", old)


def spans(preds):
    return [(p.uri[-1], p.start, p.end) for p in preds]


def test_the_earlier_edit_wins_an_overlap_a_touch_and_the_same_insertion_point():
    first = edit(10, 20)
    assert spans(resolve([first, edit(15, 25)])) == [("a", 10, 20)]  # overlapping
    assert spans(resolve([first, edit(20, 30)])) == [("a", 10, 20)]  # touching at its end
    assert spans(resolve([first, edit(0, 10)])) == [("a", 10, 20)]  # touching at its start
    assert spans(resolve([edit(5, 5), edit(5, 5, "y")])) == [("a", 5, 5)]  # one insertion point
    assert spans(resolve([first, edit(21, 30), edit(0, 9)])) == [("a", 10, 20), ("a", 21, 30), ("a", 0, 9)]


def test_other_documents_never_conflict_and_noops_never_block():
    assert spans(resolve([edit(10, 20), edit(10, 20, uri="file:///b")])) == [("a", 10, 20), ("b", 10, 20)]
    assert spans(resolve([edit(10, 20, "same", old="same"), edit(12, 14)])) == [("a", 12, 14)]


def test_only_kept_edits_block():
    # the middle edit loses to the first; the third touches only the middle one: it is kept
    assert spans(resolve([edit(50, 60), edit(40, 55), edit(30, 40)])) == [("a", 50, 60), ("a", 30, 40)]


def test_many_edits_resolve_in_order():
    preds = [edit(i * 3, i * 3 + 1) for i in range(2000)] + [edit(1, 2), edit(2, 3)]
    kept = resolve(preds)
    assert len(kept) == 2000 and all(a.end < b.start for a, b in zip(kept, kept[1:], strict=False))


def test_ranking_is_confidence_then_the_cursors_document_then_distance():
    q = NextEditQuery((), "file:///a", 50)
    preds = [edit(0, 1, conf=0.5), edit(45, 46, conf=0.5), edit(60, 61, uri="file:///b", conf=0.5),
             edit(90, 91, conf=0.8)]
    assert spans(ranked(preds, q)) == [("a", 90, 91), ("a", 45, 46), ("a", 0, 1), ("b", 60, 61)]


def test_a_rename_wins_over_a_deletion_around_it_and_the_deletion_beside_it_stays():
    """Two rules: the rename of a deleted value's neighbour (NE101) wins over the removed-use
    statement around it (NE105); that statement, dropped, does not block the one next to it."""
    before = ("def f(blue, red):\n    a = check(red(1), blue(1))\n    b = check(red(2), blue_bold(2))\n"
              "    c = check(blue(3), blue_bold(3))\n")
    after = before.replace("def f(blue, red):", "def f(red):")
    uri = "file:///t.py"
    out = predict(NextEditQuery((DocState(uri, after, "python", 2, (before,), 1.0),), uri, 0), None, G).predictions
    for a, b in zip(sorted(out, key=lambda p: p.start), sorted(out, key=lambda p: p.start)[1:], strict=False):
        assert a.end < b.start


HELPER_PY = "def a(x):\n    return len(x) + 1\n\n\ndef b(y):\n    return len(y) * 2\n"
HELPER_GO = ('package m\n\nimport "fmt"\n\nfunc a(err error) error {\n\treturn fmt.Errorf("load: %w", err)\n}\n\n'
             'func b(err error) error {\n\treturn fmt.Errorf("load: %w", err)\n}\n')


def test_a_replacement_never_reaches_into_the_helper_its_new_text_calls():
    """A call replaced by a call of a helper the user just wrote repeats at the other calls, never
    inside the helper itself (it would recurse forever): Python (a builtin renamed, NE101), Go (a
    call repeated, NE204)."""
    one = "def size_of(v):\n    return len(v)\n\n\n" + HELPER_PY
    two = one.replace("return len(x) + 1", "return size_of(x) + 1")
    preds = predicted(doc("file:///s.py", two, (one, HELPER_PY), (2.0, 1.0)), cursor=two.index("size_of(x)"))
    assert applied(two, preds, "file:///s.py") == two.replace("len(y)", "size_of(y)")
    one = HELPER_GO.replace('import "fmt"\n', 'import "fmt"\n\nfunc wrap(err error) error {\n'
                                              '\treturn fmt.Errorf("load: %w", err)\n}\n')
    two = one.replace('error {\n\treturn fmt.Errorf("load: %w", err)\n}\n\nfunc b', 'error {\n\treturn wrap(err)\n}\n\nfunc b')
    preds = predicted(doc("file:///m.go", two, (one, HELPER_GO), (2.0, 1.0), grammar="go"),
                      cursor=two.index("wrap(err)\n}\n\nfunc b"))
    assert applied(two, preds, "file:///m.go") == two.replace('func b(err error) error {\n\treturn fmt.Errorf("load: %w", err)',
                                                                'func b(err error) error {\n\treturn wrap(err)')


def test_a_helper_given_to_a_name_is_a_helper_too():
    """``const isKey = k => ...`` (JavaScript) and ``is_key = lambda k: ...`` (Python) are
    functions named by their declaration: a replacement by a call of them stays out of them."""
    js = ("const isKey = k => typeof k === 'string' || typeof k === 'symbol';\n\n"
          "function a(name) {\n\treturn typeof name === 'string' || typeof name === 'symbol';\n}\n\n"
          "function b(name) {\n\treturn typeof name === 'string' || typeof name === 'symbol';\n}\n")
    after = js.replace("\treturn typeof name === 'string' || typeof name === 'symbol';\n}\n\nfunction b",
                       "\treturn isKey(name);\n}\n\nfunction b")
    preds = predicted(doc("file:///k.js", after, (js,), (1.0,), grammar="javascript"), cursor=after.index("isKey(name)"))
    assert "const isKey = k => typeof k === 'string'" in applied(after, preds, "file:///k.js")
    py = ("is_key = lambda k: isinstance(k, (str, bytes))\n\n\ndef a(v):\n    return isinstance(v, (str, bytes))\n\n\n"
          "def b(k):\n    return isinstance(k, (str, bytes))\n")
    after = py.replace("    return isinstance(v, (str, bytes))", "    return is_key(v)")
    preds = predicted(doc("file:///k.py", after, (py,), (1.0,)), cursor=after.index("is_key(v)"))
    assert applied(after, preds, "file:///k.py").startswith("is_key = lambda k: isinstance(k, (str, bytes))")


def test_a_function_renamed_at_its_definition_still_has_its_recursive_calls_renamed():
    py = "def fact(n):\n    return 1 if n < 2 else n * fact(n - 1)\n\n\nprint(fact(5))\n"
    after = py.replace("def fact(", "def factorial(")
    preds = predicted(doc("file:///f.py", after, (py,), (1.0,)), cursor=after.index("factorial"))
    assert applied(after, preds, "file:///f.py") == py.replace("fact(", "factorial(")
    go = "package m\n\nfunc fact(n int) int {\n\tif n < 2 {\n\t\treturn 1\n\t}\n\treturn n * fact(n-1)\n}\n"
    after = go.replace("func fact(", "func factorial(")
    preds = predicted(doc("file:///f.go", after, (go,), (1.0,), grammar="go"), cursor=after.index("factorial"))
    assert applied(after, preds, "file:///f.go") == go.replace("fact(", "factorial(")
