"""The one overlap resolver: edits in priority order, an edit dropped when its closed span meets a
kept one in its document (overlapping, touching, or inserting at the same place); the earlier
wins; no-ops never block; only kept edits block."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState, NextEditQuery, predict
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.resolve import ranked, resolve
from mercury_lsp.syntax import Grammars

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
