"""Endings of the lines that start like a half-typed one (``rules.complete.endings``)."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState
from mercury_lsp.next_edit.rules.complete.endings import same_shape
from mercury_lsp.next_edit.tree import parse_all
from mercury_lsp.syntax import Grammars

G = Grammars()


def test_same_shape_needs_a_shared_token_and_the_same_indentation():
    src = "class A:\n    def f(self):\n        self.a = 1\n    b = 2\n    c\n"
    doc = DocState("file:///a.py", src, "python", 1)
    (parsed,) = parse_all((doc,), G)
    line = (src.index("    c\n"), src.index("    c\n") + len("    c"))
    assert same_shape(parsed, line, line[1], G.language("python")) == []  # 'c': too few tokens
    src2 = src.replace("    c\n", "    self.c\n")
    doc2 = DocState("file:///a.py", src2, "python", 1)
    (parsed2,) = parse_all((doc2,), G)
    start = src2.index("    self.c\n")
    assert same_shape(parsed2, (start, start + len("    self.c")), start + len("    self.c"),
                      G.language("python")) == []  # 'self.a = 1' is deeper: another block
