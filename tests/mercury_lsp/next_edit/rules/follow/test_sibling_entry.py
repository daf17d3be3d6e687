"""NE114 sibling-entry: a member added beside its siblings joins the other lists of them."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.follow import sibling_entry
from tests.support import next_edit as ne

GO = """package m

const (
	mCONNECT methodTyp = 1 << iota
	mDELETE
	mGET
	mHEAD
	mTRACE
	mSTUB

	mALL methodTyp = mCONNECT | mDELETE | mGET | mHEAD |
		mTRACE
)

var methodMap = map[string]methodTyp{
	"CONNECT": mCONNECT,
	"DELETE":  mDELETE,
	"GET":     mGET,
	"HEAD":    mHEAD,
	"TRACE":   mTRACE,
}
"""


def edits(*docs, cursor=0):
    return ne.rule_edits(sibling_entry.RULE, *docs, cursor=cursor)


def test_a_new_const_joins_the_map_and_the_mask_of_its_siblings_aligned():
    after = GO.replace("\tmTRACE\n\tmSTUB", "\tmTRACE\n\tmUNLINK\n\tmSTUB")
    d = ne.doc("file:///tree.go", after, (GO,), (1.0,), grammar="go")
    out = ne.applied(after, edits(d), d.uri)
    assert "\t\tmTRACE | mUNLINK\n)" in out
    assert '\t"TRACE":   mTRACE,\n\t"UNLINK":  mUNLINK,\n}' in out


def test_a_member_already_listed_is_not_added_again():
    after = GO.replace("\tmTRACE\n\tmSTUB", "\tmTRACE\n\tmUNLINK\n\tmSTUB").replace(
        '\t"TRACE":   mTRACE,\n', '\t"TRACE":   mTRACE,\n\t"UNLINK":  mUNLINK,\n').replace(
        "\t\tmTRACE\n", "\t\tmTRACE | mUNLINK\n")
    before = after.replace("\tmUNLINK\n\tmSTUB", "\tmSTUB")
    d = ne.doc("file:///tree.go", after, (before,), (1.0,), grammar="go")
    assert edits(d) == []


PY_INIT = """__all__ = ['Markup', 'soft_unicode', 'escape']

try:
    from markupsafe._speedups import escape, soft_unicode
except ImportError:
    from markupsafe._native import escape, soft_unicode
"""


def test_a_name_added_to_all_joins_the_imports_of_its_siblings_in_place():
    after = PY_INIT.replace("'escape']", "'escape', 'escape_silent']")
    d = ne.doc("file:///markupsafe/__init__.py", after, (PY_INIT,), (1.0,))
    tests = ne.doc("file:///tests.py", "from markupsafe import Markup, escape\n")
    found = edits(d, tests)
    assert ne.applied(after, found, d.uri) == after.replace("import escape, soft_unicode",
                                                            "import escape, escape_silent, soft_unicode")
    assert ne.applied(tests.text, found, tests.uri) == "from markupsafe import Markup, escape, escape_silent\n"
    assert all(p.confidence < sibling_entry.RULE.confidence for p in found if p.uri == tests.uri)


def test_an_import_list_gives_its_name_only_to_the_import_lists_of_its_own_document():
    before = "try:\n    from ._speedups import escape, soft_unicode\nexcept ImportError:\n" \
             "    from ._native import escape, soft_unicode\n"
    after = before.replace("_speedups import escape,", "_speedups import escape, escape_silent,")
    d = ne.doc("file:///pkg/__init__.py", after, (before,), (1.0,))
    other = ne.doc("file:///pkg/cli.py", "from . import escape, soft_unicode\n")
    found = edits(d, other)
    assert [p.uri for p in found] == [d.uri] and found[0].new_text.strip(", ") == "escape_silent"


def test_lists_of_a_few_of_many_siblings_and_entries_with_their_own_values_are_left_alone():
    names = [f"name_{i:02}" for i in range(10)]
    before = "__all__ = [" + ", ".join(f'"{n}"' for n in names) + "]\n" \
             "from .a import name_00, name_01, name_02\n" \
             "LIMITS = {" + ", ".join(f'"{n}": {i}' for i, n in enumerate(names)) + "}\n"
    after = before.replace('"name_09"]', '"name_09", "name_10"]')
    d = ne.doc("file:///pkg/__init__.py", after, (before,), (1.0,))
    assert edits(d) == []  # three of ten siblings; a map whose values differ per entry


def test_an_edit_that_rewrote_words_is_no_new_member():
    after = GO.replace("\tmSTUB\n", "\tmSTUBS\n")
    d = ne.doc("file:///tree.go", after, (GO,), (1.0,), grammar="go")
    assert edits(d) == []


PY_SUITE = """def suite():
    from jinja2.testsuite import ext, filters, tests, loader
    suite = unittest.TestSuite()
    suite.addTest(ext.suite())
    suite.addTest(filters.suite())
    suite.addTest(tests.suite())
    suite.addTest(loader.suite())
    return suite
"""


def test_a_name_imported_beside_its_siblings_joins_the_run_of_statements_that_use_them():
    after = PY_SUITE.replace("tests, loader\n", "tests, loader, security\n")
    d = ne.doc("file:///testsuite/__init__.py", after, (PY_SUITE,), (1.0,))
    assert ne.applied(after, edits(d), d.uri) == after.replace(
        "    suite.addTest(loader.suite())\n", "    suite.addTest(loader.suite())\n    suite.addTest(security.suite())\n")


JS_APP = """import {cors, helmet, logger} from './middleware';

const app = express();
app.use(cors());
app.use(helmet());
app.use(logger());

export {cors as allowOrigins};
"""


def test_a_javascript_import_joins_its_run_and_two_alike_statements_are_no_run():
    after = JS_APP.replace("{cors, helmet, logger}", "{compress, cors, helmet, logger}")
    d = ne.doc("file:///app.js", after, (JS_APP,), (1.0,), grammar="javascript")
    assert ne.applied(after, edits(d), d.uri) == after.replace("app.use(cors());\n", "app.use(compress());\napp.use(cors());\n")
    two = JS_APP.replace("app.use(logger());\n", "")
    after = two.replace("{cors, helmet, logger}", "{compress, cors, helmet, logger}")
    d = ne.doc("file:///app.js", after, (two,), (1.0,), grammar="javascript")
    assert edits(d) == []


def test_a_plural_ending_is_no_shared_affix():
    src = "class C {\n  constructor() {\n    this.commands = [];\n    this.options = [];\n    this.args = [];\n  }\n}\n" \
          "const all = [command, option, arg];\n"
    after = src.replace("    this.args = [];\n", "    this.args = [];\n    this.execs = [];\n")
    d = ne.doc("file:///c.js", after, (src,), (1.0,), grammar="javascript")
    assert edits(d) == []  # neither the statements (new code) nor 'command, option, arg' (no 's' stripped)


def test_a_name_added_to_all_four_edits_ago_still_joins_the_imports_of_its_siblings():
    # __all__ first, then both fallback imports, then the function itself: the import of the
    # tests still lacks the name the user is still adding everywhere
    v1 = PY_INIT.replace("'escape']", "'escape', 'escape_silent']")
    v2 = v1.replace("_speedups import escape,", "_speedups import escape, escape_silent,")
    v3 = v2.replace("_native import escape,", "_native import escape, escape_silent,")
    native_before = "def escape(s):\n    return s\n"
    native = native_before + "\n\ndef escape_silent(s):\n    return escape(s or '')\n"
    init = ne.doc("file:///markupsafe/__init__.py", v3, (v2, v1, PY_INIT), (3.0, 2.0, 1.0))
    nat = ne.doc("file:///markupsafe/_native.py", native, (native_before,), (4.0,))
    tests = ne.doc("file:///tests.py", "from markupsafe import Markup, escape\n")
    found = edits(nat, init, tests)
    assert ne.applied(tests.text, found, tests.uri) == "from markupsafe import Markup, escape, escape_silent\n"
