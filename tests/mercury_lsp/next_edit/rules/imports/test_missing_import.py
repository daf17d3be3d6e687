"""NE402 missing-import: a name used but not imported gets the import another document has
(Python, Go, Rust, TypeScript), or joins the import listing names of the module defining it."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState, NextEditQuery, apply_edits
from mercury_lsp.next_edit.pipeline import rule_context
from mercury_lsp.next_edit.rules.imports import missing_import, unused_import
from mercury_lsp.syntax import Grammars

G = Grammars()


def edits(*docs: DocState):
    ctx = rule_context(NextEditQuery(docs, docs[0].uri, 0), G)
    return unused_import.RULE.run(ctx) + missing_import.RULE.run(ctx)


def added(home_before: str, home_after: str, other: str, grammar: str, ext: str) -> str:
    docs = (DocState(f"file:///a.{ext}", home_after, grammar, 2, (home_before,), 1.0, (1.0,)),
            DocState(f"file:///b.{ext}", other, grammar, 1))
    return apply_edits(home_after, [(p.start, p.end, p.new_text) for p in edits(*docs) if p.new_text])


def test_a_name_used_and_imported_elsewhere_is_imported_but_not_a_module_being_typed():
    other = DocState("file:///b.py", "from datetime import datetime\n\nprint(datetime.now())\n", "python", 1)
    src = "import os\n\n\ndef f():\n    return os.getcwd()\n"
    used = src.replace("    return os.getcwd()\n", "    return datetime.now()\n")
    got = edits(DocState("file:///a.py", used, "python", 1, (src,), 1.0, (1.0,)), other)
    assert [(p.new_text, p.start) for p in got if p.new_text] == [("from datetime import datetime\n", len("import os\n"))]
    typing = src.replace("import os\n", "import os\nfrom datetime import\n")
    assert edits(DocState("file:///a.py", typing, "python", 1, (src,), 1.0, (1.0,)), other) == []


def test_a_go_package_used_and_imported_elsewhere_joins_its_group_in_gofmt_order():
    other = 'package p\n\nimport (\n\t"fmt"\n\t"strings"\n)\n\nvar _ = strings.Trim\nvar _ = fmt.Sprint\n'
    src = ('package p\n\nimport (\n\t"fmt"\n\t"net/http"\n\t"os"\n\n\t"github.com/x/y"\n)\n\n'
           'func f() {\n\tfmt.Println(os.Args, http.StatusOK, y.Z)\n}\n')
    used = src.replace("fmt.Println(os.Args,", "fmt.Println(strings.TrimSpace(os.Args[0]),")
    assert added(src, used, other, "go", "go") == used.replace('\t"os"\n', '\t"os"\n\t"strings"\n')


def test_python_rust_typescript_a_missing_import_goes_to_its_sorted_place_or_after_an_unsorted_group():
    other = "import hashlib\nimport os\n\n\nprint(hashlib.sha1, os.sep)\n"
    src = "import json\nimport sys\n\n\ndef f():\n    return json.dumps(sys.argv)\n"
    used = src.replace("json.dumps(sys.argv)", "json.dumps(sys.argv) + hashlib.sha1().hexdigest()")
    assert added(src, used, other, "python", "py") == used.replace("import json\n", "import hashlib\nimport json\n")
    other = "use std::sync::Arc;\n\nfn g() -> Arc<u8> { Arc::new(1) }\n"
    src = "use std::fs;\nuse std::io;\n\nfn f() -> io::Result<()> { fs::remove_file(\"x\") }\n"
    used = src.replace('{ fs::remove_file("x") }', '{ let _a = Arc::new(1); fs::remove_file("x") }')
    assert added(src, used, other, "rust", "rs") == used.replace("use std::io;\n", "use std::io;\nuse std::sync::Arc;\n")
    other = "import {Queue} from './queue';\n\nnew Queue();\n"
    src = "import {b} from './b';\nimport {a} from './a';\n\nb(a);\n"  # not sorted: after the group
    used = src.replace("b(a);", "b(a, new Queue());")
    assert added(src, used, other, "typescript", "ts") == used.replace(
        "import {a} from './a';\n", "import {a} from './a';\nimport {Queue} from './queue';\n")


def test_a_name_defined_in_another_open_module_joins_the_import_that_lists_names_from_it():
    util = DocState("file:///pkg/util.py", "def other():\n    pass\n\n\ndef slugify(t):\n    return t\n", "python", 1)
    src = "from pkg.util import other\n\n\ndef show(t):\n    return other()\n"
    used = src.replace("return other()", "return other() + slugify(t)")
    home = DocState("file:///pkg/views.py", used, "python", 2, (src,), 1.0, (1.0,))
    got = apply_edits(used, [(p.start, p.end, p.new_text) for p in edits(home, util)])
    assert got.startswith("from pkg.util import other, slugify\n")
    qualified = src.replace("from pkg.util import other", "from pkg import util").replace("other()", "util.other()")
    used = qualified.replace("return util.other()", "return util.other() + util.slugify(t)")
    home = DocState("file:///pkg/views.py", used, "python", 2, (qualified,), 1.0, (1.0,))
    assert edits(home, util) == []  # 'util.slugify': the module is imported, not the name
    lib = DocState("file:///src/internal.rs", "pub fn is_executable() -> bool {\n    true\n}\n", "rust", 1)
    src = "use internal::{FdOptions};\n\nfn f(o: FdOptions) -> bool {\n    false\n}\n"
    used = src.replace("    false\n", "    is_executable()\n")
    home = DocState("file:///src/output.rs", used, "rust", 2, (src,), 1.0, (1.0,))
    got = apply_edits(used, [(p.start, p.end, p.new_text) for p in edits(home, lib)])
    assert got.startswith("use internal::{FdOptions, is_executable};\n")
