"""NE405 relocated-import: imports follow a definition moved to another module."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState, NextEditQuery, apply_edits
from mercury_lsp.next_edit.import_lists import module_key
from mercury_lsp.next_edit.pipeline import rule_context
from mercury_lsp.next_edit.rules.imports.relocated_import import RULE
from mercury_lsp.syntax import Grammars

G = Grammars()


def doc(uri: str, text: str, grammar: str, history: tuple[str, ...] = (), at: float = 0.0) -> DocState:
    return DocState(uri, text, grammar, 1, history, at, (at,) * len(history))


def edits(*docs: DocState):
    return RULE.run(rule_context(NextEditQuery(docs, docs[0].uri, 0), G))


def applied(d: DocState, preds) -> str:
    return apply_edits(d.text, [(p.start, p.end, p.new_text) for p in preds if p.uri == d.uri])


RS_FN = "pub fn is_executable(md: &Metadata) -> bool {\n    md.len() > 0\n}\n"


def test_module_keys_are_file_names_or_the_folder_of_a_package_file():
    assert [module_key(u) for u in ("file:///r/src/internal.rs", "file:///r/src/fshelper/mod.rs",
                                    "file:///p/pkg/__init__.py", "file:///t/src/util/index.ts")] == [
        "internal", "fshelper", "pkg", "util"]


def test_rust_a_definition_pasted_into_another_module_is_imported_from_there_by_its_old_copy():
    internal0 = "use std::fs;\n\npub struct FdOptions {}\n"
    internal = doc("file:///src/internal.rs", internal0 + "\n" + RS_FN, "rust", (internal0,), 1.0)
    output = doc("file:///src/output.rs", "use internal::{FdOptions, EXITCODE};\n\nfn f(o: FdOptions) -> i32 {\n"
                 "    if is_executable(&o.m) { EXITCODE } else { 0 }\n}\n\n" + RS_FN, "rust")
    assert applied(output, edits(internal, output)).startswith("use internal::{is_executable, FdOptions, EXITCODE};")


def test_rust_a_definition_moved_away_leaves_the_import_of_its_old_home_and_a_sole_name_follows_it():
    internal0 = "pub struct FdOptions {}\n\n" + RS_FN
    internal = doc("file:///src/internal.rs", "pub struct FdOptions {}\n", "rust", (internal0,), 1.0)
    helper0 = "use std::io;\n"
    helper = doc("file:///src/fshelper/mod.rs", helper0 + "\n" + RS_FN, "rust", (helper0,), 2.0)
    output = doc("file:///src/output.rs", "use internal::{is_executable, FdOptions};\n\n"
                 "fn f(o: FdOptions) -> bool {\n    is_executable(&o.m)\n}\n", "rust")
    walk = doc("file:///src/walk.rs", "use internal::is_executable;\n\nfn g() -> bool {\n    is_executable(&m())\n}\n",
               "rust")
    preds = edits(helper, internal, output, walk)
    assert applied(output, preds).startswith("use internal::{FdOptions};\n")
    assert applied(walk, preds).startswith("use fshelper::is_executable;\n")


def test_python_and_typescript_a_moved_definition_leaves_one_import_and_joins_a_sorted_one():
    util0 = "import os\n\n\ndef other():\n    pass\n"
    fn = "def slugify(text):\n    return text.lower()\n"
    util = doc("file:///pkg/util.py", util0 + "\n\n" + fn, "python", (util0,), 2.0)
    core0 = "import re\n\n\n" + fn
    core = doc("file:///pkg/core.py", "import re\n", "python", (core0,), 1.0)
    views = doc("file:///pkg/views.py", "from pkg.core import compile, slugify\nfrom pkg.util import other, walk\n\n\n"
                "def show(t):\n    return slugify(compile(t)) + other() + walk()\n", "python")
    got = applied(views, edits(util, core, views))
    assert got.startswith("from pkg.core import compile\nfrom pkg.util import other, slugify, walk\n")
    fmt = "export function fmt(x: number): string {\n  return String(x);\n}\n"
    a0 = "export const A = 1;\n"
    a = doc("file:///src/strings.ts", a0 + fmt, "typescript", (a0,), 1.0)
    b = doc("file:///src/main.ts", "import {A} from './strings';\n\nconsole.log(A, fmt(1));\n\n" + fmt, "typescript")
    assert applied(b, edits(a, b)).startswith("import {A, fmt} from './strings';")


def test_go_and_a_definition_that_differs_from_the_new_copy_get_nothing():
    a0 = "package util\n"
    f = "func Slug(s string) string {\n\treturn s\n}\n"
    a = doc("file:///util/util.go", a0 + "\n" + f, "go", (a0,), 1.0)
    b = doc("file:///main.go", 'package main\n\nimport "example.com/util"\n\n' + f + "\nvar x = util.X\n", "go")
    assert edits(a, b) == []
    internal0 = "pub struct FdOptions {}\n"
    internal = doc("file:///src/internal.rs", internal0 + RS_FN, "rust", (internal0,), 1.0)
    output = doc("file:///src/output.rs", "use internal::{FdOptions};\n\nfn is_executable() -> bool {\n    true\n}\n",
                 "rust")
    assert edits(internal, output) == []  # its own, different function: not a copy
