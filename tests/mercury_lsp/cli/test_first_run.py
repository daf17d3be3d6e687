"""What a new user meets first: ``--version``, a ``--help`` written for them, ``editors`` (where
the editor set-up is), and ``serve`` started in a terminal (one line saying what it is)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time

import mercury_lsp
from mercury_lsp import cli
from mercury_lsp.cli.editors import EDITORS, editors_dir
from tests.support.server import serve_command

BANNER_TIMEOUT_S = 60.0


def test_version(capsys):
    try:
        cli.main(["--version"])
    except SystemExit as exc:
        assert exc.code == 0
    assert capsys.readouterr().out == f"mercury-lsp {mercury_lsp.__version__}\n"


def test_help_is_for_users(capsys):
    try:
        cli.main(["--help"])
    except SystemExit:
        pass
    out = capsys.readouterr().out
    assert "Local code completion" in out and "mercury-lsp doctor" in out and "mercury-lsp editors" in out
    assert "UsageError" not in out and "subcommand (one module here)" not in out  # no developer docstring
    assert out.index("serve ") < out.index("infill ") < out.index("train ")  # the daemon first


def test_editors_prints_each_clients_folder(capsys):
    assert cli.main(["editors"]) == 0
    root = capsys.readouterr().out.strip()
    assert root == str(editors_dir())
    for name in EDITORS:
        assert cli.main(["editors", name]) == 0
        folder = capsys.readouterr().out.strip()
        assert folder.endswith(name) and os.path.isfile(os.path.join(folder, "README.md"))


def test_serve_in_a_terminal_says_what_it_is_and_typed_text_gets_a_clear_error(tiny_model):
    """stdin a terminal (a pty): one line on stderr before the first read; a typed line answers an
    error that says what an LSP message is, and the server keeps running."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(serve_command(), stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    os.close(slave)
    try:
        err = _read_line(proc.stderr, BANNER_TIMEOUT_S)
        assert err.startswith(f"mercury-lsp serve {mercury_lsp.__version__}: the mercury-lsp language server")
        assert "LSP" in err and "stdin/stdout" in err and f"{editors_dir()}/<editor>/README.md" in err
        os.write(master, b"hello\n\n")
        out = _read_until(proc.stdout, b"}", BANNER_TIMEOUT_S).decode()
        assert "Content-Length: N" in out and "mercury-lsp editors" in out
        assert proc.poll() is None  # still serving
    finally:
        proc.kill()
        proc.wait()
        os.close(master)


def test_serve_on_a_pipe_prints_nothing(tiny_model):
    r = subprocess.run(serve_command(), input=b"", capture_output=True, timeout=120)
    assert b"the mercury-lsp language server" not in r.stderr


def _read_line(stream, timeout: float) -> str:
    return _read_until(stream, b"\n", timeout).decode()


def _read_until(stream, end: bytes, timeout: float) -> bytes:
    deadline, data = time.monotonic() + timeout, b""
    fd = stream.fileno()
    while end not in data:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise AssertionError(f"nothing more within {timeout} s; got {data!r}")
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data


