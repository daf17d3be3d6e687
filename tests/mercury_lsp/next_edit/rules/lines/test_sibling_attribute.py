"""NE305 sibling-attribute: an attribute line put above one definition goes above its siblings."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.lines import sibling_attribute
from tests.support import next_edit as ne

RS = """impl Error {
    #[cfg(feature = "std")]
    pub fn chain(&self) -> Chain {
        self.inner.chain()
    }

    pub fn context<C>(self, context: C) -> Self {
        self
    }

    #[cfg(feature = "std")]
    pub fn root_cause(&self) -> &dyn StdError {
        self.chain().last().unwrap()
    }

    #[cfg(test)]
    pub fn probe(&self) -> bool {
        true
    }

    #[cfg(feature = "std")]
    pub fn is<E>(&self) -> bool {
        false
    }

    #[cfg(feature = "std")]
    pub fn downcast<E>(self) -> Result<E, Self> {
        Err(self)
    }
}
"""
ATTR = '    #[cfg_attr(doc_cfg, doc(cfg(feature = "std")))]\n'


def edits(*docs):
    return ne.rule_edits(sibling_attribute.RULE, *docs)


def test_an_attribute_under_a_cfg_goes_under_the_next_siblings_with_that_cfg():
    after = RS.replace('    #[cfg(feature = "std")]\n    pub fn chain', '    #[cfg(feature = "std")]\n' + ATTR
                       + "    pub fn chain", 1)
    d = ne.doc("file:///error.rs", after, (RS,), (1.0,), grammar="rust")
    out = ne.applied(after, edits(d), d.uri)
    assert out.count(ATTR) == 3  # the example and the two nearest siblings below it
    assert '    #[cfg(feature = "std")]\n' + ATTR + "    pub fn root_cause" in out
    assert '    #[cfg(feature = "std")]\n' + ATTR + "    pub fn is<E>" in out
    assert "pub fn downcast" in out and ATTR + "    pub fn downcast" not in out  # beyond the nearest two
    assert ATTR + "    pub fn probe" not in out and ATTR + "    pub fn context" not in out  # another shape


def test_siblings_above_the_example_or_with_the_attribute_already_are_passed_over():
    base = RS.replace('    #[cfg(feature = "std")]\n    pub fn is<E>', '    #[cfg(feature = "std")]\n' + ATTR
                      + "    pub fn is<E>")
    after = base.replace('    #[cfg(feature = "std")]\n    pub fn root_cause',
                         '    #[cfg(feature = "std")]\n' + ATTR + "    pub fn root_cause")
    d = ne.doc("file:///error.rs", after, (base,), (1.0,), grammar="rust")
    out = ne.applied(after, edits(d), d.uri)
    assert ATTR + "    pub fn downcast" in out and ATTR + "    pub fn chain" not in out
    assert out.count(ATTR) == 3


PY = '''class TestFunctional:
    @pytest.mark.parametrize("cls", [C2, C2Slots])
    def test_fields(self, cls):
        assert fields(cls)

    @pytest.mark.parametrize("cls", [C1, C1Slots])
    def test_asdict(self, cls):
        assert asdict(cls(1, 2))

    @given(booleans())
    def test_renaming(self, slots):
        assert slots in (True, False)

    def helper(self):
        return 1
'''


def test_a_decorator_above_a_parametrised_test_goes_above_the_next_parametrised_one():
    after = PY.replace('    @pytest.mark.parametrize("cls", [C2',
                       '    @pytest.mark.benchmark()\n    @pytest.mark.parametrize("cls", [C2')
    d = ne.doc("file:///test_functional.py", after, (PY,), (1.0,))
    found = edits(d)
    assert ne.applied(after, found, d.uri) == after.replace(
        '    @pytest.mark.parametrize("cls", [C1', '    @pytest.mark.benchmark()\n    @pytest.mark.parametrize("cls", [C1')


def test_with_no_attribute_beside_it_only_the_same_method_of_a_sibling_class_follows():
    src = ("class A:\n    def __init__(self):\n        pass\n\n    def run(self):\n        pass\n\n\n"
           "class B:\n    def __init__(self):\n        pass\n\n    def stop(self):\n        pass\n")
    after = src.replace("class A:\n    def __init__", "class A:\n    @override\n    def __init__")
    d = ne.doc("file:///m.py", after, (src,), (1.0,))
    assert ne.applied(after, edits(d), d.uri) == after.replace(
        "class B:\n    def __init__", "class B:\n    @override\n    def __init__")


def test_other_lines_than_attributes_are_not_this_rule_s():
    after = PY.replace("    def helper(self):\n", "    # helpers\n    def helper(self):\n")
    d = ne.doc("file:///test_functional.py", after, (PY,), (1.0,))
    assert edits(d) == []


def test_a_rust_item_gated_by_the_same_attribute_matches_whatever_its_kind_and_depth():
    src = RS + '\n#[cfg(feature = "std")]\nimpl From<io::Error> for Error {\n    fn from(e: io::Error) -> Self {\n' \
               '        Error::new(e)\n    }\n}\n\nimpl Display for Error {}\n'
    after = src.replace('    #[cfg(feature = "std")]\n    pub fn downcast', '    #[cfg(feature = "std")]\n' + ATTR
                        + "    pub fn downcast")
    d = ne.doc("file:///error.rs", after, (src,), (1.0,), grammar="rust")
    out = ne.applied(after, edits(d), d.uri)
    assert '#[cfg(feature = "std")]\n' + ATTR.strip() + "\nimpl From<io::Error>" in out
    assert ATTR.strip() + "\nimpl Display" not in out


def test_a_half_typed_attribute_is_not_repeated_rust_and_python():
    after = RS.replace('    #[cfg(feature = "std")]\n    pub fn chain', '    #[cfg(feature = "std")]\n'
                       + '    #[cfg_attr(doc_cfg, doc(cfg(feature\n' + "    pub fn chain", 1)
    assert edits(ne.doc("file:///error.rs", after, (RS,), (1.0,), grammar="rust")) == []
    after = PY.replace('    @pytest.mark.parametrize("cls", [C2', '    @pytest.mark\n    @pytest.mark.parametrize("cls", [C2')
    assert edits(ne.doc("file:///test_functional.py", after, (PY,), (1.0,))) == []


NOM = """#[inline]
pub fn be_u128(i: &[u8]) -> u128 {
    read(i)
}

#[inline]
pub fn be_i8(i: &[u8]) -> i8 {
    read(i)
}

#[inline]
pub fn be_i128(i: &[u8]) -> i128 {
    read(i)
}
"""


def test_an_attribute_naming_part_of_its_definition_goes_to_the_siblings_named_so_rust():
    after = NOM.replace("#[inline]\npub fn be_u128", "#[cfg(stable_i128)]\n#[inline]\npub fn be_u128", 1)
    d = ne.doc("file:///nom.rs", after, (NOM,), (1.0,), grammar="rust")
    out = ne.applied(after, edits(d), d.uri)
    # '128' is what the attribute is about: be_i128 gets it, be_i8 (nearer) does not
    assert "#[cfg(stable_i128)]\n#[inline]\npub fn be_i128" in out and "#[cfg(stable_i128)]\n#[inline]\npub fn be_i8" not in out


TESTS = """@pytest.mark.slow
def test_numpy_array():
    pass


@pytest.mark.slow
def test_list():
    pass


@pytest.mark.slow
def test_numpy_matrix():
    pass
"""


def test_a_decorator_naming_part_of_its_test_goes_to_the_tests_named_so_python():
    after = TESTS.replace("@pytest.mark.slow\ndef test_numpy_array", "@requires_numpy\n@pytest.mark.slow\ndef test_numpy_array", 1)
    d = ne.doc("file:///test_m.py", after, (TESTS,), (1.0,))
    out = ne.applied(after, edits(d), d.uri)
    assert "@requires_numpy\n@pytest.mark.slow\ndef test_numpy_matrix" in out
    assert "@requires_numpy\n@pytest.mark.slow\ndef test_list" not in out
