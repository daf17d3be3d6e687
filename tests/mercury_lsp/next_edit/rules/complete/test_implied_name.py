"""NE504 implied-name: a word cut short is finished to the name the edit implies."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.complete import implied_name
from tests.support import memory as mem_support
from tests.support import next_edit as ne

SHAPE = ne.doc("file:///src/shape.rs", "pub enum Shape {\n    Circle(f64),\n    Square { side: f64 },\n}\n\n"
               "impl Shape {\n    pub fn area(&self) -> f64 {\n        0.0\n    }\n}\n", grammar="rust")
DRAW = "use crate::shape::Shape;\n\nfn draw(s: Shape) {\n    match s {\n        Shape::Circle(r) => circle(r),\n    }\n}\n"


def edits(*docs, cursor):
    return ne.rule_edits(implied_name.RULE, *docs, cursor=cursor)


def test_an_enum_variant_defined_in_another_file_finishes_the_word_after_its_type():
    after = DRAW.replace("        Shape::Circle(r) => circle(r),\n", "        Shape::Circle(r) => circle(r),\n        Shape::Sq")
    d = ne.doc("file:///src/draw.rs", after, (DRAW,), (1.0,), grammar="rust")
    found = edits(d, SHAPE, cursor=after.index("Shape::Sq") + len("Shape::Sq"))
    assert [(p.start, p.new_text) for p in found] == [(after.index("Shape::Sq") + len("Shape::Sq"), "uare")]
    assert edits(d, SHAPE, cursor=after.index("Shape::Sq") + len("Shape::S")) == []  # 'S' is too short


def test_a_name_the_edits_just_introduced_wins_over_the_document_s_older_ones():
    stats0 = "def compute_mean(xs):\n    return sum(xs) / len(xs)\n"
    stats1 = stats0 + "\n\ndef compute_median(xs):\n    return sorted(xs)[len(xs) // 2]\n"
    stats = ne.doc("file:///stats.py", stats1, (stats0,), (1.0,))
    src = "from stats import compute_mean\n\n\ndef report(xs):\n    print(compute_mean(xs))\n"
    after = src.replace("    print(compute_mean(xs))\n", "    print(compute_mean(xs))\n    print(compute_me")
    d = ne.doc("file:///report.py", after, (src,), (2.0,))
    found = edits(d, stats, cursor=after.rindex("compute_me") + len("compute_me"))
    assert [p.new_text for p in found] == ["dian"]


def test_a_go_package_s_exported_names_finish_the_word_after_it():
    pkg = ne.doc("file:///shape/shape.go", "package shape\n\nfunc NewSquare(side float64) Square {\n"
                 "\treturn Square{side}\n}\n\nfunc NewCircle(r float64) Circle {\n\treturn Circle{r}\n}\n", grammar="go")
    src = "package main\n\nimport \"example.com/shape\"\n\nfunc main() {\n\ts := 1\n\t_ = s\n}\n"
    after = src.replace("\t_ = s\n", "\t_ = s\n\tq := shape.NewSq")
    d = ne.doc("file:///main.go", after, (src,), (1.0,), grammar="go")
    found = edits(d, pkg, cursor=after.index("NewSq") + len("NewSq"))
    assert [p.new_text for p in found] == ["uare"]


def test_the_identifier_the_word_replaced_follows_in_its_function():
    src = ("def run(items):\n    result = collect(items)\n    check(result)\n    return result\n\n\n"
           "def other():\n    return result\n")
    defined = src.replace("    result = collect(items)\n", "    result = collect(items)\n    summary = digest(items)\n")
    typing = defined.replace("    check(result)\n", "    check(summ)\n")
    d = ne.doc("file:///run.py", typing, (defined, src), (2.0, 1.0))
    found = edits(d, cursor=typing.index("summ)") + 4)
    out = ne.applied(typing, found, d.uri)
    assert "    check(summary)\n    return summary\n" in out
    assert "    result = collect(items)\n" in out  # its binding stays
    assert "def other():\n    return result\n" in out


def test_complete_names_ambiguous_words_and_prose_are_left_alone():
    stats0 = "def compute_mean(xs):\n    return 0\n"
    stats1 = stats0 + "\n\ndef compute_median(xs):\n    return 1\n\n\ndef compute_mode(xs):\n    return 2\n"
    stats = ne.doc("file:///stats.py", stats1, (stats0,), (1.0,))
    src = "def report(xs):\n    pass\n"
    for typed in ("    compute_m", "    # compute_me", "    xs"):
        after = src.replace("    pass\n", "    pass\n" + typed)
        d = ne.doc("file:///report.py", after, (src,), (2.0,))
        assert edits(d, stats, cursor=len(after)) == [], typed


# ---------------------------------------------------------------- the repository memory (tier 4)
SHAPE_RS = "pub enum Shape {\n    Circle(f64),\n    Square { side: f64 },\n}\n"


def test_a_variant_defined_in_a_file_no_editor_shows_comes_from_the_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("MERCURY_LSP_CACHE", str(tmp_path / "cache"))
    ws = tmp_path / "ws"
    mem_support.write(ws, {"src/shape.rs": SHAPE_RS, "src/lib.rs": "pub mod shape;\n"})
    mem = mem_support.built(ws.resolve())
    try:
        after = DRAW.replace("        Shape::Circle(r) => circle(r),\n",
                             "        Shape::Circle(r) => circle(r),\n        Shape::Sq")
        d = ne.doc((ws / "src/draw.rs").resolve().as_uri(), after, (DRAW,), (1.0,), grammar="rust")
        cursor = after.index("Shape::Sq") + len("Shape::Sq")
        assert edits(d, cursor=cursor) == []  # the open documents alone do not define Shape
        found = ne.rule_edits(implied_name.RULE, d, cursor=cursor, memory=ne.recall(mem, d))
        assert [(p.start, p.new_text) for p in found] == [(cursor, "uare")]
    finally:
        mem.close()


CLIENT_TS = """\
import { fetchWith } from "./http";

export const DEFAULT_TIMEOUT_MS = 5000;

export function getUser(url: string) {
  return fetchWith(url, DEFAULT_TIMEOUT_MS);
}
"""


def test_the_memory_s_continuations_give_the_name_the_repository_writes_there(tmp_path, monkeypatch):
    monkeypatch.setenv("MERCURY_LSP_CACHE", str(tmp_path / "cache"))
    ws = tmp_path / "ws"
    mem_support.write(ws, {"src/client.ts": CLIENT_TS})
    mem = mem_support.built(ws.resolve())
    try:
        before = 'import { fetchWith } from "./http";\n\nexport function getOrder(url: string) {\n}\n'
        after = before.replace("{\n}", "{\n  return fetchWith(url, DEFAULT_T\n}")
        d = ne.doc((ws / "src/orders.ts").resolve().as_uri(), after, (before,), (1.0,), grammar="typescript")
        cursor = after.index("DEFAULT_T") + len("DEFAULT_T")
        assert edits(d, cursor=cursor) == []
        found = ne.rule_edits(implied_name.RULE, d, cursor=cursor, memory=ne.recall(mem, d))
        assert [p.new_text for p in found] == ["IMEOUT_MS"]
    finally:
        mem.close()


def test_a_python_module_attribute_the_repository_calls_comes_from_the_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("MERCURY_LSP_CACHE", str(tmp_path / "cache"))
    ws = tmp_path / "ws"
    mem_support.write(ws, {"pkg/a.py": "import logging\n\nlogger = logging.getLogger(__name__)\n",
                           "pkg/b.py": "import logging\n\nlogger = logging.getLogger(__name__)\n"})
    mem = mem_support.built(ws.resolve())
    try:
        before = "import logging\n\n"
        after = before + "logger = logging.getLo"
        d = ne.doc((ws / "pkg/c.py").resolve().as_uri(), after, (before,), (1.0,))
        assert edits(d, cursor=len(after)) == []
        found = ne.rule_edits(implied_name.RULE, d, cursor=len(after), memory=ne.recall(mem, d))
        assert [p.new_text for p in found] == ["gger"]
        # a name the repository writes there that does not start with what was typed is no candidate
        mem_support.write(ws, {"pkg/d.py": "import logging\n\nlogger = logging.getLevelName(10)\n"})
        mem.changed(ws / "pkg/d.py")
        assert mem.settle(mem_support.SETTLE_S)
        words = ne.recall(mem, d).words(d.uri, after, after.index("getLo"), len(after))
        assert set(words) == {"getLogger"}  # getLevelName does not start with the typed 'getLo'
    finally:
        mem.close()
