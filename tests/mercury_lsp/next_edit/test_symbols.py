"""mercury_lsp/next_edit/symbols.py: a query file per grammar, and query files that inherit
another language's patterns."""

from __future__ import annotations

import pytest

from mercury_lsp.next_edit import DocState
from mercury_lsp.syntax import Grammars

G = Grammars()


def test_every_grammar_has_a_query_file_that_compiles_and_finds_each_kind_of_symbol():
    from mercury_lsp.next_edit.symbols import CAPTURES, captures
    from mercury_lsp.next_edit.tree import parse_all
    from mercury_lsp.syntax import GRAMMARS

    samples = {
        "python": "import os\n\ndef f(a):\n    return g(a)\n",
        "javascript": "import x from 'y';\nfunction f(a) { return g(a); }\n",
        "typescript": "import x from 'y';\nfunction f(a: number) { return g(a); }\n",
        "tsx": "import x from 'y';\nfunction f(a: number) { return g(a); }\n",
        "go": "package p\nimport \"os\"\nfunc f(a int) int { return g(a) }\n",
        "rust": "use std::io;\nfn f(a: u8) -> u8 { g(a) }\n",
        "java": "import a.B;\nclass C { int f(int a) { return g(a); } }\n",
        "c": "#include <stdio.h>\nint f(int a) { return g(a); }\n",
        "cpp": "#include <vector>\nint f(int a) { return g(a); }\n",
    }
    assert set(samples) == set(GRAMMARS)
    for grammar, src in samples.items():
        parsed, = parse_all([DocState(f"file:///a.{grammar}", src, grammar, 1)], G)
        got = captures(G, parsed)
        names = {k: [parsed.b.node_text(n) for n in v] for k, v in got.items()}
        assert all(names[k] for k in CAPTURES), (grammar, names)
        assert "f" in names["definition"] and "a" in names["parameter"] and "g" in names["call"], (grammar, names)


def test_a_query_file_inherits_another_languages_patterns(tmp_path, monkeypatch):
    from mercury_lsp.next_edit import symbols
    from mercury_lsp.next_edit.tree import parse_all

    assert symbols.query_source("tsx").startswith(symbols.query_source("typescript"))
    src = "#include <vector>\nusing std::vector;\nclass Box { };\nint f(int a) { return g(a); }\n"
    parsed, = parse_all([DocState("file:///a.cpp", src, "cpp", 1)], G)
    names = {k: [parsed.b.node_text(n) for n in v] for k, v in symbols.captures(G, parsed).items()}
    assert {"Box", "f"} <= set(names["definition"])  # C++'s own pattern and C's
    assert len(names["import"]) == 2  # the include (C's) and the using declaration (C++'s)
    (tmp_path / "x.scm").write_text("; X\n; inherits: nothing_here\n(identifier) @reference\n")
    monkeypatch.setattr(symbols, "QUERY_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match="x.scm: ; inherits: nothing_here"):
        symbols.query_source("x")
