"""``mercury-lsp refactor propagate`` and ``next-edit`` on a real multi-file project (click's
source, copied and committed to a git repository), checked against edits known from ``ast``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchmarks.refactor.cases import add_parameter_case, predicted_sites, rename_case, reset


def test_rename_at_definition_reaches_every_call_site(proj, run):
    case = rename_case(proj, "click/utils.py", "echo", "print_out")
    rc, out, err = run("refactor", "propagate", "--git", "--no-model", "--format", "json")
    assert rc == 0, err
    assert "already contains the patch" in err
    got = predicted_sites(json.loads(out), proj)
    assert got == case.expected  # every call site, nothing unrelated
    assert len({path for path, _, _ in got}) >= 5
    rc, _, _ = run("refactor", "propagate", "--git", "--no-model", "--check")
    assert rc == 1  # edits would be made
    rc, _, err = run("refactor", "propagate", "--git", "--no-model", "--apply", "--format", "summary")
    assert rc == 0, err
    check = subprocess.run([sys.executable, "-c", "import click; click.print_out('ok')"], cwd=proj,
                           capture_output=True, text=True)
    assert check.returncode == 0 and check.stdout == "ok\n", check.stderr
    rc, _, _ = run("refactor", "propagate", "--git", "--no-model", "--check")
    assert rc == 0  # nothing left to do


def test_rename_with_the_model_scores_the_same_sites(proj, run, tiny_model):
    case = rename_case(proj, "click/utils.py", "echo", "print_out")
    some = ["click/utils.py", "click/exceptions.py", "click/shell_completion.py"]  # a few files: CI time
    rc, out, err = run("refactor", "propagate", *some, "--git", "--format", "json",
                        "--model", str(tiny_model), "--dtype", "float32", "--device", "cpu", "--threads", "1")
    assert rc == 0, err
    result = json.loads(out)
    assert predicted_sites(result, proj) == {k: v for k, v in case.expected.items() if k[0] in some}
    assert {e["source"] for e in result["edits"]} == {"syntax"}  # a rename the syntax determines skips the model


def test_adding_a_parameter_updates_the_calls(proj, run):
    case = add_parameter_case(proj, "click/_compat.py", "strip_ansi", "keep_links", "False")
    assert len(case.expected) >= 3
    rc, out, err = run("refactor", "propagate", "--git", "--no-model", "--format", "json")
    assert rc == 0, err
    assert predicted_sites(json.loads(out), proj) == case.expected


def test_git_mode_equals_diff_mode(proj, run, tmp_path):
    rename_case(proj, "click/termui.py", "style", "styled")
    patch = tmp_path / "p.patch"
    patch.write_text(subprocess.run(["git", "diff"], cwd=proj, capture_output=True, text=True, check=True).stdout)
    outs = []
    for mode in (["--git"], ["--git", "HEAD"], ["--diff", str(patch)]):
        rc, out, err = run("refactor", "propagate", *mode, "--no-model")
        assert rc == 0, err
        outs.append(out)
    assert outs[0] == outs[1] == outs[2] and outs[0].count("+++ b/") >= 2


def test_patch_not_yet_applied_is_applied_in_memory(proj, run, tmp_path):
    case = rename_case(proj, "click/termui.py", "style", "styled")
    patch = tmp_path / "p.patch"
    patch.write_text(subprocess.run(["git", "diff"], cwd=proj, capture_output=True, text=True, check=True).stdout)
    rc, applied_out, _ = run("refactor", "propagate", "--diff", str(patch), "--no-model", "--format", "json")
    assert rc == 0
    reset(proj)  # the file no longer contains the edit
    rc, out, err = run("refactor", "propagate", "--diff", str(patch), "--no-model", "--format", "json")
    assert rc == 0 and "does not contain the patch yet" in err
    assert predicted_sites(json.loads(out), proj) == predicted_sites(json.loads(applied_out), proj) == case.expected
    rc, _, _ = run("refactor", "propagate", "--diff", str(patch), "--no-model", "--apply")
    text = (proj / "click/termui.py").read_text()
    assert rc == 0 and "\ndef styled(" in text and " style(" not in text  # the patch itself, too


def test_next_edit_accepts_the_patch_either_way(proj, run, tmp_path):
    """The reported failure: ``git diff > p.patch; next-edit file.py --after-diff p.patch``."""
    rename_case(proj, "click/utils.py", "echo", "print_out")
    patch = tmp_path / "p.patch"
    patch.write_text(subprocess.run(["git", "diff"], cwd=proj, capture_output=True, text=True, check=True).stdout)
    also = ["--also", "click/core.py", "--also", "click/exceptions.py"]
    rc, out_git, err = run("next-edit", "click/utils.py", "--git", *also, "--format", "summary",
                            "--no-model")
    assert rc == 0 and "already contains the patch" in err, err
    assert out_git.count("'echo' -> 'print_out'") >= 5
    reset(proj)
    rc, out_before, err = run("next-edit", "click/utils.py", "--after-diff", str(patch), *also,
                               "--format", "summary", "--no-model")
    assert rc == 0 and "does not contain the patch yet" in err
    def edits(out: str) -> list[str]:
        return [line for line in out.splitlines() if " -> " in line]

    assert edits(out_before) == edits(out_git)


def test_rename_leaves_a_method_of_the_same_name_alone(proj, run):
    """``isatty`` is a module function of click/_compat.py and the name of a method there."""
    case = rename_case(proj, "click/_compat.py", "isatty", "is_a_tty")
    rc, out, err = run("refactor", "propagate", "--git", "--no-model", "--format", "json")
    assert rc == 0, err
    assert predicted_sites(json.loads(out), proj) == case.expected


@pytest.mark.parametrize(("path", "before", "after", "changed"), [
    ("a.go", "package p\nfunc F(a, b int) {}\n", "package p\nfunc F(b, a int) {}\n", True),
    ("a.go", "package p\nfunc F(a int, b int) {}\n", "package p\nfunc F(a, b int) {}\n", False),  # same names
    ("a.ts", "function f(a: number) {}\n", "function f(a: number, b = 1) {}\n", True),
    ("a.rs", "impl A { fn f(&self, a: u8) {} }\n", "impl A { fn f(&mut self, a: u8) {} }\n", False),  # receiver
    ("a.py", "def f(a):\n    pass\n", "def f(a, b):\n    pass\n", True),
    ("a.txt", "f(a)\n", "f(a, b)\n", False),  # no grammar
])
def test_signature_changed_reads_every_grammar(tmp_path, path, before, after, changed):
    from mercury_lsp.refactor.files import Source
    from mercury_lsp.refactor.propagate import EditedFile, signature_changed
    from mercury_lsp.syntax import Grammars, grammar_for

    source = Source(tmp_path / path, after, "", grammar_for("", path))
    assert signature_changed(EditedFile(source, before, after, (before,), "applied"), Grammars()) is changed
