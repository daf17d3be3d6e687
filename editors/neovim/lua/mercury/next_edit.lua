-- Next-edit suggestions (`mercury/nextEdit`): every predicted location is shown with extmarks (old
-- text struck through, new text inline after it). A key jumps to the next location, then accepts
-- it; another dismisses them. Extmarks follow the buffer, so accepting one keeps the others right;
-- any other change to the buffer dismisses them (they were predicted for the text before it).
local M = {}

local api = vim.api
local ns = api.nvim_create_namespace('mercury.next_edit')
local REQUEST = 'mercury/nextEdit'

---@class mercury.NextEditState
---@field marks { id: integer, new_text: string, reason: string, confidence: number }[]
---@field tick integer  b:changedtick the marks are valid for

---@type table<integer, mercury.NextEditState>
local states = {}

local function resolve(bufnr)
  return bufnr == 0 and api.nvim_get_current_buf() or bufnr
end

function M.visible(bufnr)
  local st = states[resolve(bufnr)]
  return st ~= nil and #st.marks > 0
end

--- Pending edits as { row, col, end_row, end_col, new_text } (0-based, byte columns), in order.
function M.pending(bufnr)
  bufnr = resolve(bufnr)
  local st = states[bufnr]
  local out = {}
  for _, m in ipairs(st and st.marks or {}) do
    local pos = api.nvim_buf_get_extmark_by_id(bufnr, ns, m.id, { details = true })
    if pos[1] then
      table.insert(out, { pos[1], pos[2], pos[3].end_row, pos[3].end_col, m.new_text, id = m.id })
    end
  end
  table.sort(out, function(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end)
  return out
end

function M.dismiss(bufnr)
  bufnr = resolve(bufnr)
  states[bufnr] = nil
  if api.nvim_buf_is_valid(bufnr) then api.nvim_buf_clear_namespace(bufnr, ns, 0, -1) end
end

local function byte_col(bufnr, row, character, encoding)
  local line = api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  if encoding == 'utf-8' then return math.min(character, #line) end
  local ok, col = pcall(vim.str_byteindex, line, encoding, character, false)
  return ok and col or #line
end

--- Draw the marks; the one the accept key acts on next is underlined.
local function render(bufnr)
  local st = states[bufnr]
  if not st then return end
  local cursor = api.nvim_win_get_cursor(0)
  local target = M.target(bufnr, cursor[1] - 1, cursor[2])
  for _, e in ipairs(M.pending(bufnr)) do
    local m
    for _, x in ipairs(st.marks) do if x.id == e.id then m = x end end
    local current = target and target.id == e.id
    api.nvim_buf_set_extmark(bufnr, ns, e[1], e[2], {
      id = e.id, end_row = e[3], end_col = e[4],
      hl_group = current and 'MercuryNextEditCurrent' or 'MercuryNextEditOld',
      virt_text = { { m.new_text:gsub('\n', '⏎'), 'MercuryNextEditNew' } },
      virt_text_pos = 'inline', right_gravity = false, end_right_gravity = true,
    })
  end
end

--- The edit the accept key acts on from (row, col): the one under the cursor, else the next one.
function M.target(bufnr, row, col)
  local edits = M.pending(resolve(bufnr))
  for _, e in ipairs(edits) do
    local after_start = row > e[1] or (row == e[1] and col >= e[2])
    local before_end = row < e[3] or (row == e[3] and col <= e[4])
    if after_start and before_end then return e, true end
  end
  for _, e in ipairs(edits) do
    if e[1] > row or (e[1] == row and e[2] > col) then return e, false end
  end
  return edits[1], false
end

function M.show(bufnr, result, encoding)
  bufnr = resolve(bufnr)
  M.dismiss(bufnr)
  local uri = vim.uri_from_bufnr(bufnr)
  local st = { marks = {}, tick = api.nvim_buf_get_changedtick(bufnr) }
  for _, e in ipairs(result.edits or {}) do
    if e.uri == uri then
      local r = e.range
      local id = api.nvim_buf_set_extmark(bufnr, ns, r.start.line,
        byte_col(bufnr, r.start.line, r.start.character, encoding), {
          end_row = r['end'].line, end_col = byte_col(bufnr, r['end'].line, r['end'].character, encoding),
          right_gravity = false, end_right_gravity = true,
        })
      table.insert(st.marks, { id = id, new_text = e.newText, reason = e.reason, confidence = e.confidence })
    end
  end
  if #st.marks > 0 then
    states[bufnr] = st
    render(bufnr)
  end
  vim.api.nvim_exec_autocmds('User', { pattern = 'MercuryNextEdit', modeline = false })
end

--- Ask the server for the next edit at the cursor; `on_done(count)` after the marks are drawn.
function M.request(bufnr, on_done)
  bufnr = resolve(bufnr)
  local client = require('mercury').client(bufnr)
  if not client then return end
  local version = vim.lsp.util.buf_versions[bufnr]
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.textDocument.version = version
  client:request(REQUEST, params, function(err, result)
    if err or not result or not api.nvim_buf_is_valid(bufnr) or vim.lsp.util.buf_versions[bufnr] ~= version then
      if on_done then on_done(0) end
      return
    end
    M.show(bufnr, result, client.offset_encoding)
    if on_done then on_done(#M.pending(bufnr)) end
  end, bufnr)
end

--- Jump to the next predicted edit, or accept it when the cursor is already on it.
function M.jump_or_accept(bufnr)
  bufnr = resolve(bufnr)
  local st = states[bufnr]
  if not st then return end
  if api.nvim_buf_get_changedtick(bufnr) ~= st.tick then return M.dismiss(bufnr) end
  local cursor = api.nvim_win_get_cursor(0)
  local e, under = M.target(bufnr, cursor[1] - 1, cursor[2])
  if not e then return M.dismiss(bufnr) end
  if not under then
    api.nvim_win_set_cursor(0, { e[1] + 1, e[2] })
  else
    local lines = vim.split(e[5], '\n', { plain = true })
    api.nvim_buf_set_text(bufnr, e[1], e[2], e[3], e[4], lines)
    api.nvim_buf_del_extmark(bufnr, ns, e.id)
    st.tick = api.nvim_buf_get_changedtick(bufnr)
    st.marks = vim.tbl_filter(function(m) return m.id ~= e.id end, st.marks)
    api.nvim_win_set_cursor(0, { e[1] + #lines, (#lines == 1 and e[2] or 0) + #lines[#lines] })
    if #st.marks == 0 then return M.dismiss(bufnr) end
  end
  render(bufnr)
end

--- Autocommands: dismiss on other changes, re-render on cursor moves, predict after insert mode.
function M.attach(group, opts)
  api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI' }, { group = group, callback = function(ev)
    local st = states[ev.buf]
    if st and api.nvim_buf_get_changedtick(ev.buf) ~= st.tick then M.dismiss(ev.buf) end
  end })
  api.nvim_create_autocmd('CursorMoved', { group = group, callback = function(ev)
    if states[ev.buf] then render(ev.buf) end
  end })
  if opts.auto then
    local ticks = {}
    api.nvim_create_autocmd('InsertEnter', { group = group, callback = function(ev)
      ticks[ev.buf] = api.nvim_buf_get_changedtick(ev.buf)
    end })
    api.nvim_create_autocmd('InsertLeave', { group = group, callback = function(ev)
      if ticks[ev.buf] ~= api.nvim_buf_get_changedtick(ev.buf) and require('mercury').client(ev.buf) then
        M.request(ev.buf)
      end
    end })
  end
end

return M
