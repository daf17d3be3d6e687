"""``mercury-lsp refactor fill``: which stubs are found, and fills that pass the syntax guard, batched
through the engine's scheduler."""

from __future__ import annotations

import json

import pytest

from mercury_lsp import cli
from mercury_lsp.backend.local import load_session
from mercury_lsp.engine_client import LoadSpec
from mercury_lsp.refactor.files import read_source
from mercury_lsp.refactor.fill import FillStats, fill, find_stubs
from mercury_lsp.syntax import Grammars

STUBS = '''from abc import ABC, abstractmethod
from typing import Protocol, overload


def add(a, b):
    """Return the sum of a and b."""
    ...


def is_even(n):
    pass  # TODO


def mean(values):
    raise NotImplementedError("later")


def greet(name):
    # TODO: return a greeting for name
    return None


def one_liner(x): ...


class Shape(ABC):
    @abstractmethod
    def area(self):
        ...


class Reader(Protocol):
    def read(self) -> str:
        ...


@overload
def f(x: int) -> int:
    ...
'''


def test_find_stubs_skips_intended_ones(tmp_path):
    path = tmp_path / "stubs.py"
    path.write_text(STUBS)
    src, _ = read_source(path)
    stubs = find_stubs(src, Grammars())
    assert [(s.kind, STUBS.count("\n", 0, s.start) + 1) for s in stubs] == [
        ("ellipsis", 7), ("pass-todo", 11), ("not-implemented", 15), ("todo-comment", 19)]
    assert stubs[3].keep == "    # return a greeting for name"
    pyi = tmp_path / "stubs.pyi"
    pyi.write_text(STUBS)
    assert [s.kind for s in find_stubs(read_source(pyi)[0], Grammars())] == ["todo-comment"]


def test_fill_cli_keeps_only_fills_that_parse(tmp_path, capsys, monkeypatch):
    path = tmp_path / "stubs.py"
    path.write_text(STUBS)
    monkeypatch.chdir(tmp_path)
    model = ["--threads", "1"]  # the embedded model: real weights
    assert cli.main(["refactor", "fill", "stubs.py", "--format", "json", *model]) == 0
    out, err = capsys.readouterr()
    assert "4 stub(s)" in err
    edits = json.loads(out)["edits"]
    assert all(e["kind"] == "fill" and e["source"] == "model" and 0 <= e["confidence"] <= 1 for e in edits)
    assert [e["confidence"] for e in edits] == sorted((e["confidence"] for e in edits), reverse=True)
    rc = cli.main(["refactor", "fill", "stubs.py", "--apply", *model])
    capsys.readouterr()
    assert rc == 0
    import ast

    ast.parse(path.read_text())  # the file still parses, with every kept fill in it
    rc = cli.main(["refactor", "fill", "stubs.py", "--check", "--min-confidence", "1.0", *model])
    assert rc == 0 and "0 kept" in capsys.readouterr().err


@pytest.mark.usefixtures("one_torch_thread")
def test_fill_requests_share_the_schedulers_steps(tmp_path, tiny_model):
    path = tmp_path / "many.py"
    path.write_text("".join(f"def f{i}(x):\n    ...\n\n\n" for i in range(8)))
    src, _ = read_source(path)
    session = load_session(LoadSpec(str(tiny_model), "cpu", "float32"))
    steps = {}
    for jobs in (1, 8):
        before = session.engine.scheduler.steps_run
        stats = FillStats()
        fill([src], session, Grammars(), max_tokens=16, min_confidence=0.0, jobs=jobs, stats=stats)
        steps[jobs] = session.engine.scheduler.steps_run - before
        assert stats.stubs == 8
    assert steps[8] < steps[1]  # eight requests in flight: batched into shared denoising steps
