"""The HumanEval-infilling harness: data, sandbox, metrics and the quality runner.

Tests that need the data skip with the harness's message when it is absent; the sandbox tests
run on small synthetic problems and need no data.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.humaneval import tasks as humaneval
from benchmarks.humaneval.tasks import Problem, SandboxLimits, exact_match, pass_at_1, run_program, run_tasks


@pytest.fixture(scope="module")
def suites() -> dict[str, list[Problem]]:
    reason = humaneval.data_unavailable_reason()
    if reason:
        pytest.skip(reason)
    return humaneval.load_benchmarks()


def toy(completion_body: str = "", task_id: str = "toy/0") -> tuple[Problem, str]:
    """A synthetic problem ``def f(): <completion>`` checked by ``assert f() == 1``."""
    prob = Problem(task_id=task_id, entry_point="f", prompt="def f():\n", suffix="",
                   canonical_solution="    return 1\n", test="def check(candidate):\n    assert candidate() == 1\n")
    return prob, completion_body


# ---------------------------------------------------------------------------- data
def test_files_load_with_upstream_counts(suites):
    assert {n: len(p) for n, p in suites.items()} == dict(humaneval.BENCHMARK_SIZES)
    assert sum(len(p) for p in suites.values()) == 8652
    first = suites["single-line"][0]
    assert first.task_id == "SingleLineInfilling/HumanEval/0/L0" and first.entry_point == "has_close_elements"


def test_missing_data_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(humaneval.ENV_DATA_DIR, str(tmp_path))
    reason = humaneval.data_unavailable_reason()
    assert reason and str(tmp_path) in reason and humaneval.ENV_DATA_DIR in reason
    with pytest.raises(humaneval.DataUnavailableError):
        humaneval.load_benchmark("single-line")


def test_default_data_dir_does_not_depend_on_cwd(tmp_path, monkeypatch):
    monkeypatch.delenv(humaneval.ENV_DATA_DIR, raising=False)
    monkeypatch.chdir(tmp_path)
    assert humaneval.DEFAULT_DATA_DIR == Path(humaneval.__file__).resolve().parents[3] / "shared" / "data" / \
        "human-eval-infilling"
    if humaneval.DEFAULT_DATA_DIR.is_dir():
        assert humaneval.resolve_data_dir().resolve() == humaneval.DEFAULT_DATA_DIR.resolve()


def test_parse_benchmarks_and_subset():
    assert humaneval.parse_benchmarks("all") == list(humaneval.BENCHMARK_FILES)
    assert humaneval.parse_benchmarks("multi-line, single-line") == ["multi-line", "single-line"]
    with pytest.raises(ValueError, match="unknown benchmark"):
        humaneval.parse_benchmarks("single-line,nope")
    items = [toy(task_id=f"t/{i}")[0] for i in range(10)]
    assert [p.task_id for p in humaneval.take_subset(items, 3)] == ["t/0", "t/3", "t/6"]
    assert humaneval.take_subset(items, 3) == humaneval.take_subset(items, 3)
    assert humaneval.take_subset(items, None) == items and humaneval.take_subset(items, 50) == items


# ---------------------------------------------------------------------------- execution
def test_canonical_solutions_pass_on_a_sample(suites):
    problems = [p for probs in suites.values() for p in humaneval.take_subset(probs, 5)]
    assert len(problems) == 20
    outcomes = run_tasks(problems, [p.canonical_solution for p in problems])
    assert [o.task_id for o in outcomes] == [p.task_id for p in problems]
    assert all(o.passed and o.status == "passed" for o in outcomes), [o for o in outcomes if not o.passed]
    assert pass_at_1(outcomes) == 1.0


def test_wrong_and_garbage_completions_fail(suites):
    prob = suites["random-span-light"][0]
    by_id = {prob.task_id: "    return None\n"}
    [wrong] = run_tasks([prob], by_id)
    assert not wrong.passed and wrong.status == "failed" and wrong.detail
    [garbage] = run_tasks([prob], ["@@@ )) not python ((\n"])
    assert garbage.status == "failed" and "SyntaxError" in garbage.detail


def test_toy_problem_and_exit_tricks():
    problems, completions = zip(*[toy("    return 1\n", "ok"), toy("    return 2\n", "wrong"),
                                  toy("    import sys\n    sys.exit(0)\n", "exit"),
                                  toy("    import os\n    os._exit(0)\n", "os_exit"),
                                  toy("    return input()\n", "stdin")], strict=True)
    outcomes = {o.task_id: o for o in run_tasks(problems, completions)}
    assert outcomes["ok"].passed
    assert outcomes["wrong"].status == "failed" and outcomes["wrong"].detail == "AssertionError"
    assert outcomes["exit"].status == "failed" and "SystemExit" in outcomes["exit"].detail
    assert outcomes["os_exit"].status == "failed"  # exited before the tests finished
    assert outcomes["stdin"].status == "failed" and "EOFError" in outcomes["stdin"].detail


def test_infinite_loop_times_out_and_the_harness_keeps_going():
    problems, completions = zip(*[toy("    while True:\n        pass\n", "loop"),
                                  toy("    import time\n    time.sleep(30)\n", "sleep"),
                                  toy("    return 1\n", "after")], strict=True)
    outcomes = run_tasks(problems, completions, timeout=1.0, workers=3)
    assert [o.status for o in outcomes] == ["timeout", "timeout", "passed"]
    assert all(o.seconds < 5 for o in outcomes)


@pytest.mark.parametrize("body, blocked", [
    ("    import os\n    os.fork()\n    return 1\n", "os.fork"),
    ("    import os\n    os.system('true')\n    return 1\n", "os.system"),
    ("    import subprocess\n    subprocess.run(['true'])\n    return 1\n", "subprocess.Popen"),
    ("    import multiprocessing\n    p = multiprocessing.Process(target=print)\n    p.start()\n    return 1\n",
     "os.fork"),
    ("    import socket\n    socket.create_connection(('127.0.0.1', 9))\n    return 1\n", "socket"),
    ("    import socket\n    socket.socket()\n    return 1\n", "socket.socket"),
    ("    import os\n    os.kill(os.getppid(), 9)\n    return 1\n", "os.kill"),
    ("    import shutil\n    shutil.rmtree('/tmp')\n    return 1\n", "shutil.rmtree"),
])
def test_forbidden_operations_fail_without_harming_the_harness(body, blocked):
    [outcome] = run_tasks(*zip(toy(body), strict=True))
    assert outcome.status == "failed" and "PermissionError" in outcome.detail and blocked in outcome.detail
    assert os.getpid()  # still here


def test_huge_allocation_fails():
    [outcome] = run_tasks(*zip(toy("    x = bytearray(10 * 1024 ** 3)\n    return 1\n"), strict=True))
    assert outcome.status == "failed" and "MemoryError" in outcome.detail


def test_sandbox_cwd_is_empty_and_removed_and_env_is_clean(monkeypatch):
    monkeypatch.setenv("MERCURY_SECRET_TOKEN", "do-not-leak")
    program = ("import os, sys\nprint('CWD=' + os.getcwd())\nprint('LIST=' + repr(os.listdir('.')))\n"
               "print('SECRET=' + os.environ.get('MERCURY_SECRET_TOKEN', ''))\n"
               "print('ISOLATED=' + str(sys.flags.isolated))\n"
               "open('scratch.txt', 'w').write('x')\n")
    result = run_program(program)
    assert result.status == "passed", result
    fields = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert fields["LIST"] == "[]" and fields["SECRET"] == "" and fields["ISOLATED"] == "1"
    assert not Path(fields["CWD"]).exists()
    assert not Path(fields["CWD"]).parent.exists()


def test_output_is_truncated_and_bounded():
    result = run_program("print('x' * 1_000_000)\n")
    assert result.status == "passed" and len(result.stdout) <= humaneval.CAPTURE_BYTES
    flood = run_program("while True:\n    print('y' * 100_000)\n", SandboxLimits(timeout_s=2.0, output_bytes=1 << 20))
    assert flood.status == "failed" and "File too large" in flood.detail


def test_run_tasks_checks_its_arguments():
    prob, _ = toy()
    with pytest.raises(ValueError):
        run_tasks([prob], [])
    with pytest.raises(ValueError):
        run_tasks([prob], {"other": ""})
    assert run_tasks([], []) == []


# ---------------------------------------------------------------------------- metrics
def test_exact_match():
    canonical = "    for x in xs:\n        total += x\n"
    assert exact_match(canonical, canonical)
    assert exact_match("    for x in xs:   \n        total += x", canonical)  # trailing spaces, no newline
    assert exact_match("\n\n    for x in xs:\r\n        total += x\n\n\n", canonical)  # blank lines at ends, CRLF
    assert not exact_match("for x in xs:\n    total += x\n", canonical)  # indentation counts
    assert not exact_match("    for x in xs:\n\n        total += x\n", canonical)  # inner blank line counts
    assert not exact_match("    for y in xs:\n        total += y\n", canonical)
    assert exact_match("", "\n  \n")


def test_pass_at_1():
    Out = humaneval.TaskOutcome
    assert pass_at_1([]) == 0.0
    assert pass_at_1([Out("a", True, "passed", ""), Out("b", False, "failed", "")]) == 0.5
    # several samples of one task: the mean per-task rate
    assert pass_at_1([Out("a", True, "passed", ""), Out("a", False, "failed", ""), Out("b", True, "passed", "")]) == 0.75
    assert humaneval.pass_at_k(10, 3, 1) == pytest.approx(0.3)


# ---------------------------------------------------------------------------- the runner
def test_parse_decode():
    from benchmarks.humaneval.quality import UsageError, parse_decode

    assert parse_decode(["steps=16", "temperature=0.5", "sampler=fast", "heal=false", "x=None", "s=\"8\""]) == {
        "steps": 16, "temperature": 0.5, "sampler": "fast", "heal": False, "x": None, "s": "8"}
    for bad in (["steps"], ["=3"], ["max_tokens=4"]):
        with pytest.raises(UsageError):
            parse_decode(bad)


def test_quality_main_end_to_end_with_the_tiny_model(suites, tmp_path, capsys):
    from benchmarks.humaneval import quality
    from mercury_train.testing import make_tiny_checkpoint

    model = make_tiny_checkpoint(tmp_path / "tiny")
    out = tmp_path / "res" / "quality.json"
    status = quality.main(["--model", str(model), "--benchmarks", "single-line", "--limit", "3",
                           "--max-tokens", "6", "--steps-grid", "2,6", "--decode", "confidence=margin",
                           "--out", str(out), "--device", "cpu", "--dtype", "float32"])
    assert status == 0
    stdout = capsys.readouterr().out
    last = json.loads(stdout.strip().splitlines()[-1])
    assert set(last) == {"single_line_pass@1", "single_line_exact"}
    assert 0.0 <= last["single_line_pass@1"] <= 1.0
    result = json.loads(out.read_text())
    assert result["headline"] == last and result["mode"] == "model"
    assert result["model"]["path"] == str(model)
    assert result["decode"] == {"confidence": "margin", "seed": 0}
    bench = result["benchmarks"]["single-line"]
    assert bench["tasks"] == 3 and sum(bench["statuses"].values()) == 3
    assert bench["generation"]["tokens"] >= 0 and bench["max_tokens"] == 6
    assert [g["steps"] for g in result["steps_grid"]] == [2, 6]
    tasks = [json.loads(line) for line in (out.parent / "quality.tasks.jsonl").read_text().splitlines()]
    assert len(tasks) == 9 and {t["run"] for t in tasks} == {"main", "steps=2", "steps=6"}
    assert (out.parent / "quality.steps.png").read_bytes()[:4] == b"\x89PNG"


def test_quality_main_refuses_unknown_decode_options(suites, tmp_path, capsys):
    from benchmarks.humaneval import quality
    from mercury_train.testing import make_tiny_checkpoint

    model = make_tiny_checkpoint(tmp_path / "tiny")
    status = quality.main(["--model", str(model), "--limit", "1", "--decode", "no_such_option=1",
                           "--out", str(tmp_path / "q.json"), "--device", "cpu"])
    assert status == 2 and "no_such_option" in capsys.readouterr().err
    assert not (tmp_path / "q.json").exists()


def test_harness_modules_do_not_import_torch():
    code = "import sys, benchmarks.humaneval.tasks, benchmarks.humaneval.quality; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=humaneval.REPO_ROOT).returncode == 0


def test_quality_canonical_mode(suites, tmp_path, capsys):
    from benchmarks.humaneval import quality

    assert quality.main(["--canonical", "--benchmarks", "random-span-light", "--limit", "4",
                         "--out", str(tmp_path / "c.json")]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == {
        "random_span_light_pass@1": 1.0, "random_span_light_exact": 1.0}


@pytest.mark.slow
def test_all_8652_canonical_solutions_pass(suites):
    problems = [p for probs in suites.values() for p in probs]
    outcomes = run_tasks(problems, [p.canonical_solution for p in problems])
    failed = [o for o in outcomes if not o.passed]
    assert len(outcomes) == 8652 and not failed, failed[:10]
