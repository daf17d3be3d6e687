from __future__ import annotations

import pytest

from mercury_lsp.documents import (
    Document,
    DocumentStore,
    EditHistory,
    PositionEncoding,
    PositionError,
    index_of_units,
)
from mercury_lsp.syntax import Grammars, grammar_for

U8, U16, U32 = PositionEncoding.UTF8, PositionEncoding.UTF16, PositionEncoding.UTF32


def test_utf16_and_utf8_columns():
    line = "a😀b é"
    assert index_of_units(line, 1, U16, True) == 1
    assert index_of_units(line, 3, U16, True) == 2  # after the surrogate pair
    with pytest.raises(PositionError):
        index_of_units(line, 2, U16, True)  # inside the pair
    assert index_of_units(line, 2, U16, False) == 1
    assert index_of_units(line, 5, U8, True) == 2  # 'a' + 4 bytes
    with pytest.raises(PositionError):
        index_of_units(line, 3, U8, True)
    assert index_of_units(line, 99, U16, True) == len(line)  # clamped to the line
    assert index_of_units(line, 3, U32, True) == 3


def test_offsets_positions_and_crlf():
    doc = Document("file:///a.py", "python", 1, "ab\r\ncd\n😀x\n", None)
    assert doc.line_count == 4
    assert doc.line_text(0) == "ab"
    assert doc.offset_at(0, 9, U16, strict=True) == 2  # clamped before \r\n
    assert doc.offset_at(2, 2, U16, strict=True) == 8
    assert doc.position_at(8, U16) == (2, 2)
    assert doc.position_at(8, U8) == (2, 4)
    with pytest.raises(PositionError):
        doc.offset_at(7, 0, U16, strict=True)
    assert doc.offset_at(7, 0, U16, strict=False) == len(doc.text)


def test_incremental_changes_keep_lines_and_history():
    store = DocumentStore(grammar_for, EditHistory(coalesce_s=60))
    store.open("file:///a.py", "python", 1, "def f():\n    pass\n")
    for i, ch in enumerate("x = 1"):
        store.change("file:///a.py", 2 + i, [((1, 8 + i, 1, 8 + i), ch)], U16)
    doc = store.get("file:///a.py")
    assert doc.text == "def f():\n    passx = 1\n"
    store.change("file:///a.py", 9, [((1, 8, 1, 13), "\n    y = 2")], U16)
    assert doc.text == "def f():\n    pass\n    y = 2\n"
    assert doc.line_starts == [0, 9, 18, 28]
    assert doc.version == 9
    recs = store.history.recent("file:///a.py")
    assert len(recs) == 1  # typing and then replacing it coalesce into one edit
    r = recs[0]
    assert (r.start_line, r.start_col, r.old_text, r.new_text) == (1, 8, "", "\n    y = 2")
    store.change("file:///a.py", 10, [(None, "whole\n")], U16)
    assert doc.text == "whole\n" and doc.line_starts == [0, 6]


def test_history_separates_distant_edits_and_is_bounded():
    store = DocumentStore(grammar_for, EditHistory(max_records=3, coalesce_s=60))
    store.open("file:///a.txt", "plaintext", 1, "one\ntwo\nthree\nfour\n")
    for v, line in enumerate([0, 2, 1, 3], start=2):
        store.change("file:///a.txt", v, [((line, 0, line, 0), "X")], U16)
    assert len(store.history) == 3
    assert [r.start_line for r in store.history.recent()] == [3, 1, 2]


def test_incremental_parse_matches_full_parse():
    grammars = Grammars()
    store = DocumentStore(grammar_for)
    store.open("file:///a.py", "python", 1, "def f(a):\n    return a\n")
    doc = store.get("file:///a.py")
    snap = doc.snapshot(1 << 20)
    tree = grammars.parse(snap)
    doc.adopt_tree(tree, snap.syntax.seq)
    store.change("file:///a.py", 2, [((1, 12, 1, 12), " + 1  # é")], U16)
    store.change("file:///a.py", 3, [((0, 0, 0, 0), "# c\n")], U16)
    snap = doc.snapshot(1 << 20)
    assert len(snap.syntax.edits) == 2
    inc = grammars.parse(snap)
    full = grammars.parser("python").parse(snap.text.encode())
    assert str(inc.root_node) == str(full.root_node)
    assert not inc.root_node.has_error


def test_a_snapshot_keeps_its_lines_when_the_document_changes():
    store = DocumentStore(grammar_for)
    doc = store.open("file:///s.py", "python", 1, "a = 1\nb = 2\n")
    snap = doc.snapshot(1 << 20)
    store.change("file:///s.py", 2, [((0, 0, 0, 0), "# head\n# more\n")], PositionEncoding.UTF16)
    assert doc.line_starts == [0, 7, 14, 20, 26]
    assert snap.line_starts == (0, 6, 12) and snap.line_text(1) == "b = 2"


def test_closed_documents_give_their_memory_back():
    """Open, edit and close a 5 MB document again and again: RSS ends within a tolerance of where
    it started (without ``heap.release_free_memory`` the last document's 5 MB stayed)."""
    import gc
    import sys

    import pytest

    if not sys.platform.startswith("linux"):
        pytest.skip("reads /proc/self/status")

    def rss_mb() -> float:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024

    from mercury_lsp.documents import DocumentStore, PositionEncoding

    store = DocumentStore(lambda language_id, uri: None)
    text = ("def f(x):\n    return x + 1\n" * 200_000)[:5_000_000]
    gc.collect()
    before = rss_mb()
    for i in range(6):
        store.open("file:///big.py", "python", 1, text[: -i - 1] + "y" * (i + 1))  # a new string each time
        store.change("file:///big.py", 2, [((3, 0, 3, 0), "# edit\n")], PositionEncoding.UTF16)
        store.close("file:///big.py")
    gc.collect()
    assert rss_mb() - before < 3.5  # MB: a 5 MB document is not kept


def test_a_tree_parsed_earlier_never_replaces_a_newer_one():
    """Request jobs run at once and may finish out of order: the newest tree is kept, and the
    next incremental parse still matches a full parse."""
    grammars = Grammars()
    store = DocumentStore(grammar_for)
    store.open("file:///a.py", "python", 1, "def f(a):\n    return a\n")
    doc = store.get("file:///a.py")
    old = doc.snapshot(1 << 20)
    store.change("file:///a.py", 2, [((1, 12, 1, 12), " + 1")], U16)
    new = doc.snapshot(1 << 20)
    doc.adopt_tree(grammars.parse(new), new.syntax.seq)
    doc.adopt_tree(grammars.parse(old), old.syntax.seq)  # the slower, older job ends last
    store.change("file:///a.py", 3, [((0, 0, 0, 0), "# c\n")], U16)
    snap = doc.snapshot(1 << 20)
    assert len(snap.syntax.edits) == 1
    assert str(grammars.parse(snap).root_node) == str(grammars.parser("python").parse(snap.text.encode()).root_node)
