"""A real client: headless Neovim 0.12 renames a parameter at its definition; ``mercury/nextEdit``
returns the other occurrences; the "Apply predicted edits" code action leaves the buffer exactly
right; the same action applied after the buffer moved on is refused and changes nothing."""

from __future__ import annotations

from tests.support.nvim_harness import editing, needs_nvim

SOURCE = ('def area(width, height):\n    label = "é" if width else "ü"\n    total = width * height\n'
          '    return total + width  # width\n\n\nprint(area(1, 2))\n')
EXPECTED = SOURCE.replace("width", "w").replace("# w", "# width")

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


@needs_nvim
def test_neovim_next_edit_and_code_action(tiny_model, tmp_path):
    with editing(tmp_path, "area.py", SOURCE) as nvim:
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
