"""NE301 repeated-lines: whole lines deleted or inserted again where the same lines stand."""

from __future__ import annotations

from mercury_lsp.next_edit import NextEditQuery
from mercury_lsp.next_edit.pipeline import rule_context
from mercury_lsp.next_edit.rules.lines.blocks import line_changes
from mercury_lsp.next_edit.rules.lines.repeated_lines import RULE
from tests.support.next_edit import G, applied, ask, doc


def test_deleted_lines_are_deleted_where_they_still_stand():
    src = ('func a() {\n\tfmt.Println(filename)\n\tdo()\n\tfmt.Println("err:", err)\n}\n\n'
           'func b() {\n\tfmt.Println("err:", err)\n\treturn\n}\n')
    after = src.replace('\tdo()\n\tfmt.Println("err:", err)\n', "\tdo()\n", 1)
    preds = ask(doc("file:///h.go", after, (src,), (1.0,), grammar="go"))
    assert applied(after, preds, "file:///h.go") == after.replace('\tfmt.Println("err:", err)\n', "")


def test_inserted_lines_go_above_every_line_like_the_one_below_them():
    flush = "\tfl := f.basicWriter.ResponseWriter.(http.Flusher)\n\tfl.Flush()\n}\n"
    src = ("package middleware\n\nfunc (f *flushWriter) Flush() {\n" + flush
           + "\nfunc (f *httpFancyWriter) Flush() {\n" + flush)
    after = src.replace("(f *flushWriter) Flush() {\n", "(f *flushWriter) Flush() {\n\tf.wroteHeader = true\n")
    preds = ask(doc("file:///w.go", after, (src,), (1.0,), grammar="go"))
    assert applied(after, preds, "file:///w.go") == after.replace(
        "(f *httpFancyWriter) Flush() {\n", "(f *httpFancyWriter) Flush() {\n\tf.wroteHeader = true\n")


def test_lines_between_braces_or_too_short_are_not_repeated():
    src = "if a {\n}\nif b {\n}\nx := 1\ny := 1\n"
    after = src.replace("if a {\n}\n", "if a {\n\tcleanup(resources)\n}\n").replace("x := 1\n", "")
    assert line_changes(src, after) == [] or RULE.run(rule_context(NextEditQuery(
        (doc("file:///a.go", after, (src,), (1.0,), grammar="go"),), "file:///a.go", 0), G)) == []


def test_lines_that_could_go_in_at_many_places_are_not_inserted():
    body = "\tfl := f.basicWriter.ResponseWriter.(http.Flusher)\n\tfl.Flush()\n}\n"
    src = "package m\n" + "".join(f"\nfunc (f *w{i}) Flush() {{\n" + body for i in range(4))
    after = src.replace("(f *w0) Flush() {\n", "(f *w0) Flush() {\n\tf.wroteHeader = true\n")
    assert ask(doc("file:///w.go", after, (src,), (1.0,), grammar="go")) == []


def test_lines_the_user_just_wrote_are_never_deleted_as_a_repeat():
    # a line moved: deleted in one place and written again in another; the deletion is no change
    # to repeat where the user just put it
    a0 = 'import (\n\t"fmt"\n\t"encoding/json"\n)\n\nfunc f() {\n\tfmt.Println(1)\n}\n'
    a1 = a0.replace('\t"encoding/json"\n', "")
    a2 = a1.replace('\t"fmt"\n', '\t"encoding/json"\n\t"fmt"\n')
    preds = ask(doc("file:///m.go", a2, (a1, a0), (2.0, 1.0), grammar="go"), cursor=a2.index("fmt"))
    assert not [p for p in preds if p.new_text == "" and "encoding/json" in p.old_text]


def test_a_long_inserted_block_is_new_code_not_a_repeat():
    src = "func a(r *R) int {\n\tstart()\n\tfinish()\n}\n\nfunc b(r *R) int {\n\tstart()\n\tfinish()\n}\n"
    block = "\t// the closest match\n\tif r.NotFound != nil {\n\t\tmatch.Handler = r.NotFound\n\t\treturn true\n\t}\n"
    after = src.replace("\tstart()\n\tfinish()\n", "\tstart()\n" + block + "\tfinish()\n", 1)
    preds = ask(doc("file:///r.go", after, (src,), (1.0,), grammar="go"))
    assert not [p for p in preds if "closest match" in p.new_text]
    short = src.replace("\tstart()\n\tfinish()\n", "\tstart()\n\tr.done = true\n\tfinish()\n", 1)
    preds = ask(doc("file:///r.go", short, (src,), (1.0,), grammar="go"))
    assert applied(short, preds, "file:///r.go") == src.replace("\tstart()\n\tfinish()\n",
                                                               "\tstart()\n\tr.done = true\n\tfinish()\n")


def test_binary_and_huge_documents_give_no_line_repeats():
    binary = "\x00\x01ID\x00garbage line here\x00\n" * 50
    assert ask(doc("file:///a.py", binary[40:], (binary,), (1.0,))) == []
    huge_src = "    log.debug('value')\n" * 60_000  # ~1.4 MB: the deleted line stands everywhere
    huge = huge_src.replace("    log.debug('value')\n", "", 1)
    assert ask(doc("file:///a.py", huge, (huge_src,), (1.0,))) == []


def test_an_import_goes_into_another_document_only_where_it_uses_a_name_it_brings():
    """Python: ``import hashlib`` written in serializer.py is not inserted into timed.py, which does
    not use hashlib; it is into signer.py, which calls ``hashlib.sha1`` without importing it."""
    src = "import json\nimport time\n\n\ndef dumps(x):\n    return json.dumps(x)\n"
    after = src.replace("import json\n", "import json\nimport hashlib\n")
    timed = "import json\nimport time\n\n\ndef stamp():\n    return time.time()\n"
    signer = "import json\nimport time\n\n\ndef digest():\n    return hashlib.sha1\n"
    home = doc("file:///serializer.py", after, (src,), (1.0,))
    preds = [p for p in ask(home, doc("file:///timed.py", timed), doc("file:///signer.py", signer))
             if p.rule == "NE301"]
    assert {p.uri for p in preds} == {"file:///signer.py"}


def test_an_import_the_other_document_does_not_use_is_not_repeated_there_javascript():
    src = "import fs from 'fs';\nimport path from 'path';\n\nexport const read = (p) => fs.readFileSync(p);\n"
    after = src.replace("import fs from 'fs';\n", "import fs from 'fs';\nimport {pEvent} from 'p-event';\n")
    other = "import fs from 'fs';\nimport path from 'path';\n\nexport const size = (p) => fs.statSync(p).size;\n"
    user = other.replace("fs.statSync(p).size", "pEvent(fs.statSync(p), 'size')")
    home = doc("file:///a.js", after, (src,), (1.0,), grammar="javascript")
    assert not [p for p in ask(home, doc("file:///b.js", other, grammar="javascript")) if p.rule == "NE301"]
    preds = [p for p in ask(home, doc("file:///c.js", user, grammar="javascript")) if p.rule == "NE301"]
    assert [p.new_text for p in preds] == ["import {pEvent} from 'p-event';\n"]


def test_an_import_deleted_stays_where_its_library_is_still_used_but_a_project_module_goes():
    """Python: ``from pathlib import Path`` deleted where ``Path`` is unused stays in looponfail.py,
    which uses it, and goes from util.py, which does not; ``from .errors import ExpiredError`` (the
    project's own name, being removed) goes though ttlcache.py still raises it. JavaScript: the
    same for ``import path from 'path'``."""
    src = "from pathlib import Path\nimport os\n\n\ndef root():\n    return os.getcwd()\n"
    after = src.replace("from pathlib import Path\n", "")
    uses = "from pathlib import Path\nimport os\n\n\ndef roots(c):\n    return [Path(r) for r in c]\n"
    unused = "from pathlib import Path\nimport os\n\n\ndef here():\n    return os.sep\n"
    home = doc("file:///plugin.py", after, (src,), (1.0,))
    preds = [p for p in ask(home, doc("file:///looponfail.py", uses), doc("file:///util.py", unused)) if p.rule == "NE301"]
    assert {p.uri for p in preds} == {"file:///util.py"}
    own = "from .errors import ExpiredError\nimport os\n\n\ndef names():\n    return os.sep\n"
    raising = "from .errors import ExpiredError\nimport os\n\n\ndef get(k):\n    raise ExpiredError(k)\n"
    home = doc("file:///pkg/__init__.py", own.replace("from .errors import ExpiredError\n", ""), (own,), (1.0,))
    preds = [p for p in ask(home, doc("file:///pkg/ttlcache.py", raising)) if p.rule == "NE301"]
    assert [p.uri for p in preds] == ["file:///pkg/ttlcache.py"]
    js = "import path from 'path';\nimport fs from 'fs';\n\nexport const read = (p) => fs.readFileSync(p);\n"
    home = doc("file:///a.js", js.replace("import path from 'path';\n", ""), (js,), (1.0,), grammar="javascript")
    joined = "import path from 'path';\nimport fs from 'fs';\n\nexport const at = (p) => path.join(p, 'x');\n"
    assert not [p for p in ask(home, doc("file:///b.js", joined, grammar="javascript")) if p.rule == "NE301"]


def _header_edits(example_before: str, example_after: str, others: dict[str, str], grammar: str, uri: str):
    home = doc(uri, example_after, (example_before,), (1.0,), grammar=grammar)
    docs = [home, *(doc(u, t, grammar=grammar) for u, t in others.items())]
    q = NextEditQuery(tuple(docs), home.uri, 0)
    texts = {d.uri: d.text for d in docs}
    return {p.uri: applied(texts[p.uri], [p], p.uri) for p in RULE.run(rule_context(q, G))}


def test_a_rust_inner_attribute_put_at_a_files_top_joins_its_siblings_headers():
    """Below the ``#![allow(...)]`` a sibling has already, at the top of one that has none; not in
    another folder's files."""
    lib = "use quote::quote;\n\nfn main() {}\n"
    line = "#![allow(clippy::let_underscore_untyped)]\n\n"
    others = {"file:///benches/main.rs": "#![allow(unknown_lints)]\n\nmod bench;\n",
              "file:///benches/extra.rs": "mod extra;\n",
              "file:///src/lib.rs": "pub mod ext;\n"}
    got = _header_edits(lib, line + lib, others, "rust", "file:///benches/lib.rs")
    assert got == {"file:///benches/main.rs": "#![allow(unknown_lints)]\n#![allow(clippy::let_underscore_untyped)]\n\nmod bench;\n",
                   "file:///benches/extra.rs": line + "mod extra;\n"}


def test_go_build_constraints_go_below_a_directive_or_at_the_top():
    json_go = "package tomltest\n\nimport \"encoding/json\"\n"
    tags = "//go:build go1.16\n// +build go1.16\n\n"
    others = {"file:///t/runner.go": "//go:generate ./gen.py\n\npackage tomltest\n",
              "file:///t/toml.go": "package tomltest\n",
              "file:///t/done.go": tags + "package tomltest\n"}  # has them already
    got = _header_edits(json_go, tags + json_go, others, "go", "file:///t/json.go")
    assert got == {"file:///t/runner.go": "//go:generate ./gen.py\n//go:build go1.16\n// +build go1.16\n\npackage tomltest\n",
                   "file:///t/toml.go": tags + "package tomltest\n"}


def test_code_put_at_a_files_top_is_no_header():
    src = "def f():\n    return 1\n"
    assert _header_edits(src, "import os\n" + src, {"file:///p/b.py": "def g():\n    return 2\n"},
                         "python", "file:///p/a.py") == {}


def test_inserted_lines_using_a_functions_own_name_go_only_where_that_name_stands_python_and_go():
    src = ("class UsageError(Exception):\n    def __init__(self, message, ctx=None):\n        self.ctx = ctx\n"
           "        self.message = message\n\n\nclass BadOptionUsage(UsageError):\n"
           "    def __init__(self, option_name, message, ctx=None):\n        self.ctx = ctx\n        self.message = message\n")
    after = src.replace("ctx=None):\n        self.ctx = ctx\n        self.message = message\n",
                        "ctx=None):\n        self.ctx = ctx\n        self.option_name = option_name\n        self.message = message\n")
    after = after.replace("self.option_name = option_name\n", "", 1)  # inserted in the second __init__ only
    preds = ask(doc("file:///e.py", after, (src,), (1.0,)))
    assert [p for p in preds if p.rule == "NE301"] == []  # the first __init__ takes no option_name
    flush = "\tswitch s := i.(type) {\n\tcase string:\n\t\treturn parse(s)\n\t}\n\treturn 0, nil\n}\n"
    src = "package cast\n\nfunc ToInt(i any) (int, error) {\n" + flush + "\nfunc ToUint(i any) (uint, error) {\n" + flush
    after = src.replace("\tcase string:\n\t\treturn parse(s)", '\tcase string:\n\t\tif s == "" {\n\t\t\treturn 0, nil\n\t\t}\n\t\treturn parse(s)', 1)
    preds = ask(doc("file:///n.go", after, (src,), (1.0,), grammar="go"))
    assert applied(after, preds, "file:///n.go") == after.replace(
        '\tcase string:\n\t\treturn parse(s)', '\tcase string:\n\t\tif s == "" {\n\t\t\treturn 0, nil\n\t\t}\n\t\treturn parse(s)')
