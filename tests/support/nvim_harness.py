"""A headless Neovim (``nvim --embed`` driven through pynvim) with mercury-lsp serving the tiny
model, shared by the Neovim tests (tests/test_neovim.py, tests/test_next_edit_neovim.py).

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
