"""The rule registry: one code per rule, in the settings and the docs; the one confidence table;
disabling rules by code; each edit and the wire answer carrying its rule's code."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest

from mercury_lsp import cli
from mercury_lsp.config import NextEditOptions, parse_settings
from mercury_lsp.next_edit import DocState, NextEditQuery, predict, to_result
from mercury_lsp.next_edit.rules import BY_CODE, CODES, REGISTRY, confidence, markdown_table
from mercury_lsp.syntax import Grammars

G = Grammars()

ROOT = Path(__file__).resolve().parents[4]
RULES = ROOT / "mercury_lsp" / "next_edit" / "rules"
DOCS = ROOT / "docs" / "next-edit.md"


def test_every_rule_has_one_code_the_settings_accept():
    assert sorted(BY_CODE) == sorted(CODES) and len(BY_CODE) == len(REGISTRY)
    assert all(re.fullmatch(r"NE[1-9]\d\d", r.code) for r in REGISTRY)
    names = [r.name for r in REGISTRY]
    assert len(set(names)) == len(names) and all(re.fullmatch(r"[a-z]+(?:-[a-z]+)*", n) for n in names)


def test_each_rule_is_documented_beside_it_with_what_why_and_an_example():
    for r in REGISTRY:
        assert r.doc.startswith(f"{r.code} {r.name}: "), r.code
        assert "**Why.**" in r.doc and "**Example.**" in r.doc, r.code
        assert r.confidence is None or r.confidence in {level.value for level in confidence.TABLE.values()}, r.code


def test_each_rule_lives_in_a_file_named_after_it_with_its_tests_mirrored():
    for r in REGISTRY:
        module = r.run.__module__ if r.run.__module__ != "mercury_lsp.next_edit.rules.base" else None
        files = [p for p in RULES.rglob("*.py") if p.stem == r.name.replace("-", "_")]
        assert len(files) == 1, r.code
        assert module is None or module.endswith(files[0].stem)
        test = ROOT / "tests" / "mercury_lsp" / "next_edit" / files[0].relative_to(RULES.parent).parent \
            / f"test_{files[0].stem}.py"
        assert test.is_file(), f"{r.code}: no {test.relative_to(ROOT)}"


def test_no_confidence_or_penalty_is_set_outside_the_table():
    number = re.compile(r"^\s*[A-Z_]*(?:CONFIDENCE|PENALTY|BONUS)\s*[:=][^=]*\d", re.M)
    offenders = [p.relative_to(ROOT).as_posix() for p in (ROOT / "mercury_lsp" / "next_edit").rglob("*.py")
                 if p.name != "confidence.py" and number.search(p.read_text(encoding="utf-8"))]
    assert not offenders, offenders
    assert all(level.reason and 0 <= level.value <= 1 for level in confidence.TABLE.values())


def test_the_docs_show_the_registry_and_the_levels():
    text = DOCS.read_text(encoding="utf-8")
    assert markdown_table() in text, "regenerate docs/next-edit.md's rules table: rules.markdown_table()"
    assert confidence.markdown_table() in text, "regenerate docs/next-edit.md's levels: confidence.markdown_table()"


def test_unknown_codes_are_reported_like_any_bad_setting():
    settings, problems = parse_settings({"nextEdit": {"disabledRules": ["NE204", "NE999"]}})
    assert settings.next_edit.disabled_rules == [] and len(problems) == 1
    assert "nextEdit.disabledRules" in problems[0]
    settings, problems = parse_settings({"nextEdit": {"disabledRules": ["NE204"]}})
    assert settings.next_edit.disabled_rules == ["NE204"] and problems == []


PY = "def area(width, height):\n    return width * height\n\n\nprint(area(1, 2))\n"
GO = "package m\n\nfunc area(width, height int) int {\n\treturn width * height\n}\n"


@pytest.mark.parametrize("uri,before,grammar", [("file:///a.py", PY, "python"), ("file:///a.go", GO, "go")])
def test_each_edit_carries_its_rule_and_a_disabled_rule_offers_nothing(uri, before, grammar):
    after = before.replace("area(width,", "area(w,", 1)
    docs = (DocState(uri, after, grammar, 3, (before,), 1.0),)
    out = predict(NextEditQuery(docs, uri, 0), None, G).predictions
    assert out and {p.rule for p in out} == {"NE101"} and all(p.new_text == "w" for p in out)
    off = NextEditQuery(docs, uri, 0, options=NextEditOptions(disabled_rules=["NE101"]))
    rest = predict(off, None, G).predictions
    assert all(p.rule != "NE101" for p in rest)
    # the repeated-rename rule no longer leaves the rename to NE101: it finds the same places
    assert {(p.start, p.end, p.new_text) for p in rest} == {(p.start, p.end, p.new_text) for p in out}
    every = NextEditQuery(docs, uri, 0, options=NextEditOptions(disabled_rules=list(CODES)))
    assert predict(every, None, G).predictions == []


def test_the_wire_answer_and_its_schema_name_the_rule(capsys):
    after = PY.replace("area(width,", "area(w,", 1)
    q = NextEditQuery((DocState("file:///a.py", after, "python", 3, (PY,), 1.0),), "file:///a.py", 0)
    wire = msgspec.to_builtins(to_result(predict(q, None, G), q, "m"))
    assert {e["rule"] for e in wire["edits"]} == {"NE101"}
    assert cli.main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    rule = schema["$defs"]["PredictedEdit"]["properties"]["rule"]
    assert sorted(rule["anyOf"][0]["enum"]) == sorted(CODES)
    kinds = schema["$defs"]["PredictedEdit"]["properties"]["kind"]["enum"]
    assert {"move", "supersede", "line-repeat"} <= set(kinds)
