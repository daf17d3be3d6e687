"""``mercury-lsp doctor``: each check against a real or a scripted counterpart (editors are
scripts on PATH printing what the real ones print), and the fix it prints."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

from mercury_lsp import cli
from mercury_lsp.cli.doctor import editors as doctor_editors
from mercury_lsp.cli.doctor import runtime
from tests.support.fim_server import RecordingFimServer
from tests.support.nvim_harness import NVIM

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _script(bindir: Path, name: str, body: str) -> None:
    path = bindir / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def _doctor(capsys, *args: str) -> tuple[int, str]:
    status = cli.main(["doctor", *args])
    return status, capsys.readouterr().out


@pytest.fixture
def editors_path(tmp_path, monkeypatch):
    """PATH with scripted editors: an old Neovim, Emacs without eglot, VS Code without the
    extension, Helix configured; and this interpreter's folder (mercury-lsp itself)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _script(bindir, "nvim", 'echo "NVIM v0.10.4"; echo "Build type: Release"\n')
    _script(bindir, "emacs", 'case "$1" in --version) echo "GNU Emacs 29.4";; *) printf eglot=no;; esac\n')
    _script(bindir, "code", 'case "$1" in --version) echo "1.96.2";; --list-extensions) echo ms-python.python;; esac\n')
    _script(bindir, "hx", 'echo "helix 24.07 (079f5442)"\n')
    config = tmp_path / "config"
    (config / "helix").mkdir(parents=True)
    (config / "helix" / "languages.toml").write_text('[language-server.mercury]\ncommand = "mercury-lsp"\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{Path(sys.executable).parent}")
    return bindir


def test_editors_each_with_its_fix(editors_path, capsys):
    status, out = _doctor(capsys, "--no-model")
    assert status == 1  # an editor that cannot work is a problem
    assert "FAIL  nvim: v0.10.4: the plugin needs >= 0.11" in out and "upgrade Neovim" in out
    assert "FAIL  emacs: Emacs 29.4 without eglot" in out and "package-install RET eglot" in out
    assert "warn  code: VS Code 1.96.2 without the mercury-lsp extension" in out
    assert "ok    hx: Helix 24.07, configured in" in out
    assert "--    not on PATH: zed" in out
    assert "2 problems and 1 warning" in out


@pytest.mark.skipif(NVIM is None, reason="nvim not installed")
def test_real_neovim_and_the_editor_files(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(Path(NVIM).parent))
    status, out = _doctor(capsys, "--no-model")
    assert "ok    nvim: v0.12" in out and "vim.lsp.inline_completion" in out
    assert "ok    editor files: " in out
    assert f"set-up: {cli.editors.editors_dir() / 'neovim' / 'README.md'}" in out


def test_the_model_is_loaded_and_runs_an_infill(tiny_model, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    status, out = _doctor(capsys, "--model", str(tiny_model))
    assert f"ok    model: {tiny_model} (cpu" in out and "an infill in" in out
    assert "ok    grammars: 9 tree-sitter grammars" in out and "ok    queries: 9 next-edit query files compile" in out
    assert "ok    Python: 3." in out and "ok    torch: " in out and "CPU build" in out


def test_a_missing_model_is_a_problem_with_its_fix(tmp_path, capsys):
    status, out = _doctor(capsys, "--model", str(tmp_path / "nowhere"))
    assert status == 1 and "FAIL  model: " in out and "-> pass a model directory" in out


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_backend_reachability(capsys):
    down = f'{{"api": "openai-fim", "url": "http://127.0.0.1:{_closed_port()}"}}'
    status, out = _doctor(capsys, "--no-model", "--backend", down)
    assert status == 1 and "FAIL  backend: openai-fim at http://127.0.0.1:" in out and "cannot reach it" in out
    assert "-> start the server, or fix the url" in out
    with RecordingFimServer(model="tiny-fim") as srv:
        status, out = _doctor(capsys, "--no-model", "--backend", f'{{"api": "openai-fim", "url": "{srv.url}"}}')
        assert f"ok    backend: openai-fim at {srv.url}, serving tiny-fim" in out
        wrong = f'{{"mercury": {{"backend": {{"api": "openai-fim", "url": "{srv.url}", "model": "other"}}}}}}'
        status, out = _doctor(capsys, "--no-model", "--settings", wrong)
        assert status == 1 and "does not serve 'other' (it serves tiny-fim)" in out
        assert srv.bodies == []  # the check spends no completion


def test_a_gpu_build_of_torch_on_a_machine_without_a_gpu(monkeypatch):
    import torch

    monkeypatch.setattr(torch.version, "cuda", "12.8")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(runtime.shutil, "which", lambda name: None)
    [finding] = runtime.torch_build()
    assert finding.status == "warn" and "CUDA 12.8 build" in finding.detail
    assert "--index-url https://download.pytorch.org/whl/cpu" in finding.fix


def test_the_vscode_extension_id_is_the_manifests():
    import json

    manifest = json.loads((cli.editors.editors_dir() / "vscode" / "package.json").read_text())
    assert doctor_editors.VSCODE_EXTENSION == f"{manifest['publisher']}.{manifest['name']}".lower()
