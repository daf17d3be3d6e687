"""The ``mercury-lsp`` command: subcommands, usage errors (exit 2, no traceback), ``schema``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mercury_lsp import cli


def test_every_subcommand_is_registered():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == {"infill", "train", "serve", "next-edit", "schema", "http", "refactor", "doctor",
                                "editors"}


@pytest.mark.parametrize("argv, message", [
    (["serve", "--settings", "{not json"], "--settings is not a JSON object"),
    (["serve", "--settings", '{"maxTokens": 0}'], "maxTokens"),
    (["serve", "--tcp", "no-port"], "--tcp expects HOST:PORT"),
])
def test_serve_usage_errors_exit_2_without_a_traceback(argv, message, capsys):
    assert cli.main(argv) == cli.USAGE_EXIT == 2
    err = capsys.readouterr().err
    assert err.startswith("mercury-lsp serve: error:") and message in err and "Traceback" not in err


def test_python_dash_m_runs_the_command():
    out = subprocess.run([sys.executable, "-m", "mercury_lsp.cli", "schema"], capture_output=True, text=True,
                         check=True).stdout
    assert "PredictedEdit" in json.loads(out)["$defs"]


def test_schema_command(capsys):
    assert cli.main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    edit = schema["$defs"]["PredictedEdit"]
    assert {"uri", "range", "newText", "confidence", "reason"} <= set(edit["required"])
    assert {"edits", "model", "version", "timings"} <= set(schema["$defs"]["NextEditResult"]["properties"])
    assert cli.main(["schema", "--all"]) == 0
    assert "ApplyEditsParams" in json.loads(capsys.readouterr().out)["$defs"]


def test_the_server_starts_without_importing_torch():
    """``serve`` answers ``initialize`` before the model's imports: torch loads on the worker."""
    code = "import sys, mercury_lsp.cli, mercury_lsp.server; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
