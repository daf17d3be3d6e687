"""The Neovim plugin (editors/neovim) in a real headless Neovim, set up as the README says: no
message at start-up, ghost text shown (256-colour highlight) and accepted with <Tab>, the
confident-part key, next edit across two and across seven locations (Tab jumps, Tab accepts; the
new text drawn after the struck-through old text), dismiss, the statusline and :checkhealth
mercury. The tests marked with ``NVIMS`` run on Neovim 0.12 and 0.11 (tests/support/nvim_harness.py)."""

from __future__ import annotations

import pytest

from tests.support.nvim_harness import NVIMS, needs_nvim, plugin_nvim
from tests.support.server import PROBE_TEXT, probe_positions


def _messages(nvim) -> str:
    # Round trip through the server first: a message it sent at start-up is shown by then.
    nvim.exec_lua("local c = require('mercury').client(0); c:request_sync('mercury/stats', {}, 10000, 0)")
    return nvim.exec_lua("return vim.fn.execute('messages')").strip()


@pytest.mark.parametrize("nvim_bin", NVIMS)
def test_start_up_is_silent_statusline_and_health(tiny_model, tmp_path, nvim_bin):
    with plugin_nvim(tmp_path, "demo.py", "x = 1\n", nvim=nvim_bin) as nvim:
        assert _messages(nvim) == ""
        assert nvim.exec_lua("return require('mercury').status()") == "mercury"
        assert nvim.exec_lua("return vim.g.mercury_status") == "ready"
        nvim.command("checkhealth mercury")
        report = "\n".join(nvim.current.buffer[:])
        assert "OK Neovim" in report and "OK model ready" in report and "OK ghost text enabled" in report
        assert "ERROR" not in report
        # Ghost text is readable without 'termguicolors': a 256-colour foreground.
        hl = nvim.exec_lua("return vim.api.nvim_get_hl(0, { name = 'ComplHint', link = false })")
        assert hl.get("ctermfg") == 244 and hl.get("italic")


@pytest.mark.parametrize("nvim_bin", NVIMS)
def test_ghost_text_and_accept(tiny_model, tmp_path, nvim_bin):
    with plugin_nvim(tmp_path, "demo.py", PROBE_TEXT, settings="{ syntaxGuard = 'off', maxTokens = 16 }",
                     nvim=nvim_bin) as nvim:
        found = nvim.exec_lua(FIND_POSITION, [list(p) for p in probe_positions()])
        assert found, "no position with a suggestion"
        line, col, want, _ = found
        nvim.command(f"call cursor({line + 1}, {col})")
        nvim.input("A")
        shown = nvim.exec_lua(GHOST_TEXT)
        typed = PROBE_TEXT.split("\n")[line]
        assert shown is not None and typed + shown == want
        nvim.input("<Tab>")
        assert nvim.exec_lua("local want = ...; return vim.wait(5000, function() "
                             "return vim.api.nvim_get_current_line() == want end, 10)", want)
        nvim.input("<Esc>")
        assert _messages(nvim) == ""
        stats = nvim.exec_lua("return require('mercury').client(0):request_sync('mercury/stats', {}, 10000, 0).result")
        assert stats["counters"]["accepted"] == 1  # the item's command ran after the insert


FIND_POSITION = """
local positions = ...
local bufnr = vim.api.nvim_get_current_buf()
local client = require('mercury').client(bufnr)
for _, p in ipairs(positions) do
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) },
                   position = { line = p[1], character = p[2] }, context = { triggerKind = 1 } }
  local resp = client:request_sync('textDocument/inlineCompletion', params, 10000, bufnr)
  local items = resp and resp.result and resp.result.items
  if items and #items > 0 and #items[1].insertText > p[2] + 1 and not items[1].insertText:find('\\n') then
    local arg = items[1].command and items[1].command.arguments and items[1].command.arguments[1]
    return { p[1], p[2], items[1].insertText, type(arg) == 'table' and arg.confidentText or vim.NIL }
  end
end
return nil
"""

# The ghost text shown: Neovim 0.12 draws it (its namespace), the plugin on 0.11 (mercury.ghost).
GHOST_TEXT = """
local function marks()
  for _, name in ipairs({ 'nvim.lsp.inline_completion', 'mercury.ghost' }) do
    local ns = vim.api.nvim_get_namespaces()[name]
    local found = ns and vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true }) or {}
    if #found > 0 then return found end
  end
  return {}
end
local ok = vim.wait(30000, function() return #marks() > 0 end, 20)
if not ok then return nil end
local mark = marks()[1]
local parts = {}
for _, chunk in ipairs(mark[4].virt_text) do
  assert(chunk[2] == 'ComplHint')
  table.insert(parts, chunk[1])
end
return table.concat(parts)
"""

RENAME_SOURCE = "def area(width, height):\n    total = width * height\n    return total + width\n"
RENAMED = "def area(w, height):\n    total = w * height\n    return total + w\n"

# Presses <Tab> (normal mode) and waits for what it does: the cursor jumps or the buffer changes.
TAB_AND_WAIT = """
local tick, cursor = vim.b.changedtick, vim.api.nvim_win_get_cursor(0)
vim.api.nvim_feedkeys(vim.keycode('<Tab>'), 'mx', false)
assert(vim.wait(5000, function()
  local c = vim.api.nvim_win_get_cursor(0)
  return vim.b.changedtick ~= tick or c[1] ~= cursor[1] or c[2] ~= cursor[2]
end, 10), 'Tab did nothing')
"""

MARKS = """
return vim.wait(60000, function() return #require('mercury.next_edit').pending(0) == 2 end, 20)
  and vim.tbl_map(function(e) return { e[1], e[2], e[5] } end, require('mercury.next_edit').pending(0))
"""


# Each location's marks: the range (struck through) and, in the second namespace, the new text
# drawn inline where the range ends — after the old text, as the README says.
DRAWN = """
local ns = vim.api.nvim_get_namespaces()['mercury.next_edit']
local ns_new = vim.api.nvim_get_namespaces()['mercury.next_edit.new']
local ranges = vim.tbl_map(function(m) return { m[2], m[3], m[4].end_col, m[4].hl_group } end,
  vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true }))
local texts = vim.tbl_map(function(m) return { m[2], m[3], m[4].virt_text[1][1], m[4].virt_text_pos } end,
  vim.api.nvim_buf_get_extmarks(0, ns_new, 0, -1, { details = true }))
return { ranges, texts }
"""


@pytest.mark.parametrize("nvim_bin", NVIMS)
def test_next_edit_across_two_locations(tiny_model, tmp_path, nvim_bin):
    with plugin_nvim(tmp_path, "area.py", RENAME_SOURCE, nvim=nvim_bin) as nvim:
        buf = nvim.current.buffer
        nvim.command("call cursor(1, 10)")
        nvim.input("cww<Esc>")  # leaving insert mode after a change asks for the next edit
        marks = nvim.exec_lua(MARKS)
        assert marks == [[1, 12, "w"], [2, 19, "w"]]
        # Both are drawn: old text struck through (the range of `width`), the new text after it.
        ranges, texts = nvim.exec_lua(DRAWN)
        assert [r[:3] for r in ranges] == [[1, 12, 17], [2, 19, 24]]
        assert {r[3] for r in ranges} == {"MercuryNextEditCurrent", "MercuryNextEditOld"}
        assert texts == [[1, 17, "w", "inline"], [2, 24, "w", "inline"]]
        cursors = []
        for _ in range(4):
            nvim.exec_lua(TAB_AND_WAIT)
            cursors.append(tuple(nvim.current.window.cursor))
        assert cursors[0] == (2, 12) and cursors[2] == (3, 19)  # jumps to each location in turn
        assert "\n".join(buf[:]) + "\n" == RENAMED
        assert not nvim.exec_lua("return require('mercury.next_edit').visible(0)")
        # A fresh prediction is dismissed with <Esc>, leaving the buffer alone.
        nvim.command("call cursor(1, 10)")
        nvim.input("ciwbreadth<Esc>")
        assert nvim.exec_lua(MARKS)
        nvim.input("<Esc>")
        assert nvim.exec_lua("return vim.wait(2000, function() return not require('mercury.next_edit').visible(0) end)")
        assert buf[0] == "def area(breadth, height):"
        assert _messages(nvim) == ""


# A parameter used at seven places: renaming it at its definition predicts seven edits, and Tab
# walks every one of them (jump, accept), the last included.
SEVEN = ("def scale(value, factor):\n    low = value - 1\n    high = value + 1\n    mid = (value + value) / 2\n"
         "    print(value)\n    return value * factor + low + high + mid - value\n")


@pytest.mark.parametrize("nvim_bin", NVIMS)
def test_tab_walks_all_seven_locations_of_a_rename(tiny_model, tmp_path, nvim_bin):
    with plugin_nvim(tmp_path, "scale.py", SEVEN, nvim=nvim_bin) as nvim:
        nvim.command("call cursor(1, 11)")
        nvim.input("ciwv<Esc>")
        n = nvim.exec_lua("return vim.wait(60000, function() return #require('mercury.next_edit').pending(0) == 7 end, 20)"
                          " and #require('mercury.next_edit').pending(0)")
        assert n == 7, nvim.exec_lua("return vim.tbl_map(function(e) return { e[1], e[2], e[5] } end, "
                                     "require('mercury.next_edit').pending(0))")
        for _ in range(14):  # seven jumps, seven accepts
            nvim.exec_lua(TAB_AND_WAIT)
        assert "\n".join(nvim.current.buffer[:]) + "\n" == SEVEN.replace("value", "v")
        assert not nvim.exec_lua("return require('mercury.next_edit').visible(0)")
        ranges, texts = nvim.exec_lua(DRAWN)
        assert ranges == [] and texts == []
        assert _messages(nvim) == ""


CONFIDENT_ITEM = """
local client = require('mercury').client(0)
vim.api.nvim_buf_set_lines(0, 1, 2, false, { 'total = compute()' })
vim.api.nvim_win_set_cursor(0, { 2, 16 })
require('mercury').insert_confident({
  insert_text = 'total = compute(values, scale=2)', client_id = client.id,
  range = { start = { row = 1, col = 0 }, end_ = { row = 1, col = 17 } },
  command = { title = 'accepted', command = 'mercury.accepted',
              arguments = { { confidentText = 'total = compute(values, )' } } },
})
local stats = client:request_sync('mercury/stats', {}, 10000, 0).result.counters
return { vim.api.nvim_get_current_line(), vim.api.nvim_win_get_cursor(0)[2], stats.accepted, stats.acceptedConfident }
"""


@needs_nvim
def test_accept_confident_part(tiny_model, tmp_path):
    """The confident-part key inserts the item's ``confidentText`` (the rest of the line kept) and
    tells the server (counted as a partial accept)."""
    with plugin_nvim(tmp_path, "demo.py", "x = 1\n\n") as nvim:
        line, col, accepted, partial = nvim.exec_lua(CONFIDENT_ITEM)
        assert line == "total = compute(values, )" and col == 24
        assert (accepted, partial) == (1, 1)


@needs_nvim
def test_confident_key_on_real_ghost_text(tiny_model, tmp_path):
    """<M-l> on the server's ghost text inserts its confidentText (the whole item when the model
    marked no token unsure), and the server counts the accept."""
    with plugin_nvim(tmp_path, "demo.py", PROBE_TEXT, settings="{ syntaxGuard = 'off', maxTokens = 16 }") as nvim:
        found = nvim.exec_lua(FIND_POSITION, [list(p) for p in probe_positions()])
        assert found, "no position with a suggestion"
        line, col, whole, confident = found
        nvim.command(f"call cursor({line + 1}, {col})")
        nvim.input("A")
        assert nvim.exec_lua(GHOST_TEXT) is not None
        nvim.input("<M-l>")
        want = confident or whole
        assert nvim.exec_lua("local want = ...; return vim.wait(5000, function() "
                             "return vim.api.nvim_get_current_line() == want end, 10)", want), \
            (nvim.current.line, want)
        nvim.input("<Esc>")
        stats = nvim.exec_lua("return require('mercury').client(0):request_sync('mercury/stats', {}, 10000, 0).result")
        assert (stats["counters"]["accepted"], stats["counters"]["acceptedConfident"]) == (1, int(bool(confident)))
        assert _messages(nvim) == ""


# Cross-file next edit (the workspace of tests/mercury_lsp/refactor/test_workspace_lsp.py): the
# answer has shapes.py's own edit, then one mercury/nextEditUpdate brings uses.py's, a file that
# is not loaded; Tab visits shapes.py's location, then opens uses.py and accepts its two.
SHAPES = "def area(width, height):\n    return width * height\n\n\ndef square(side):\n    return area(side, side)\n"
USES = "from shapes import area\n\n\ndef total(rects):\n    return sum(area(w, h) for w, h in rects)\n"
CIRCLE = "def area_of_circle(r):\n    return 3.14 * r * r\n"

# Presses <Tab> (normal mode) and waits until the buffer, the cursor or the text changes.
TAB_AND_WAIT_ANYWHERE = """
local buf, tick, cursor = vim.api.nvim_get_current_buf(), vim.b.changedtick, vim.api.nvim_win_get_cursor(0)
vim.api.nvim_feedkeys(vim.keycode('<Tab>'), 'mx', false)
assert(vim.wait(5000, function()
  local c = vim.api.nvim_win_get_cursor(0)
  return vim.api.nvim_get_current_buf() ~= buf or vim.b.changedtick ~= tick or c[1] ~= cursor[1] or c[2] ~= cursor[2]
end, 10), 'Tab did nothing')
return { vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ':t'), vim.api.nvim_win_get_cursor(0) }
"""

WAIT_UPDATE = """
local uri = ...
local ne = require('mercury.next_edit')
return vim.wait(60000, function() return ne.unloaded()[uri] == 2 end, 20)
  and { #ne.pending(0), ne.unloaded()[uri], vim.fn.bufloaded(vim.uri_to_fname(uri)) }
"""


@needs_nvim
def test_next_edit_update_brings_files_that_are_not_open(tiny_model, tmp_path):
    with plugin_nvim(tmp_path, "shapes.py", SHAPES, files={"uses.py": USES, "circle.py": CIRCLE}) as nvim:
        uses = (tmp_path / "proj" / "uses.py").as_uri()
        nvim.command("call cursor(1, 5)")
        nvim.input("ciwsurface<Esc>")  # rename the function at its definition: asks for the next edit
        # shapes.py's call is marked at once; uses.py's two edits arrive in the update, not loaded.
        assert nvim.exec_lua(WAIT_UPDATE, uses) == [1, 2, 0]
        steps = [nvim.exec_lua(TAB_AND_WAIT_ANYWHERE) for _ in range(6)]
        assert steps == [["shapes.py", [6, 11]], ["shapes.py", [6, 18]],  # jump, accept
                         ["uses.py", [1, 19]], ["uses.py", [1, 25]],      # the jump opens uses.py (normal mode: at most the last column)
                         ["uses.py", [5, 15]], ["uses.py", [5, 22]]]
        assert "\n".join(nvim.current.buffer[:]) + "\n" == USES.replace("area", "surface")
        shapes = nvim.exec_lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('shapes.py'), 0, -1, true)")
        assert "\n".join(shapes) + "\n" == SHAPES.replace("area", "surface")
        assert nvim.exec_lua("return require('mercury.next_edit').count()") == 0
        assert not nvim.exec_lua("return require('mercury.next_edit').visible(0)")
        assert _messages(nvim) == ""


# A session for shapes.py at its current version awaiting its update; updates of another request
# are dropped, the request's own is merged once, and its edit of a loaded buffer is checked
# against the text it replaces (a file on disk's edit: documentVersion null).
STALE_UPDATES = """
local shapes, uses = ...
local ne = require('mercury.next_edit')
local client = require('mercury').client(0)
local handler = client.handlers['mercury/nextEditUpdate'] or vim.lsp.handlers['mercury/nextEditUpdate']
local version = vim.lsp.util.buf_versions[0]
ne.show(0, { edits = {}, updatePending = true }, client.offset_encoding, version)
local function edit(line, c0, c1, old)
  return { uri = uses, range = { start = { line = line, character = c0 }, ['end'] = { line = line, character = c1 } },
           newText = 'surface', oldText = old, confidence = 1, reason = 'test', documentVersion = vim.NIL }
end
local function update(uri, v, n, edits)
  return { textDocument = { uri = uri, version = v }, update = n, result = { edits = edits } }
end
local edits = { edit(0, 19, 23, 'area'), edit(4, 15, 19, 'area') }
local out = {}
table.insert(out, ne.on_update(update(shapes, version - 1, 2, edits)))  -- an older request
table.insert(out, ne.on_update(update(uses, version, 2, edits)))        -- another document
table.insert(out, ne.on_update(update(shapes, version, 3, edits)))      -- not the workspace part
table.insert(out, ne.count())
handler(nil, update(shapes, version, 2, edits), { client_id = client.id, method = 'mercury/nextEditUpdate' })
table.insert(out, ne.count())
table.insert(out, ne.on_update(update(shapes, version, 2, edits)))      -- once
return out
"""


@needs_nvim
def test_next_edit_update_of_another_request_is_dropped(tiny_model, tmp_path):
    with plugin_nvim(tmp_path, "shapes.py", SHAPES, files={"uses.py": USES}) as nvim:
        proj = tmp_path / "proj"
        out = nvim.exec_lua(STALE_UPDATES, (proj / "shapes.py").as_uri(), (proj / "uses.py").as_uri())
        assert out == [False, False, False, 0, 2, False]
        # uses.py changed on disk since the prediction: its call no longer reads `area`; the jump
        # opens the file and drops the edit that does not apply, keeping the import's.
        (proj / "uses.py").write_text(USES.replace("sum(area(", "sum(aarea("))
        assert nvim.exec_lua(TAB_AND_WAIT_ANYWHERE) == ["uses.py", [1, 19]]
        assert nvim.exec_lua("return #require('mercury.next_edit').pending(0)") == 1
        nvim.exec_lua(TAB_AND_WAIT_ANYWHERE)
        assert nvim.current.buffer[0] == "from shapes import surface"
        assert nvim.current.buffer[4] == "    return sum(aarea(w, h) for w, h in rects)"
        assert not nvim.exec_lua("return require('mercury.next_edit').visible(0)")
