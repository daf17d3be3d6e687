"""The real multi-file project the refactor tests edit (click's source in a git repository, made
once per module and reset around each test), and the CLI run in-process."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from benchmarks.refactor.cases import PACKAGE, make_project, reset
from mercury_lsp import cli

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return make_project(tmp_path_factory.mktemp("proj"))


@pytest.fixture
def proj(project, monkeypatch):
    """The project, clean, as the working directory; cleaned again afterwards (modes included)."""
    reset(project)
    monkeypatch.chdir(project)
    yield project
    for f in (project / PACKAGE).iterdir():
        f.chmod(0o644)
    reset(project)


@pytest.fixture
def run(capsys) -> Run:
    """``run(*argv)``: ``mercury-lsp ARGV`` in-process; (exit status, stdout, stderr)."""
    def go(*argv: str) -> tuple[int, str, str]:
        rc = cli.main(list(argv))
        out, err = capsys.readouterr()
        return rc, out, err

    return go
