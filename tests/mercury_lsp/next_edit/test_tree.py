"""``next_edit.tree``: files on disk parsed once and kept within a byte bound (``DiskTrees``), open
documents parsed per request."""

from __future__ import annotations

import pytest

from mercury_lsp.next_edit.query import DocState
from mercury_lsp.next_edit.tree import CACHED_BYTES_PER_SOURCE_BYTE, DiskTrees, parse_all
from mercury_lsp.syntax import Grammars

GRAMMARS = Grammars()


def on_disk(name: str, text: str) -> DocState:
    return DocState(f"file:///ws/{name}.py", text, "python", None)


def source(n: int) -> str:
    return "".join(f"def f{n}_{i}(a, b):\n    return a + b * {i}\n" for i in range(20))


@pytest.fixture(autouse=True)
def _python():
    if GRAMMARS.parser("python") is None:
        pytest.skip("no Python grammar")


def test_a_file_on_disk_read_by_every_request_is_parsed_once():
    disk = DiskTrees()
    docs = [on_disk(f"m{i}", source(i)) for i in range(5)]
    first = parse_all(docs, GRAMMARS, disk)
    again = parse_all(docs, GRAMMARS, disk)
    assert disk.parses == 5  # the second request parsed nothing
    assert [str(p.tree.root_node) for p in again] == [str(p.tree.root_node) for p in first]
    assert [p.doc for p in again] == docs  # each request's own documents, with the kept trees


def test_the_kept_trees_stay_within_their_byte_bound_least_recently_used_first():
    one = len(source(0).encode()) * CACHED_BYTES_PER_SOURCE_BYTE
    disk = DiskTrees(max_bytes=3 * one)
    docs = [on_disk(f"m{i}", source(0)) for i in range(6)]
    for d in docs[:3]:
        parse_all([d], GRAMMARS, disk)
    parse_all([docs[0]], GRAMMARS, disk)  # m0 used again: m1 is now the oldest
    for d in docs[3:]:
        parse_all([d], GRAMMARS, disk)
        assert disk.bytes <= disk.max_bytes
    assert len(disk) == 3
    before = disk.parses
    parse_all([docs[0]], GRAMMARS, disk)  # dropped too (three newer since)
    parse_all([docs[5]], GRAMMARS, disk)  # kept
    assert disk.parses == before + 1


def test_a_file_whose_text_changed_is_parsed_again_and_replaces_its_entry():
    disk = DiskTrees()
    parse_all([on_disk("m", source(1))], GRAMMARS, disk)
    kept = disk.bytes
    changed = parse_all([on_disk("m", source(1) + "x = 1\n")], GRAMMARS, disk)[0]
    assert disk.parses == 2 and len(disk) == 1 and disk.bytes > kept
    assert "x = 1" in changed.b.data.decode() and changed.tree.root_node.end_byte == len(changed.b.data)


def test_a_file_larger_than_the_bound_is_parsed_but_not_kept():
    disk = DiskTrees(max_bytes=100)
    parsed = parse_all([on_disk("big", source(2))], GRAMMARS, disk)
    assert len(parsed) == 1 and not parsed[0].tree.root_node.has_error
    assert len(disk) == 0 and disk.bytes == 0


def test_open_and_edited_documents_are_parsed_per_request_and_never_kept():
    disk = DiskTrees()
    opened = DocState("file:///ws/open.py", source(3), "python", 7)
    edited = DocState("file:///ws/edited.py", source(4), "python", None, history=(source(5),))
    parse_all([opened, edited], GRAMMARS, disk)
    parse_all([opened, edited], GRAMMARS, disk)
    assert len(disk) == 0 and disk.parses == 0


def test_a_tree_handed_out_is_a_copy_an_edit_to_it_leaves_the_kept_one_alone():
    disk = DiskTrees()
    d = on_disk("m", source(6))
    first = parse_all([d], GRAMMARS, disk)[0]
    first.tree.edit(0, 3, 0, (0, 0), (0, 3), (0, 0))  # as an incremental reparse would
    again = parse_all([d], GRAMMARS, disk)[0]
    assert again.tree is not first.tree
    assert again.tree.root_node.start_byte == 0 and str(again.tree.root_node) == str(
        GRAMMARS.parser("python").parse(d.text.encode()).root_node)
