"""NE209 extended-list: names added to one definition's list of names join the sibling lists
that lack them."""

from __future__ import annotations

from mercury_lsp.config import NextEditOptions
from mercury_lsp.next_edit.rules.repeat import extended_list
from tests.support.next_edit import applied, doc, rule_edits

RUST = """#[derive(Clone, Eq, PartialEq)]
pub struct Number {
    n: N,
}

#[derive(Copy, Clone, PartialEq)]
enum N {
    PosInt(u64),
    Float(f64),
}

#[derive(Debug)]
pub struct Other;
"""


def test_names_added_to_a_derive_join_a_sibling_derive_that_lacks_them_rust():
    after = RUST.replace("#[derive(Clone, Eq, PartialEq)]", "#[derive(Clone, PartialEq, Eq, Hash)]")
    d = doc("file:///number.rs", after, (RUST,), (1.0,), grammar="rust")
    preds = rule_edits(extended_list.RULE, d, cursor=after.index("Hash)]") + 6)
    # the sibling lacks Eq and Hash: both, in the example's order; Debug alone shares nothing
    assert applied(after, preds, d.uri) == after.replace("#[derive(Copy, Clone, PartialEq)]",
                                                         "#[derive(Copy, Clone, PartialEq, Eq, Hash)]")
    assert [p.rule or extended_list.RULE.code for p in preds] == ["NE209"]


def test_a_name_taken_out_or_a_list_of_more_than_names_is_no_extension_rust():
    taken = RUST.replace("#[derive(Clone, Eq, PartialEq)]", "#[derive(Clone, Hash)]")
    assert rule_edits(extended_list.RULE, doc("file:///n.rs", taken, (RUST,), (1.0,), grammar="rust")) == []
    generic = RUST.replace("#[derive(Copy, Clone, PartialEq)]", "#[derive(Copy, Clone, PartialEq<N>)]")
    after = generic.replace("#[derive(Clone, Eq, PartialEq)]", "#[derive(Clone, Eq, PartialEq, Hash)]")
    assert rule_edits(extended_list.RULE, doc("file:///n.rs", after, (generic,), (1.0,), grammar="rust")) == []


PY = """class Reader(Base, Closeable):
    pass


class Writer(Base, Closeable):
    pass


class Plain(object):
    pass
"""


def test_a_base_added_to_one_class_joins_its_sibling_classes_and_a_flood_offers_nothing_python():
    after = PY.replace("class Reader(Base, Closeable):", "class Reader(Base, Closeable, Generic[T]):")
    # a subscripted base is no plain name: not read as a list of names
    assert rule_edits(extended_list.RULE, doc("file:///io.py", after, (PY,), (1.0,))) == []
    after = PY.replace("class Reader(Base, Closeable):", "class Reader(Base, Closeable, ContextManager):")
    d = doc("file:///io.py", after, (PY,), (1.0,))
    preds = rule_edits(extended_list.RULE, d, cursor=after.index("ContextManager"))
    assert applied(after, preds, d.uri) == after.replace("class Writer(Base, Closeable):",
                                                         "class Writer(Base, Closeable, ContextManager):")
    many = PY + "".join(f"\n\nclass C{i}(Base, Closeable):\n    pass\n" for i in range(3))
    after = many.replace("class Reader(Base, Closeable):", "class Reader(Base, Closeable, ContextManager):")
    capped = NextEditOptions(repeat_max_sites=3)
    assert rule_edits(extended_list.RULE, doc("file:///io.py", after, (many,), (1.0,)), options=capped) == []


def test_an_interface_added_to_one_implements_list_joins_the_others_in_another_document_typescript():
    src = "export class Memory implements Store, Closable {\n}\n"
    after = src.replace("Store, Closable {", "Store, Closable, Disposable {")
    other = doc("file:///disk.ts", "export class Disk implements Store, Closable {\n}\n", grammar="typescript")
    d = doc("file:///memory.ts", after, (src,), (1.0,), grammar="typescript")
    preds = rule_edits(extended_list.RULE, d, other, cursor=after.index("Disposable"))
    assert applied(other.text, preds, other.uri) == "export class Disk implements Store, Closable, Disposable {\n}\n"
    assert preds[0].confidence < extended_list.RULE.confidence  # another document ranks below


def test_each_added_name_goes_where_the_example_has_it():
    assert extended_list.extended(("Clone", "PartialEq"), ("Debug", "Clone", "PartialEq")) == [
        "Debug", "Clone", "PartialEq"]
    assert extended_list.extended(("Copy", "Clone", "PartialEq"), ("Clone", "PartialEq", "Eq", "Hash")) == [
        "Copy", "Clone", "PartialEq", "Eq", "Hash"]
    assert extended_list.extended(("A", "C"), ("A", "B", "X", "D")) == ["A", "B", "X", "D", "C"]
