"""Shards: the suffix array finds the longest left context and its back-off levels, dead files
are never read, and a saved shard opens memory-mapped or is refused when damaged."""

from __future__ import annotations

import numpy as np
import pytest

from mercury_lsp.memory.corpus import FileInfo
from mercury_lsp.memory.scan import Loose
from mercury_lsp.memory.shard import Shard
from mercury_lsp.memory.tokens import tokenize

A = b"def f(x):\n    return x + 1\n\ndef g(y):\n    return y + 2\n"
B = b"class A:\n    def f(self, x):\n        return x + 1  # the same\n"


def reversed_query(text: bytes) -> np.ndarray:
    return tokenize(text).ids[::-1].copy()


@pytest.fixture
def shard() -> Shard:
    return Shard.build([(FileInfo("a.py", "python", False), A), (FileInfo("b.py", "python", False), B)])


def rest_of_line(corpus, e: int) -> str:
    start = int(corpus.starts[e])
    end = bytes(corpus.blob).find(b"\n", start)
    return corpus.text(start, end)


def test_longest_and_levels(shard):
    q = reversed_query(b"\n    return x")
    assert shard.longest(q) == 3  # NEWLINE return x
    m = shard.matches(q, [3, 1], 10)
    assert [r.count for r in m.levels] == [2, 4]  # 'return x' twice; 'x' four times
    found = sorted((int(length), rest_of_line(shard, int(e))) for e, length in zip(m.ends, m.lengths, strict=True))
    assert found[-2:] == [(3, "+ 1"), (3, "+ 1  # the same")]


def test_no_match_crosses_a_file(shard):
    # a.py ends with "+ 2\n" and b.py starts with "class": "2 \n class" is in no file, and "class"
    # follows a file's start, not a line break
    assert shard.longest(reversed_query(b"2\nclass")) == 1


def test_dead_files_are_never_read(shard):
    q = reversed_query(b"f(self, x):\n    return x + 1")
    assert shard.longest(q) == 12  # b.py
    live = np.array([True, False])
    assert shard.longest(q, live) == 8  # a.py: "x):\n return x + 1"
    m = shard.matches(q, [8, 4], 10, live)
    assert {int(f) for f in shard.file_of(m.ends)} == {0}
    assert [r.count for r in m.levels] == [1, 1]


def test_saved_shards_open_memory_mapped_and_damage_is_refused(shard, tmp_path):
    opened = Shard.open(shard.save(tmp_path))
    q = reversed_query(b"return y")
    assert opened.longest(q) == shard.longest(q) == 2
    assert isinstance(opened.sa.base, np.memmap)  # a view of the mapped file, not a copy
    (tmp_path / shard.name / "sa.npy").write_bytes(b"not an array")
    with pytest.raises((ValueError, OSError)):
        Shard.open(tmp_path / shard.name)


def test_a_loose_document_scans_like_a_shard(shard):
    loose = Loose(FileInfo("a.py", "python", False), A)
    q = reversed_query(b"return y")
    assert loose.longest(q) == shard.longest(q, np.array([True, False])) == 2
    m = loose.matches(q, [2], 10)
    assert [rest_of_line(loose, int(e)) for e in m.ends] == ["+ 2"]
    own = int(m.ends[0])
    assert loose.longest(q, skip_end=own) == 1  # the cursor's own place is not a match
