"""``refactor propagate``'s other follow-up kinds on the real project (click's source), each
checked against edits known from ``ast``/``tokenize``: exactly the right lines, nothing else —
call sites after a removed or reordered parameter, a renamed parameter's keyword arguments and
docstring field, a rename's matching changes in tests and docs, and the analogous edit at every
similar site."""

from __future__ import annotations

import json

import pytest

from benchmarks.refactor.cases import make_project, predicted_sites, score
from benchmarks.refactor.kinds import (
    docs_case,
    parameter_rename_case,
    predicted_lines,
    repeat_case,
    signature_case,
)

PROPAGATE = ("refactor", "propagate", "--git", "--no-model", "--format", "json")


@pytest.mark.parametrize("order", [[1, 0], [0]], ids=["reordered", "removed"])
@pytest.mark.parametrize(("module", "name"), [("click/parser.py", "_normalize_opt"),
                                              ("click/shell_completion.py", "_start_of_option")])
def test_calls_follow_a_removed_or_reordered_parameter(proj, run, module, name, order):
    case = signature_case(proj, module, name, order)
    assert len(case.expected) >= 2
    rc, out, err = run(*PROPAGATE)
    assert rc == 0, err
    got = predicted_sites(json.loads(out), proj)
    assert score(case.expected, got) == (len(case.expected),) * 3, (got, case.expected)


def test_a_renamed_parameter_follows_into_calls_and_its_docstring(proj, run):
    case, want = parameter_rename_case(proj, "click/utils.py", "echo", "nl", "new_line")
    rc, out, err = run(*PROPAGATE)
    assert rc == 0, err
    result = json.loads(out)
    assert predicted_lines(result, proj) == want
    assert {e["kind"] for e in result["edits"]} == {"rename", "signature"}
    assert len(want) >= 6  # the body, five calls' nl=..., the :param: field


def test_a_rename_reaches_tests_and_docs(tmp_path, run, monkeypatch):
    proj = make_project(tmp_path / "proj")
    monkeypatch.chdir(proj)
    _, want = docs_case(proj)
    rc, out, err = run(*PROPAGATE)
    assert rc == 0, err
    got = predicted_lines(json.loads(out), proj)
    assert got == want
    touched = {path for path, _ in got}
    assert {"tests/test_utils.py", "docs/api.rst", "README.md"} <= touched
    assert not any("Shell" in text for text in got.values())  # another class's echo
    page = (proj / "docs/api.rst").read_text()
    rc, _, err = run("refactor", "propagate", "--git", "--no-model", "--apply")
    assert rc == 0, err
    applied = (proj / "docs/api.rst").read_text()
    assert applied == page.replace(":: echo", ":: print_out").replace("`echo`", "`print_out`").replace(
        "click.echo", "click.print_out").replace("``echo()``", "``print_out()``")
    assert "To echo the input back" in applied and ":func:`secho`" in applied


@pytest.mark.parametrize("elts", ["(tuple, list)", "(bytes, bytearray)"])
def test_the_analogous_edit_at_every_similar_site(proj, run, elts):
    case, want = repeat_case(proj, elts)
    assert len(want) >= 3 and len({path for path, _ in want}) >= 2
    rc, out, err = run(*PROPAGATE)
    assert rc == 0, err
    result = json.loads(out)
    assert predicted_lines(result, proj) == want
    assert {e["kind"] for e in result["edits"]} == {"repeat"}
    del case
