"""A real client: headless Neovim 0.12 with `vim.lsp.inline_completion`, typing into a Python
buffer, receiving ghost text from `mercury-lsp serve` and accepting it.

The tiny model's suggestion is gibberish but deterministic: the test asserts that the text shown
is the server's suggestion and that accepting it makes the buffer the original text with that
suggestion inserted, i.e. the whole round trip.
"""

from __future__ import annotations

from tests.support.nvim_harness import editing, needs_nvim
from tests.support.server import PROBE_TEXT, probe_positions

FIND_POSITION = """
local positions = ...
local bufnr = vim.api.nvim_get_current_buf()
local client = vim.lsp.get_clients({ bufnr = bufnr, name = 'mercury' })[1]
for _, p in ipairs(positions) do
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) },
                   position = { line = p[1], character = p[2] }, context = { triggerKind = 1 } }
  local resp = client:request_sync('textDocument/inlineCompletion', params, 10000, bufnr)
  local items = resp and resp.result and resp.result.items
  if items and #items > 0 and #items[1].insertText > p[2] + 1 then return p end
end
return nil
"""

INLINE_AT_CURSOR = """
local bufnr = vim.api.nvim_get_current_buf()
local client = vim.lsp.get_clients({ bufnr = bufnr, name = 'mercury' })[1]
local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
params.context = { triggerKind = 1 }
local resp = client:request_sync('textDocument/inlineCompletion', params, 10000, bufnr)
return { resp.result.items[1].insertText, client.offset_encoding }
"""

GHOST_TEXT = """
local want = ...
local ns = vim.api.nvim_get_namespaces()['nvim.lsp.inline_completion']
local ok = vim.wait(30000, function()
  return ns ~= nil and #vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, {}) > 0
    and vim.api.nvim_get_current_line() == want
end, 20)
if not ok then return nil end
local mark = vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })[1]
local parts = {}
for _, chunk in ipairs(mark[4].virt_text) do table.insert(parts, chunk[1]) end
return table.concat(parts)
"""


@needs_nvim
def test_neovim_inline_completion_round_trip(tiny_model, tmp_path):
    with editing(tmp_path, "demo.py", PROBE_TEXT, init_options="{ syntaxGuard = 'off', maxTokens = 16 }",
                 after="vim.lsp.inline_completion.enable()") as nvim:
        found = nvim.exec_lua(FIND_POSITION, [list(p) for p in probe_positions()])
        assert found, "no position with a suggestion"
        line, col = found
        typed = PROBE_TEXT.split("\n")[line]
        assert len(typed) == col
        # Retype that line in insert mode, as a user would.
        nvim.command(f"call cursor({line + 1}, 1)")
        nvim.input("S" + typed.replace("<", "<lt>"))
        shown = nvim.exec_lua(GHOST_TEXT, typed)
        assert shown, "no ghost text appeared"
        insert_text, encoding = nvim.exec_lua(INLINE_AT_CURSOR)
        assert encoding == "utf-8"  # negotiated: Neovim offers utf-8 first
        assert insert_text.startswith(typed) and shown == insert_text[len(typed):]
        # Accept it.
        assert nvim.exec_lua("return vim.lsp.inline_completion.get()")
        assert nvim.exec_lua("local old = ...; return vim.wait(10000, function() "
                             "return vim.api.nvim_get_current_line() ~= old end, 20)", typed)
        buffer = "\n".join(nvim.current.buffer[:]) + "\n"
        lines = PROBE_TEXT.split("\n")
        lines[line] = insert_text
        assert buffer == "\n".join(lines)
