"""The one text index: lines, LSP positions, code points, UTF-8 bytes and tree-sitter points."""

from __future__ import annotations

import pytest

from mercury_lsp.syntax import Grammars
from mercury_lsp.text import (
    PositionEncoding,
    PositionError,
    TextIndex,
    end_point,
    index_of_byte,
    line_starts_of,
    units_len,
)

TEXT = "a = 'é'\r\nb = '😀'  # x\n\nlast"


def test_lines_and_line_endings():
    idx = TextIndex(TEXT)
    assert idx.line_starts == line_starts_of(TEXT) == [0, 9, 22, 23]
    assert idx.line_count == 4
    assert [idx.line_text(i) for i in range(4)] == ["a = 'é'", "b = '😀'  # x", "", "last"]
    assert idx.line_end(0) == 7  # before "\r\n"
    assert idx.line_of(8) == 0 and idx.line_of(9) == 1 and idx.line_of(len(TEXT)) == 3


def test_positions_in_every_encoding_round_trip():
    idx = TextIndex(TEXT)
    after_emoji = TEXT.index("😀") + 1
    assert idx.position_at(after_emoji, PositionEncoding.UTF32) == (1, 6)
    assert idx.position_at(after_emoji, PositionEncoding.UTF16) == (1, 7)
    assert idx.position_at(after_emoji, PositionEncoding.UTF8) == (1, 9)
    for enc in PositionEncoding:
        for offset in range(len(TEXT) + 1):
            if TEXT[offset - 1:offset + 1] == "\r\n":
                continue  # between "\r" and "\n": not a position of the line's content
            line, col = idx.position_at(offset, enc)
            assert idx.offset_at(line, col, enc, strict=True) == offset
    with pytest.raises(PositionError):
        idx.offset_at(1, 6, PositionEncoding.UTF16, strict=True)  # inside the surrogate pair
    with pytest.raises(PositionError):
        idx.offset_at(9, 0, PositionEncoding.UTF16, strict=True)
    assert idx.offset_at(9, 0, PositionEncoding.UTF16, strict=False) == len(TEXT)
    assert units_len("😀é", PositionEncoding.UTF8) == 6


def test_bytes_and_code_points():
    idx = TextIndex(TEXT)
    data = TEXT.encode("utf-8")
    assert idx.data == data
    for offset in range(len(TEXT) + 1):
        b = idx.byte(offset)
        assert b == len(TEXT[:offset].encode("utf-8"))
        assert idx.char(b) == offset
    assert idx.char(idx.byte(TEXT.index("😀")) + 2) == TEXT.index("😀")  # inside: that character
    assert index_of_byte("é!", 1) == 0 and index_of_byte("é!", 2) == 1 and index_of_byte("é!", 9) == 2
    with pytest.raises(PositionError):
        index_of_byte("é!", 1, strict=True)
    ascii_idx = TextIndex("abc\ndef")
    assert ascii_idx.ascii and ascii_idx.byte(5) == 5 and ascii_idx.char(5) == 5


def test_tree_sitter_points_match_the_parser():
    parser = Grammars().parser("python")
    if parser is None:
        pytest.skip("tree-sitter-python unavailable")
    text = "s = 'é😀'\nt = s + 'ü'\n"
    idx = TextIndex(text)
    tree = parser.parse(idx.data)
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        start, end = idx.char(node.start_byte), idx.char(node.end_byte)
        assert idx.point(start) == tuple(node.start_point)
        assert idx.point(end) == tuple(node.end_point)
        assert idx.offset_of_point(tuple(node.start_point)) == start
        assert idx.offset_of_point(tuple(node.end_point)) == end
        assert idx.node_text(node) == text[start:end]
    assert idx.offset_of_point((99, 0)) == len(text)


def test_end_point_of_an_insertion():
    assert end_point((2, 4), "ab") == (2, 6)
    assert end_point((2, 4), "é") == (2, 6)
    assert end_point((2, 4), "x\nyé") == (3, 3)
