"""The real-history next-edit benchmark: cases built from a git history made here, the kind rules,
the scoring, and one end-to-end run against the daemon on the tiny model."""

from __future__ import annotations

import gzip
import json
import subprocess

from benchmarks.next_edit import histories as bench
from benchmarks.next_edit import history_cases as cases
from tests.support.server import TINY_MODEL_DIR

V1 = "def area(w, h):\n    return w * h\n\n\ndef grow(size):\n    return area(size, 2)\n\n\nprint(area(1, 2))\n"
V2 = V1.replace("def area(w, h)", "def area(w, h, scale)").replace("area(size, 2)", "area(size, 2, 1)") \
    .replace("print(area(1, 2))", "print(area(1, 2, 1))")


def git_repo(path) -> None:
    def git(*args):
        subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (path / "geo.py").write_text(V1)
    git("add", ".")
    git("commit", "-qm", "one")
    (path / "geo.py").write_text(V2)
    git("commit", "-qam", "two")


def test_cases_replay_a_commit_hunk_by_hunk(tmp_path):
    git_repo(tmp_path)
    out = tmp_path / "cases.jsonl.gz"
    assert cases.main(["--repo", f"me/geo={tmp_path}:MIT", "--out", str(out), "--cases", "10"]) == 0
    with gzip.open(out, "rt") as f:
        header, *records = [json.loads(line) for line in f]
    rec = next(r for r in records if r["variant"] == "commit")
    assert rec["licence"] == "MIT" and rec["language"] == "python" and len(rec["hunks"]) == 3
    assert [c["k"] for c in rec["cases"]] == [1, 2]
    # replaying every hunk in order gives the commit's text
    text = rec["files"]["geo.py"]
    for h in rec["hunks"]:
        s, e = bench.hunk_span(text, h)
        text = text[:s] + h["new"] + text[e:]
    assert text == V2
    assert header["header"]["repos"]["me/geo"]


def test_kind_rules():
    H = cases.Hunk
    rename = [H("a.py", 0, ["x = old_name + 1\n"], ["x = new_name + 1\n"]),
              H("a.py", 5, ["y = old_name\n"], ["y = new_name\n"])]
    assert cases.classify(rename, 1, 0, False) == "rename"
    sig = [H("a.go", 0, ["func f(a int) {\n"], ["func f(a int, b int) {\n"]),
           H("a.go", 9, ["\tf(1)\n"], ["\tf(1, 2)\n"])]
    assert cases.classify(sig, 1, 0, False) == "signature"
    imp = [H("a.py", 9, ["x = 1\n"], ["x = 2\n"]), H("a.py", 0, [], ["import os\n"])]
    assert cases.classify(imp, 1, 9, False) == "import"
    rep = [H("a.py", 0, ["    return err\n"], ["    return wrap(err, ctx)\n"]),
           H("a.py", 20, ["    return err\n"], ["    return wrap(err, ctx)\n"])]
    assert cases.classify(rep, 1, 0, False) in ("repeat", "signature")
    other = [H("a.py", 0, ["a = 1\n"], ["a = 2\n"]), H("a.py", 40, ["b = 1\n", "c = 3\n"], ["d = [b]\n"])]
    assert cases.classify(other, 1, 0, False) == "other"


def test_scoring_hit_exact_and_false_positives():
    files = {"a.py": "a = 1\nb = 1\nc = 1\nd = 1\n"}
    hunks = [{"path": "a.py", "line": 0, "old": "a = 1\n", "new": "a = 2\n"},
             {"path": "a.py", "line": 1, "old": "b = 1\n", "new": "b = 2\n"},
             {"path": "a.py", "line": 3, "old": "d = 1\n", "new": "d = 2\n"}]
    uri = {"a.py": "file:///a.py"}

    def edit(line, new):
        return {"uri": "file:///a.py", "newText": new,
                "range": {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 5}}}

    assert bench.score(files, hunks, 1, [edit(1, "2")], uri)[:4] == (True, True, 0, True)
    assert bench.score(files, hunks, 1, [edit(1, "3")], uri)[:4] == (True, False, 0, True)
    # a later hunk is no false positive; a line no hunk touches is
    assert bench.score(files, hunks, 1, [edit(3, "2"), edit(2, "2")], uri)[:4] == (False, False, 1, False)


def test_each_rule_is_scored_on_its_own_edits():
    files = {"a.py": "a = 1\nb = 1\nc = 1\nd = 1\n"}
    hunks = [{"path": "a.py", "line": 0, "old": "a = 1\n", "new": "a = 2\n"},
             {"path": "a.py", "line": 1, "old": "b = 1\n", "new": "b = 2\n"}]
    uri = {"a.py": "file:///a.py"}

    def edit(line, new, rule=None):
        e = {"uri": "file:///a.py", "newText": new,
             "range": {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 5}}}
        return e if rule is None else {**e, "rule": rule}

    # NE1's edit makes the target exact alone; NE2 touches it with the wrong text and adds a false
    # positive; an edit naming no rule (an older daemon) is counted under "-"
    *_, rules = bench.score(files, hunks, 1, [edit(1, "2", "NE1"), edit(1, "3", "NE2"), edit(3, "2", "NE2"),
                                              edit(2, "5")], uri)
    assert rules == {"NE1": [1, 1, 1, 0], "NE2": [2, 1, 0, 1], bench.NO_RULE: [1, 0, 0, 1]}
    results = [bench.CaseResult("r", "c", "python", "repeat", "commit", True, False, 2, 4, 1.0, True, rules)] * 2
    rows = bench.rule_rows(results)
    assert rows["NE2"] == {"predictions": 4, "hit_cases": 2, "exact_cases": 0, "false_positives": 2,
                           "false_positives_per_case": 1.0}
    lines = bench.rule_table(rows, {"NE1": "first-rule"}).split("\n")
    assert lines[2].split() == ["-", "2", "0", "0", "2"] and lines[3].split() == ["NE1", "first-rule", "2", "2", "2", "0"]


def test_end_to_end_against_the_daemon(tmp_path, tiny_model, capsys):
    git_repo(tmp_path)
    data = tmp_path / "cases.jsonl.gz"
    cases.main(["--repo", f"me/geo={tmp_path}:MIT", "--out", str(data)])
    out = tmp_path / "v2.json"
    assert bench.main(["--cases", str(data), "--model", str(TINY_MODEL_DIR), "--out", str(out)]) == 0
    head = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    result = json.loads(out.read_text())
    assert head["cases"] == result["overall"]["cases"] >= 2 and result["responses_not_exactly_one"] == {}
    # the signature change is repeated at the other call: the repeated-edit rule finds it
    assert result["overall"]["location_hit"] > 0
    assert out.with_suffix(".png").stat().st_size > 0
    assert sum(r["predictions"] for r in result["by_rule"].values()) == sum(c["predicted"] for c in result["cases"])
