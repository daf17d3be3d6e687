"""NE107 removed-export: a name deleted or no longer imported leaves its module's export list."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.follow import removed_export
from mercury_lsp.next_edit.rules.follow.deleted import deleted_declarations
from mercury_lsp.next_edit.rules.follow.removed_export import item_span
from tests.support.next_edit import applied_all, ask, edited, rule_edits

INIT = ("from .cache import Cache\nfrom .errors import ExpiredError\n\n"
        "__all__ = (\n    'Cache',\n    'cachedmethod',\n    'ExpiredError'\n)\n\n\ndef cachedmethod(cache):\n    return cache\n")


def test_a_name_no_longer_imported_leaves_all():
    after = INIT.replace("from .errors import ExpiredError\n", "")
    preds = ask(edited("file:///pkg/__init__.py", after, (INIT,)))
    assert [p.rule for p in preds] == ["NE107"]
    assert applied_all(after, preds) == after.replace("    'cachedmethod',\n    'ExpiredError'\n", "    'cachedmethod'\n")


def test_a_deleted_definition_leaves_all_and_an_export_clause():
    src = "__all__ = ['keep', 'drop', 'other']\n\n\ndef drop():\n    pass\n\n\ndef keep():\n    pass\n"
    after = src.replace("def drop():\n    pass\n\n\n", "")
    got = applied_all(after, rule_edits(removed_export.RULE, edited("file:///m.py", after, (src,))))
    assert got == after.replace("'drop', ", "")
    js = ("function parseThing(s) {\n  return s;\n}\n\nfunction helperName(s) {\n  return s;\n}\n\n"
          "export {\n  parseThing,\n  helperName,\n};\nexport { helperName as alias } from './other.js';\n")
    after = js.replace("function helperName(s) {\n  return s;\n}\n\n", "")
    assert deleted_declarations(js, after) == {"helperName": 2}  # 'function', not 'func' + 'tion'
    got = applied_all(after, rule_edits(removed_export.RULE, edited("file:///m.js", after, (js,), "javascript")))
    assert got == after.replace("  helperName,\n", "")  # the re-export from another module stays
    solo = "const a = 1;\nfunction solo() {}\n\nexport { solo };\n"
    after = solo.replace("function solo() {}\n", "")
    got = applied_all(after, rule_edits(removed_export.RULE, edited("file:///s.js", after, (solo,), "javascript")))
    assert got == "const a = 1;\n\n"  # the statement exporting only it, whole


def test_a_name_still_defined_or_imported_stays_exported():
    src = "from .a import thing\nfrom .b import thing\n\n__all__ = ['thing']\n"
    after = src.replace("from .a import thing\n", "")  # still imported from .b
    assert rule_edits(removed_export.RULE, edited("file:///pkg/__init__.py", after, (src,))) == []
    js = "export function only() {}\nfunction only2() {}\n\nexport { only2 };\n"
    after = js.replace("export function only() {}\n", "")
    assert rule_edits(removed_export.RULE, edited("file:///m.js", after, (js,), "javascript")) == []


def test_item_span_takes_one_comma():
    text = "x = ['a', 'b', 'c']\n"
    assert text[slice(*item_span(text, 5, 8))] == "'a', "
    assert text[slice(*item_span(text, 15, 18))] == ", 'c'"
    one = "x = ['a']\n"
    assert one[slice(*item_span(one, 5, 8))] == "'a'"


def test_an_import_regrouped_over_new_lines_takes_nothing_out_of_all():
    # cattrs: the import line rewritten into several while the names move: 'GenConverter' may come
    # back a moment later; only an import deleted outright takes its name out of __all__
    src = "from .converters import BaseConverter, GenConverter\n\n__all__ = [\n    'BaseConverter',\n    'GenConverter',\n]\n"
    after = src.replace("from .converters import BaseConverter, GenConverter\n",
                        "from .converters import BaseConverter\nfrom .errors import (\n    BaseValidationError,\n)\n")
    assert rule_edits(removed_export.RULE, edited("file:///pkg/__init__.py", after, (src,))) == []
