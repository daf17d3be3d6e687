"""NE501 cut-short-name: a name cut short at the cursor, finished from the document's names."""

from __future__ import annotations

from tests.support.next_edit import run


def test_a_name_cut_short_at_the_cursor_is_finished_from_the_document():
    src = "def handle_request(r):\n    return r\n\n\nx = 1\n"
    after = src + "y = handle_re"
    out, _ = run(after, src, cursor=len(after))
    assert [(p.new_text, p.kind, p.source) for p in out.predictions] == [("quest", "complete", "syntax")]
    after = src + "y = hand  # handle_re"  # no single name, or not code: nothing
    assert run(after, src, cursor=len(after))[0].predictions == []
