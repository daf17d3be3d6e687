"""Ghost text in a real headless Neovim (0.12 and 0.11) never outlives what it was asked for.

The server is scripted (tests/support/held_lsp.py): it holds each suggestion until the user's
next action reaches it, then answers anyway — the answer that crossed its cancel on the wire,
which painted `def dedent(sourc_, line, line):` over real code. Whatever the action (leaving
insert mode, another buffer, typing on), no extmark of the late answer remains; a fresh answer is
drawn and then cleared by a mode change; the word and line keys accept part of it."""

from __future__ import annotations

import sys

import pytest

from tests.support.held_lsp import GHOST
from tests.support.nvim_harness import NVIMS, plugin_nvim

HELD = [sys.executable, "-m", "tests.support.held_lsp"]
SOURCE = "def dedent(source):\n    return source\n"

HOOKS = """
vim.g.held, vim.g.answered = vim.NIL, vim.NIL
vim.lsp.handlers['test/held'] = function(_, r) vim.g.held = r.id end
vim.lsp.handlers['test/answered'] = function(_, r) vim.g.answered = r.id end
"""
WAIT_HELD = "return vim.wait(20000, function() return vim.g.held ~= vim.NIL end, 10) and vim.g.held"
WAIT_ANSWERED = ("local id = ...; return vim.wait(20000, function() return vim.g.answered == id end, 10)")
GHOST_MARKS = """
local n = 0
for _, name in ipairs({ 'nvim.lsp.inline_completion', 'mercury.ghost' }) do
  local ns = vim.api.nvim_get_namespaces()[name]
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if ns and vim.api.nvim_buf_is_loaded(b) then n = n + #vim.api.nvim_buf_get_extmarks(b, ns, 0, -1, {}) end
  end
end
return n
"""
WAIT_SHOWN = f"return vim.wait(20000, function() return (function() {GHOST_MARKS} end)() > 0 end, 10)"


def _held(nvim) -> int:
    nvim.exec_lua(HOOKS)
    nvim.command("call cursor(1, 1)")
    nvim.input("A")  # insert mode at the end of `def dedent(source):` asks for a suggestion
    held = nvim.exec_lua(WAIT_HELD)
    assert held, "no suggestion was asked for"
    return held


def _late(nvim, held: int) -> None:
    assert nvim.exec_lua(WAIT_ANSWERED, held), "the held answer did not arrive"
    assert nvim.exec_lua(GHOST_MARKS) == 0
    assert nvim.exec_lua("return require('mercury.ghost').dropped") >= 1


@pytest.mark.parametrize("nvim_bin", NVIMS)
def test_leaving_insert_mode_while_a_request_is_in_flight_leaves_no_ghost_text(tmp_path, nvim_bin):
    with plugin_nvim(tmp_path, "demo.py", SOURCE, nvim=nvim_bin, cmd=HELD) as nvim:
        held = _held(nvim)
        nvim.input("<Esc>")
        _late(nvim, held)
        assert nvim.current.buffer[:] == SOURCE.splitlines()


@pytest.mark.parametrize("nvim_bin", NVIMS)
def test_another_buffer_while_a_request_is_in_flight_leaves_no_ghost_text(tmp_path, nvim_bin):
    with plugin_nvim(tmp_path, "demo.py", SOURCE, nvim=nvim_bin, cmd=HELD, files={"other.py": "x = 1\n"}) as nvim:
        held = _held(nvim)
        nvim.exec_lua("vim.cmd.edit(vim.fn.fnameescape(...))", str(tmp_path / "proj" / "other.py"))
        _late(nvim, held)


@pytest.mark.parametrize("nvim_bin", NVIMS)
def test_a_superseded_answer_is_not_drawn(tmp_path, nvim_bin):
    with plugin_nvim(tmp_path, "demo.py", SOURCE, nvim=nvim_bin, cmd=HELD) as nvim:
        held = _held(nvim)
        nvim.input("  # note")  # typing on: the held answer is for the text before it
        _late(nvim, held)
        nvim.input("<Esc>")


@pytest.mark.parametrize("nvim_bin", NVIMS)
def test_a_fresh_suggestion_is_drawn_then_cleared_by_a_mode_change_and_accepted_by_word_and_line(tmp_path, nvim_bin):
    with plugin_nvim(tmp_path, "demo.py", SOURCE, nvim=nvim_bin, cmd=HELD) as nvim:
        _held(nvim)
        nvim.exec_lua("require('mercury').client(0):notify('test/release', {})")
        assert nvim.exec_lua(WAIT_SHOWN)
        nvim.input("<C-o>")  # insert -> normal for one command: no InsertLeave, a mode change
        assert nvim.exec_lua("return vim.wait(5000, function() return (function() " + GHOST_MARKS + " end)() == 0 end)")
        nvim.input("<Esc><Esc>")  # the first one ends the pending command (back to insert), the second insert mode
        # Back in insert mode with a fresh suggestion: the word key takes `_GHOST_`, the line key the rest.
        held = _held(nvim)
        nvim.exec_lua("require('mercury').client(0):notify('test/release', {})")
        assert nvim.exec_lua(WAIT_SHOWN)
        nvim.input("<M-Right>")
        word = GHOST.split("(")[0]
        assert nvim.exec_lua("local want = ...; return vim.wait(5000, function() "
                             "return vim.api.nvim_get_current_line() == want end, 10)", f"def dedent(source):{word}")
        held = nvim.exec_lua(WAIT_HELD.replace("vim.g.held ~= vim.NIL", f"vim.g.held ~= {held}"))
        nvim.exec_lua("require('mercury').client(0):notify('test/release', {})")
        assert nvim.exec_lua(WAIT_SHOWN)
        nvim.input("<M-C-Right>")
        assert nvim.exec_lua("local want = ...; return vim.wait(5000, function() "
                             "return vim.api.nvim_get_current_line() == want end, 10)",
                             f"def dedent(source):{word}{GHOST}")
        nvim.input("<Esc>")
