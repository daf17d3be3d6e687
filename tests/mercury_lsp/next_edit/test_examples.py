"""The newest edits across documents as examples (``examples``)."""

from __future__ import annotations

from mercury_lsp.next_edit import NextEditQuery
from mercury_lsp.next_edit.examples import recent_edits, to_current
from tests.support.next_edit import doc


def test_recent_edits_are_ordered_by_record_time_across_documents():
    a0, a1, a2 = "v = 1\n", "v = 2\n", "v = 2\nw = 3\n"
    b0, b1 = "x = 1\n", "x = 5\n"
    a = doc("file:///a.py", a2, (a1, a0), (3.0, 1.0))
    b = doc("file:///b.py", b1, (b0,), (2.0,))
    got = recent_edits(NextEditQuery((a, b), a.uri, 0), 3)
    assert [(e.doc.uri, e.before, e.after, e.age) for e in got] == [
        (a.uri, a1, a2, 0), (b.uri, b0, b1, 1), (a.uri, a0, a1, 2)]


def test_an_offset_of_an_older_record_follows_the_newer_records():
    a0, a1, a2 = "aa\nbb\ncc\n", "aa\nBB\ncc\n", "zz\naa\nBB\ncc\n"
    ex = recent_edits(NextEditQuery((doc("file:///a.py", a2, (a1, a0), (2.0, 1.0)),), "file:///a.py", 0), 2)[1]
    assert ex.after == a1
    assert to_current(ex, a1.index("BB")) == a2.index("BB")
    rewritten = recent_edits(NextEditQuery((doc("file:///a.py", "aa\nCC\ncc\n", (a1, a0), (2.0, 1.0)),),
                                           "file:///a.py", 0), 2)[1]
    assert to_current(rewritten, a1.index("BB") + 1) is None  # a newer record rewrote that place
