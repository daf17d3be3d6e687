"""A real client: headless Neovim 0.12 renames a parameter at its definition; ``mercury/nextEdit``
returns the other occurrences; the "Apply predicted edits" code action leaves the buffer exactly
right; the same action applied after the buffer moved on is refused and changes nothing."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import serve_command

pynvim = pytest.importorskip("pynvim")

NVIM = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")
ROOT = Path(__file__).resolve().parents[1]

SOURCE = ('def area(width, height):\n    label = "é" if width else "ü"\n    total = width * height\n'
          '    return total + width  # width\n\n\nprint(area(1, 2))\n')
EXPECTED = SOURCE.replace("width", "w").replace("# w", "# width")

INIT = """
vim.lsp.config('mercury', {
  cmd = vim.json.decode(%(cmd)s),
  cmd_cwd = %(root)s,
  filetypes = { 'python' },
  root_dir = %(workdir)s,
  handlers = {
    ['mercury/status'] = function(_, result) vim.g.mercury_state = result.state end,
  },
})
vim.lsp.enable('mercury')
"""

NEXT_EDIT = """
local bufnr = vim.api.nvim_get_current_buf()
local client = vim.lsp.get_clients({ bufnr = bufnr, name = 'mercury' })[1]
local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr), version = vim.lsp.util.buf_versions[bufnr] },
                 position = { line = 0, character = 10 } }
local resp = client:request_sync('mercury/nextEdit', params, 60000, bufnr)
return { resp and resp.result, resp and resp.err and resp.err.message, client.offset_encoding }
"""

CODE_ACTION = """
local bufnr = vim.api.nvim_get_current_buf()
local client = vim.lsp.get_clients({ bufnr = bufnr, name = 'mercury' })[1]
local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) },
                 range = { start = { line = 0, character = 10 }, ['end'] = { line = 0, character = 10 } },
                 context = { diagnostics = {} } }
local resp = client:request_sync('textDocument/codeAction', params, 60000, bufnr)
vim.g.mercury_action = resp.result[1]
return { #resp.result, resp.result[1].title }
"""

APPLY = """
local client = vim.lsp.get_clients({ name = 'mercury' })[1]
local ok, err = pcall(vim.lsp.util.apply_workspace_edit, vim.g.mercury_action.edit, client.offset_encoding)
return { ok, err and tostring(err) or '' }
"""


@pytest.mark.skipif(NVIM is None, reason="nvim not installed")
def test_neovim_next_edit_and_code_action(tiny_model, tmp_path):
    workdir = tmp_path / "proj"
    workdir.mkdir()
    source = workdir / "area.py"
    source.write_text(SOURCE)
    init = tmp_path / "init.lua"
    init.write_text(INIT % {"cmd": json.dumps(json.dumps(serve_command())), "root": json.dumps(str(ROOT)),
                            "workdir": json.dumps(str(workdir))})
    nvim = pynvim.attach("child", argv=[NVIM, "--embed", "--headless", "-n", "--clean", "-u", str(init)])
    try:
        nvim.command("filetype on")
        nvim.command(f"edit {source}")
        assert nvim.exec_lua("return vim.wait(120000, function() return vim.g.mercury_state == 'ready' end, 50)")
        buf = nvim.current.buffer
        # The user renames the parameter at its definition (normal mode: cw on `width`).
        nvim.command("call cursor(1, 10)")
        nvim.input("cww<Esc>")
        assert nvim.exec_lua("return vim.wait(5000, function() return vim.api.nvim_get_current_line() "
                             "== 'def area(w, height):' end, 10)")
        result, err, encoding = nvim.exec_lua(NEXT_EDIT)
        assert err is None and result is not None
        assert encoding == "utf-8" and result["positionEncoding"] == "utf-8"
        starts = sorted((e["range"]["start"]["line"], e["range"]["start"]["character"]) for e in result["edits"])
        # "é" is two UTF-8 bytes: the use after it on line 1 is at byte column 20 (character 19)
        assert starts == [(1, 20), (2, 12), (3, 19)]
        assert {e["newText"] for e in result["edits"]} == {"w"}
        count, title = nvim.exec_lua(CODE_ACTION)
        assert count == 1 and title.startswith("Apply predicted edits (3 locations")
        ok, msg = nvim.exec_lua(APPLY)
        assert ok, msg
        assert "\n".join(buf[:]) + "\n" == EXPECTED
        # Undo the applied edits: the buffer moves on (new version); the old action is refused.
        nvim.command("undo")
        before = "\n".join(buf[:])
        assert before + "\n" != EXPECTED
        nvim.exec_lua(APPLY)  # Neovim refuses a versioned edit for an older version (prints why)
        assert "newer than edits" in nvim.exec_lua("return vim.fn.execute('messages')")
        assert "\n".join(buf[:]) == before  # nothing applied, not even partially
    finally:
        nvim.exec_lua("vim.lsp.stop_client(vim.lsp.get_clients(), true)")
        nvim.close()
