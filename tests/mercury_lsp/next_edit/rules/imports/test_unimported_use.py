"""NE404 unimported-use: uses of a name whose import went are unwrapped or deleted."""

from __future__ import annotations

from mercury_lsp.next_edit import NextEditQuery, predict
from mercury_lsp.next_edit.pipeline import rule_context
from mercury_lsp.next_edit.rules.imports.stale import stale_uses
from mercury_lsp.syntax import Grammars
from tests.support.next_edit import applied_all as applied
from tests.support.next_edit import edited as doc

G = Grammars()






def test_a_call_of_a_name_no_longer_imported_gives_way_to_its_argument():
    src = ("use crate::filesystem::strip_current_dir;\nuse std::path::Path;\n\nfn run(input: &Path) {\n"
           "    let input = strip_current_dir(input);\n\n    go(input);\n    arg.generate(strip_current_dir(path), sep);\n}\n")
    after = src.replace("use crate::filesystem::strip_current_dir;\n", "")
    d = doc("file:///m.rs", after, (src,), grammar="rust")
    preds = predict(NextEditQuery((d,), d.uri, 0), None, G).predictions
    assert applied(after, preds) == after.replace("    let input = strip_current_dir(input);\n\n", "").replace(
        "generate(strip_current_dir(path), sep)", "generate(path, sep)")


def test_names_still_imported_defined_or_only_in_prose_are_left_alone():
    src = "import os\nfrom a import helper\n\n\ndef helper2():\n    return helper(1)\n"
    moved = src.replace("from a import helper\n", "from b import helper\n")  # the same name, another module
    d = doc("file:///a.py", moved, (src,))
    assert stale_uses(rule_context(NextEditQuery((d,), d.uri, 0), G)) == []
    src = "from a import wrap\n\n\ndef f(x):\n    # wrap(x) was here\n    return 'wrap(x)'\n"
    after = src.replace("from a import wrap\n", "")
    d = doc("file:///b.py", after, (src,))
    assert stale_uses(rule_context(NextEditQuery((d,), d.uri, 0), G)) == []
    src = "from a import wrap\n\n\ndef wrap(x):\n    return x\n\n\nprint(wrap(2))\n"
    after = src.replace("from a import wrap\n", "")  # the document defines it now
    d = doc("file:///c.py", after, (src,))
    assert stale_uses(rule_context(NextEditQuery((d,), d.uri, 0), G)) == []


def test_a_path_through_a_crate_no_longer_imported_takes_its_statement():
    src = ("extern crate libc;\nuse std::env;\n\nfn main() {\n"
           "    let istty = unsafe { libc::isatty(libc::STDOUT_FILENO as i32) } != 0;\n\n    go();\n}\n")
    after = src.replace("extern crate libc;\n", "")
    d = doc("file:///main.rs", after, (src,), grammar="rust")
    got = stale_uses(rule_context(NextEditQuery((d,), d.uri, 0), G))
    assert applied(after, got) == after.replace(
        "    let istty = unsafe { libc::isatty(libc::STDOUT_FILENO as i32) } != 0;\n\n", "")


def test_a_module_path_is_no_imported_name_and_a_result_statement_stays():
    """Rust: ``use crate::progress::{Bar}`` -> ``use crate::state::{Bar}`` brings ``Bar`` still;
    ``progress`` was a path segment, and the field ``progress:`` is no use of it. Python: the
    statement returning ``cast(...)`` is the function's result, not deleted with the import."""
    src = ("use crate::progress::{Bar};\n\nfn wrap(b: Bar) -> Iter {\n    Iter {\n        progress: b.clone(),\n"
           "    }\n}\n")
    after = src.replace("crate::progress::", "crate::state::")
    d = doc("file:///bar.rs", after, (src,), grammar="rust")
    assert stale_uses(rule_context(NextEditQuery((d,), d.uri, 0), G)) == []
    src = "from typing import cast\n\n\ndef mock(m):\n    note(m)\n    return cast(Mock, m.build())\n"
    after = src.replace("from typing import cast\n", "")
    d = doc("file:///plugin.py", after, (src,))
    assert stale_uses(rule_context(NextEditQuery((d,), d.uri, 0), G)) == []
