"""Every CLI path ends with exit status 0 (ok) or 2 (usage or input error) and, on an error, one
line on stderr and no traceback (issue 18). ``serve`` errors are caught before anything binds."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from mercury_lsp import cli

CASES = [
    (["serve", "--log-file", "/nonexistent/x.log"], 2, "--log-file"),
    (["serve", "--tcp", "127.0.0.1:99999"], 2, "out of range"),
    (["serve", "--tcp", "127.0.0.1:x"], 2, "HOST:PORT"),
    (["serve", "--settings", '{"maxTokens":-1}'], 2, "invalid settings: maxTokens"),
    (["serve", "--settings", '{"context": {"maxContextTokens": 1000000000000}}'], 2, "maxContextTokens"),
    (["serve", "--settings", "[1, 2]"], 2, "not a JSON object"),
    (["serve", "--tcp", "0.0.0.0:0"], 2, "needs --token-file"),
    (["serve", "--tcp", "127.0.0.1:0", "--token-file", "/nonexistent/token"], 2, "--token-file"),
    (["serve", "--token-file", "/nonexistent/token"], 2, "--tcp only"),
    (["serve", "--stdio", "--tcp", "127.0.0.1:0"], 2, ""),
    (["http", "--port", "99999"], 2, "out of range"),
    (["http", "--port", "0", "--lsp", "127.0.0.1:70000"], 2, "out of range"),
    (["http", "--host", "0.0.0.0", "--port", "0"], 2, "API key"),
    (["train", "fit", "--data", "/nonexistent/corpus", "--run", "/nonexistent/run"], 2, "no prepared corpus"),
    (["train", "fit", "--init-from", "/nonexistent/run"], 2, "no run there"),
    (["train", "export", "--run", "/nonexistent/run", "--out", "/nonexistent/out"], 2, "no trained run"),
    (["refactor", "fill", "/nonexistent/x.py"], 2, "no such file"),
    (["refactor", "propagate", "--diff", "/nonexistent/x.patch"], 2, "no such file"),
    (["infill", "/nonexistent/x.py", "--line", "1", "--col", "1"], 2, "no such file"),
    (["next-edit", "/nonexistent/x.py", "--after-diff", "/nonexistent/x.patch"], 2, ""),
    (["no-such-command"], 2, ""),
    ([], 2, ""),
    (["schema"], 0, ""),
    (["--help"], 0, ""),
]


@pytest.mark.parametrize("argv, code, message", CASES, ids=[" ".join(c[0]) or "(none)" for c in CASES])
def test_exit_code_and_no_traceback(argv, code, message, capsys):
    try:
        got = cli.main(argv)
    except SystemExit as exc:  # argparse: --help, unknown commands
        got = exc.code
    err = capsys.readouterr().err
    assert got == code, err
    assert "Traceback" not in err
    if code == 2 and message:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], err


def test_a_port_in_use_is_one_line(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert cli.main(["serve", "--tcp", f"127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot listen" in err and "Traceback" not in err


def test_a_real_process_prints_one_line_and_no_traceback():
    proc = subprocess.run([sys.executable, "-m", "mercury_lsp.cli", "serve", "--log-file", "/nonexistent/x.log"],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
