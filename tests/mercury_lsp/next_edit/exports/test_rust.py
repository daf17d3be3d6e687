"""Rust's export machinery followed by a rename at the item: ``use`` trees (``pub use``, lists,
``as``, globs, ``self``/``super``/``crate``, the crate's own name from its tests), paths
``m::old`` / ``crate::m::Old``, and the paths that name another crate's or module's item."""

from __future__ import annotations

from tests.support.next_edit import follow

ROOT = "file:///work/itertools"
HOME = f"{ROOT}/src/adaptors/mod.rs"
LIB = f"{ROOT}/src/lib.rs"
SRC = "pub fn interleave(a: u8) -> u8 {\n    a\n}\n\npub struct Tuple;\n\nfn twice() -> u8 {\n    interleave(interleave(1))\n}\n"


def renamed(before: str = SRC, old: str = "interleave", new: str = "weave", kind: str = "fn"):
    return HOME, before, before.replace(f"pub {kind} {old}", f"pub {kind} {new}", 1)


def test_pub_use_in_the_crate_root_and_its_uses():
    lib = ("mod adaptors;\npub use crate::adaptors::{interleave, Tuple as T};\npub use self::adaptors::interleave as il;\n\n"
           "pub fn f() -> u8 {\n    interleave(2) + adaptors::interleave(3) + crate::adaptors::interleave(4) + il(5)\n}\n")
    texts, _ = follow(renamed(), (LIB, lib))
    assert texts[HOME] == SRC.replace("interleave", "weave")
    assert texts[LIB] == lib.replace("interleave", "weave")


def test_an_alias_keeps_its_name():
    other = f"{ROOT}/src/other.rs"
    text = "use crate::adaptors::interleave as mix;\n\nfn g() -> u8 {\n    mix(1)\n}\n"
    texts, _ = follow(renamed(), (other, text))
    assert texts[other] == text.replace("interleave as", "weave as")


def test_the_crates_tests_name_it_by_the_crate_and_through_its_reexport():
    lib = "mod adaptors;\npub use crate::adaptors::interleave;\n"
    test = f"{ROOT}/tests/quick.rs"
    text = ("use itertools::interleave;\nuse itertools::adaptors;\n\n#[test]\nfn t() {\n"
            "    interleave(1);\n    itertools::interleave(2);\n    adaptors::interleave(3);\n}\n")
    texts, _ = follow(renamed(), (LIB, lib), (test, text))
    assert texts[test] == text.replace("interleave", "weave")


def test_a_glob_brings_it_in_and_a_local_of_that_name_is_left():
    child = f"{ROOT}/src/adaptors/multi.rs"
    text = "use super::*;\n\nfn g() -> u8 {\n    interleave(1)\n}\n\nfn h() -> u8 {\n    let interleave = 2;\n    interleave\n}\n"
    texts, _ = follow(renamed(), (child, text))
    assert texts[child] == text.replace("    interleave(1)", "    weave(1)")


def test_a_struct_is_renamed_as_a_type_and_as_a_path_or_value():
    src = "pub struct Tuple;\n\nimpl Tuple {\n    pub fn new() -> Tuple {\n        Tuple\n    }\n}\n"
    lib = "mod adaptors;\nuse adaptors::Tuple;\n\nfn f() -> Vec<Tuple> {\n    vec![Tuple::new(), adaptors::Tuple]\n}\n"
    texts, _ = follow(renamed(src, "Tuple", "Pair", "struct"), (LIB, lib))
    assert texts[HOME] == src.replace("Tuple", "Pair")
    assert texts[LIB] == lib.replace("Tuple", "Pair")


def test_another_crates_or_modules_item_of_that_name_is_left():
    lib = ("mod adaptors;\nmod other;\nuse other::interleave;\nuse rayon::interleave as ri;\n\n"
           "fn f() -> u8 {\n    interleave(1) + other::interleave(2) + std::interleave(3)\n}\n")
    other = f"{ROOT}/src/other.rs"
    texts, _ = follow(renamed(), (LIB, lib), (other, "pub fn interleave(a: u8) -> u8 { a }\n"))
    assert texts[LIB] == lib


def test_a_function_inside_an_impl_is_not_a_module_item():
    src = "pub struct Tuple;\n\nimpl Tuple {\n    pub fn interleave(&self) {}\n}\n"
    lib = "mod adaptors;\npub use crate::adaptors::interleave;\n"
    texts, _ = follow((HOME, src, src.replace("fn interleave", "fn weave")), (LIB, lib))
    assert texts[LIB] == lib


def test_an_inline_module_reexports_it_and_the_tests_reach_it_there():
    lib = "mod adaptors;\n\npub mod structs {\n    pub use crate::adaptors::Tuple;\n}\n"
    test = f"{ROOT}/tests/specializations.rs"
    text = "use itertools::structs::Tuple;\n\nfn t(x: itertools::structs::Tuple) -> Tuple {\n    x\n}\n"
    texts, _ = follow(renamed(SRC, "Tuple", "Pair", "struct"), (LIB, lib), (test, text))
    assert texts[LIB] == lib.replace("Tuple", "Pair")
    assert texts[test] == text.replace("Tuple", "Pair")
