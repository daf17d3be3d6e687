"""Python's export machinery followed by a rename at the definition: ``__all__`` (lists, tuples,
``+=``, ``.append``/``.extend``), ``__init__`` re-exports (``from .m import old``, ``as x``, ``as
old``, ``*``), module attributes, the notes for strings, and the imports that are another
module's."""

from __future__ import annotations

from mercury_lsp.config import NextEditOptions
from tests.support.next_edit import follow

M = "file:///proj/pkg/m.py"
INIT = "file:///proj/pkg/__init__.py"
USER = "file:///proj/app.py"
SRC = "def old(x):\n    return x\n\n\ndef other():\n    return old(1)\n"


def renamed_in_m(extra: str = "", name: str = "old") -> tuple[str, str, str]:
    before = SRC.replace("old", name) + extra
    return M, before, before.replace(f"def {name}(", "def new(", 1)


def test_every_form_of_all_in_the_defining_module():
    extra = ('\n__all__ = ["old", "other"]\n__all__ += ["old"]\n__all__ += ("old",)\n'
             '__all__.append("old")\n__all__.extend(["old", "older"])\n__all__: tuple[str, ...] = ("old",)\n')
    texts, notes = follow(renamed_in_m(extra))
    assert texts[M] == (SRC + extra).replace("old", "new").replace('"newer"', '"older"')
    assert notes == []


def test_a_package_reexport_its_all_and_the_users_follow():
    init = 'from .m import old, other\n\n__all__ = ("old", "other")\n'
    user = "from pkg import old\n\nprint(old(2))\n"
    texts, _ = follow(renamed_in_m(), (INIT, init), (USER, user))
    assert texts[INIT] == init.replace("old", "new")
    assert texts[USER] == user.replace("old", "new")


def test_an_alias_keeps_its_name_and_only_the_imported_name_changes():
    init = "from .m import old as legacy\n\nold = 3\n__all__ = ['legacy']\n\nprint(legacy(old))\n"
    texts, _ = follow(renamed_in_m(), (INIT, init))
    assert texts[INIT] == init.replace("import old as", "import new as")


def test_an_explicit_reexport_under_the_same_name_renames_both():
    init = "from .m import (\n    old as old,\n    other as other,\n)\n"
    user = "import pkg\n\npkg.old(1)\n"
    texts, _ = follow(renamed_in_m(), (INIT, init), (USER, user))
    assert texts[INIT] == init.replace("old as old", "new as new")
    assert texts[USER] == user.replace("pkg.old", "pkg.new")


def test_a_star_import_passes_a_public_name_on():
    init = "from .m import *\n"
    user = "from pkg import old\nfrom pkg.m import other\n\nold(other())\n"
    texts, _ = follow(renamed_in_m(), (INIT, init), (USER, user))
    assert texts[INIT] == init
    assert texts[USER] == user.replace("old", "new")


def test_a_star_import_does_not_pass_a_private_name_unless_listed():
    init = "from .m import *\n"
    user = "from pkg import _old\n\n_old(1)\n"
    texts, _ = follow(renamed_in_m(name="_old"), (INIT, init), (USER, user))
    assert texts[USER] == user
    listed = renamed_in_m('\n__all__ = ["_old"]\n', name="_old")
    texts, _ = follow(listed, (INIT, init), (USER, user))
    assert texts[USER] == user.replace("_old", "new")
    assert texts[M].endswith('__all__ = ["new"]\n')


def test_module_attributes_through_every_kind_of_module_import():
    user = ("import pkg.m\nimport pkg.m as pm\nfrom pkg import m\nfrom . import pkg as p2\n\n"
            "pkg.m.old(1)\npm.old(2)\nm.old(3)\nm.other.old\nobj.old(4)\n")
    texts, _ = follow(renamed_in_m(), (USER, user))
    assert texts[USER] == user.replace("m.old(", "m.new(").replace("pm.old", "pm.new")


def test_an_importer_binding_it_leaves_the_imports_of_other_modules():
    user = "from pkg.m import old\nfrom json import old as o\nfrom pkg import m as old2\n\nold(o)\n"
    texts, _ = follow(renamed_in_m(), (USER, user))
    assert texts[USER] == user.replace("import old\n", "import new\n").replace("old(o)", "new(o)")


def test_another_modules_name_is_left_alone():
    other = "file:///proj/pkg/other.py"
    user = "from pkg.other import old\nfrom json import old as o\n\nold(o)\n"
    texts, _ = follow(renamed_in_m(), (other, "def old():\n    pass\n"), (USER, user))
    assert texts[USER] == user


def test_a_src_layout_package_imported_from_its_tests():
    home = "file:///proj/src/pkg/m.py"
    test = "file:///proj/tests/test_m.py"
    text = "from pkg.m import old\n\n\ndef test_old():\n    assert old(1) == 1\n"
    _, before, after = renamed_in_m()
    texts, _ = follow((home, before, after), (test, text))
    assert texts[test] == text.replace("import old", "import new").replace("assert old(", "assert new(")


def test_a_package_with_no_open_init_is_taken_to_reexport():
    user = "from pkg import old\n\nold(1)\n"
    texts, _ = follow(renamed_in_m(), (USER, user))
    assert texts[USER] == user.replace("old", "new")


def test_strings_that_name_it_are_notes_not_edits():
    user = ('import pkg.m\nfrom unittest import mock\n\nf = getattr(pkg.m, "old")\nhasattr(pkg.m, "old", 1)\n'
            'with mock.patch("pkg.m.old"):\n    pass\nlabel = "old"\n')
    texts, notes = follow(renamed_in_m(), (USER, user))
    assert texts[USER] == user
    assert [(user[n.start:n.end], n.rule) for n in notes] == [("old", "NE101"), ("old", "NE101"),
                                                              ("pkg.m.old", "NE101")]
    assert all("'new'" in n.message for n in notes)


def test_notes_go_with_the_rename_rule():
    user = 'import pkg.m\n\ngetattr(pkg.m, "old")\n'
    texts, notes = follow(renamed_in_m(), (USER, user), options=NextEditOptions(disabled_rules=("NE101",)))
    assert notes == []


def test_a_method_or_a_local_is_not_exported():
    cls = "class K:\n    def old(self):\n        return 1\n\n__all__ = ['old']\n"
    texts, _ = follow((M, cls, cls.replace("def old", "def new")))
    assert "__all__ = ['old']" in texts[M]


def test_the_answer_carries_the_notes_in_the_clients_encoding():
    import msgspec

    from mercury_lsp.next_edit import DocState, NextEditQuery, predict, to_result
    from mercury_lsp.schema import NextEditResult
    from mercury_lsp.syntax import Grammars
    from mercury_lsp.text import PositionEncoding

    _, before, after = renamed_in_m()
    user = 'import pkg.m\n\nlabel = "é"; f = getattr(pkg.m, "old")\n'
    docs = (DocState(M, after, "python", 3, (before,), 1.0, (1.0,)), DocState(USER, user, "python", 5))
    q = NextEditQuery(docs, M, 0, PositionEncoding.UTF8)
    result = to_result(predict(q, None, Grammars()), q, "none")
    wire = msgspec.json.decode(msgspec.json.encode(result), type=NextEditResult)
    (note,) = wire.notes
    col = len('label = "é"; f = getattr(pkg.m, "'.encode())
    assert (note.uri, note.rule, note.document_version) == (USER, "NE101", 5)
    assert (note.range.start.line, note.range.start.character, note.range.end.character) == (2, col, col + 3)
    assert b'"notes":[{"uri":' in msgspec.json.encode(result)


def test_a_module_bound_by_a_call_that_names_it():
    user = ('import importlib\nimport pytest\n\nm1 = importlib.import_module("pkg.m")\nm2 = pytest.importorskip("pkg.m")\n'
            'm3 = importlib.import_module(name)\n\nm1.old(1)\nm2.old(2)\nm3.old(3)\n')
    texts, _ = follow(renamed_in_m(), (USER, user))
    assert texts[USER] == user.replace("m1.old", "m1.new").replace("m2.old", "m2.new")


def test_a_signature_change_reaches_the_calls_of_an_alias():
    before = "def old(x):\n    return x\n\n\nold(1)\n"
    after = "def old(x, y):\n    return x\n\n\nold(1, 2)\n"
    user = "from pkg.m import old as legacy\n\nlegacy(3)\nother.legacy(4)\n"
    texts, _ = follow((M, before, after), (USER, user), rule="NE102")
    assert texts[USER] == user.replace("legacy(3)", "legacy(3, 2)")
