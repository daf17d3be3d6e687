-- Next-edit suggestions (`mercury/nextEdit`): every predicted location is shown with extmarks (old
-- text struck through, then the new text inline after it: a second mark at the range's end). A key jumps to the next location, then accepts
-- it; another dismisses them. Extmarks follow the buffer, so accepting one keeps the others right;
-- any other change to a buffer drops its marks (they were predicted for the text before it).
--
-- The answer has the open documents' edits; with `updatePending`, one `mercury/nextEditUpdate`
-- follows from the background with the edits of workspace files that are not open. It is merged
-- only into the request it answers (same document, same version): edits of loaded buffers get
-- extmarks, the others wait until the jump opens their file (checked there against the text they
-- replace). After the last location of a buffer the jump goes to the next file.
local M = {}

local api = vim.api
local ns = api.nvim_create_namespace('mercury.next_edit') -- the ranges (struck through)
local ns_new = api.nvim_create_namespace('mercury.next_edit.new') -- the new texts, after them
local REQUEST = 'mercury/nextEdit'
local CROSS_FILE_UPDATE = 2 -- the `update` number of the workspace files' part (the answer is 1)

---@class mercury.NextEditState
---@field marks { id: integer, new_text: string, reason: string, confidence: number }[]
---@field tick integer  b:changedtick the marks are valid for

---@type table<integer, mercury.NextEditState>
local states = {}

---@class mercury.NextEditSession  the request whose edits are shown
---@field uri string             the requested document
---@field version integer        its version the request was for
---@field bufnr integer          its buffer
---@field tick integer           that buffer's b:changedtick, but for accepted edits
---@field encoding string        the client's offset encoding
---@field update_pending boolean the request's `mercury/nextEditUpdate` has not arrived yet
---@field files string[]         uris with edits, in jump order (the requested document first)
---@field unloaded table<string, table[]>  uri -> edits (LSP shape) of files not loaded yet

---@type mercury.NextEditSession?
local session = nil

local function resolve(bufnr)
  return bufnr == 0 and api.nvim_get_current_buf() or bufnr
end

local function is_null(v)
  return v == nil or v == vim.NIL
end

--- The loaded buffer of `uri`, if any (never creates one).
local function loaded_buf(uri)
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.uri_from_bufnr(b) == uri then return b end
  end
end

--- Pending edits of a buffer as { row, col, end_row, end_col, new_text } (0-based, byte columns), in order.
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

--- Edits waiting for their file to be opened: { [uri] = count }.
function M.unloaded()
  local out = {}
  for uri, edits in pairs(session and session.unloaded or {}) do
    if #edits > 0 then out[uri] = #edits end
  end
  return out
end

--- How many predicted edits are pending, in every buffer and file.
function M.count()
  local n = 0
  for _, st in pairs(states) do n = n + #st.marks end
  for _, c in pairs(M.unloaded()) do n = n + c end
  return n
end

--- True while predicted edits are pending (here or in another file): the accept key acts.
function M.visible(bufnr)
  local st = states[resolve(bufnr)]
  return (st ~= nil and #st.marks > 0) or (session ~= nil and M.count() > 0)
end

--- Drop one buffer's marks (it changed under them).
local function drop(bufnr)
  states[bufnr] = nil
  if api.nvim_buf_is_valid(bufnr) then
    api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
    api.nvim_buf_clear_namespace(bufnr, ns_new, 0, -1)
  end
end

--- Dismiss every predicted edit (all buffers and files).
function M.dismiss()
  for b in pairs(states) do drop(b) end
  session = nil
end

local function byte_col(bufnr, row, character, encoding)
  local line = api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  if encoding == 'utf-8' then return math.min(character, #line) end
  local ok, col = pcall(vim.str_byteindex, line, encoding, character, false)
  return ok and col or #line
end

--- The edit the accept key acts on from (row, col) in the buffer: the one under the cursor (true),
--- else the next one after it (false); nil after the last one.
local function local_target(bufnr, row, col)
  local edits = M.pending(bufnr)
  for _, e in ipairs(edits) do
    local after_start = row > e[1] or (row == e[1] and col >= e[2])
    local before_end = row < e[3] or (row == e[3] and col <= e[4])
    if after_start and before_end then return e, true end
  end
  for _, e in ipairs(edits) do
    if e[1] > row or (e[1] == row and e[2] > col) then return e, false end
  end
end

--- The edit the accept key acts on from (row, col): under the cursor, else the next one (wrapping
--- within the buffer; `jump_or_accept` goes to the next file first when there is one).
function M.target(bufnr, row, col)
  bufnr = resolve(bufnr)
  local e, under = local_target(bufnr, row, col)
  if e then return e, under end
  return M.pending(bufnr)[1], false
end

--- Draw the marks; the one the accept key acts on next is underlined.
local function render(bufnr)
  local st = states[bufnr]
  if not st or not api.nvim_buf_is_valid(bufnr) then return end
  local target
  if api.nvim_get_current_buf() == bufnr then
    local cursor = api.nvim_win_get_cursor(0)
    target = local_target(bufnr, cursor[1] - 1, cursor[2])
    if not target and M.count() == #st.marks then target = M.pending(bufnr)[1] end -- wraps here
  end
  api.nvim_buf_clear_namespace(bufnr, ns_new, 0, -1)
  for _, e in ipairs(M.pending(bufnr)) do
    local m
    for _, x in ipairs(st.marks) do if x.id == e.id then m = x end end
    local current = target and target.id == e.id
    api.nvim_buf_set_extmark(bufnr, ns, e[1], e[2], {
      id = e.id, end_row = e[3], end_col = e[4],
      hl_group = current and 'MercuryNextEditCurrent' or 'MercuryNextEditOld',
      right_gravity = false, end_right_gravity = true,
    })
    api.nvim_buf_set_extmark(bufnr, ns_new, e[3], e[4], {
      virt_text = { { (m.new_text:gsub('\n', '⏎')), 'MercuryNextEditNew' } }, virt_text_pos = 'inline',
    })
  end
end

--- Whether `e` (LSP shape) still applies to the loaded buffer: an open document's edit needs the
--- version it was computed for; a file on disk's (documentVersion null), the text it replaces.
local function applies(bufnr, e, encoding)
  if not is_null(e.documentVersion) then
    return vim.lsp.util.buf_versions[bufnr] == e.documentVersion
  end
  if is_null(e.oldText) then return true end
  local r = e.range
  local nlines = api.nvim_buf_line_count(bufnr)
  if r['end'].line >= nlines then return false end
  local ok, text = pcall(api.nvim_buf_get_text, bufnr, r.start.line,
    byte_col(bufnr, r.start.line, r.start.character, encoding), r['end'].line,
    byte_col(bufnr, r['end'].line, r['end'].character, encoding), {})
  return ok and table.concat(text, '\n') == e.oldText
end

--- Extmarks in a loaded buffer for the edits that still apply there; returns how many.
local function place(bufnr, edits, encoding)
  local st = states[bufnr] or { marks = {}, tick = api.nvim_buf_get_changedtick(bufnr) }
  local n = 0
  for _, e in ipairs(edits) do
    if applies(bufnr, e, encoding) then
      local r = e.range
      local id = api.nvim_buf_set_extmark(bufnr, ns, r.start.line,
        byte_col(bufnr, r.start.line, r.start.character, encoding), {
          end_row = r['end'].line, end_col = byte_col(bufnr, r['end'].line, r['end'].character, encoding),
          right_gravity = false, end_right_gravity = true,
        })
      table.insert(st.marks, { id = id, new_text = e.newText, reason = e.reason, confidence = e.confidence })
      n = n + 1
    end
  end
  if #st.marks > 0 then
    states[bufnr] = st
    render(bufnr)
  end
  return n
end

--- Add edits (LSP shape, any files) to the session: marks in loaded buffers, the rest kept.
local function add(edits)
  local by_uri, order = {}, {}
  for _, e in ipairs(edits or {}) do
    if not by_uri[e.uri] then
      by_uri[e.uri] = {}
      table.insert(order, e.uri)
    end
    table.insert(by_uri[e.uri], e)
  end
  for _, uri in ipairs(order) do
    if not vim.tbl_contains(session.files, uri) then table.insert(session.files, uri) end
    local b = loaded_buf(uri)
    if b then
      place(b, by_uri[uri], session.encoding)
    else
      session.unloaded[uri] = vim.list_extend(session.unloaded[uri] or {}, by_uri[uri])
    end
  end
end

local function fire()
  api.nvim_exec_autocmds('User', { pattern = 'MercuryNextEdit', modeline = false })
end

--- Show a `mercury/nextEdit` result asked for `bufnr` at `version` (default: its current one).
function M.show(bufnr, result, encoding, version)
  bufnr = resolve(bufnr)
  M.dismiss()
  local uri = vim.uri_from_bufnr(bufnr)
  session = { uri = uri, version = version or vim.lsp.util.buf_versions[bufnr], encoding = encoding,
              bufnr = bufnr, tick = api.nvim_buf_get_changedtick(bufnr),
              update_pending = result.updatePending == true, files = { uri }, unloaded = {} }
  add(result.edits)
  fire()
end

--- `mercury/nextEditUpdate`: the workspace files' edits, merged when they answer the request whose
--- edits are shown (its document and version, once); a stale update is dropped. Returns whether
--- it was merged.
function M.on_update(update)
  local s = session
  local doc = type(update) == 'table' and update.textDocument or nil
  if not s or not s.update_pending or not doc or update.update ~= CROSS_FILE_UPDATE
      or doc.uri ~= s.uri or doc.version ~= s.version or type(update.result) ~= 'table' then
    return false
  end
  s.update_pending = false
  add(vim.tbl_filter(function(e) return e.uri ~= s.uri end, update.result.edits or {}))
  fire()
  return true
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
    M.show(bufnr, result, client.offset_encoding, version)
    if on_done then on_done(#M.pending(bufnr)) end
  end, bufnr)
end

--- Go to the first pending edit of the next file after `bufnr`'s (wrapping to `bufnr` itself),
--- opening a file that is not loaded. Returns whether it went somewhere.
local function next_file(bufnr)
  local s = session
  if not s then return false end
  local here = vim.uri_from_bufnr(bufnr)
  local files = s.files
  local start = 0
  for i, uri in ipairs(files) do if uri == here then start = i end end
  for k = 1, #files do
    local uri = files[(start + k - 1) % #files + 1]
    local b = loaded_buf(uri)
    local waiting = s.unloaded[uri]
    if not b and waiting and #waiting > 0 then
      vim.cmd.edit(vim.fn.fnameescape(vim.uri_to_fname(uri)))
      b = api.nvim_get_current_buf()
    end
    if b and waiting and #waiting > 0 then
      s.unloaded[uri] = nil
      place(b, waiting, s.encoding)
    end
    local first = b and M.pending(b)[1]
    if first then
      if api.nvim_get_current_buf() ~= b then api.nvim_set_current_buf(b) end
      api.nvim_win_set_cursor(0, { first[1] + 1, first[2] })
      render(b)
      return true
    end
  end
  return false
end

--- Jump to the next predicted edit (in this buffer, then in the next file), or accept it when the
--- cursor is already on it.
function M.jump_or_accept(bufnr)
  bufnr = resolve(bufnr)
  local st = states[bufnr]
  if st and api.nvim_buf_get_changedtick(bufnr) ~= st.tick then
    drop(bufnr)
    st = nil
  end
  local cursor = api.nvim_win_get_cursor(0)
  local e, under
  if st then e, under = local_target(bufnr, cursor[1] - 1, cursor[2]) end
  if not e then
    if not next_file(bufnr) then M.dismiss() end
    return
  end
  if not under then
    api.nvim_win_set_cursor(0, { e[1] + 1, e[2] })
  else
    local lines = vim.split(e[5], '\n', { plain = true })
    api.nvim_buf_set_text(bufnr, e[1], e[2], e[3], e[4], lines)
    api.nvim_buf_del_extmark(bufnr, ns, e.id)
    st.tick = api.nvim_buf_get_changedtick(bufnr)
    if session and session.bufnr == bufnr then session.tick = st.tick end
    st.marks = vim.tbl_filter(function(m) return m.id ~= e.id end, st.marks)
    api.nvim_win_set_cursor(0, { e[1] + #lines, (#lines == 1 and e[2] or 0) + #lines[#lines] })
    if #st.marks == 0 then drop(bufnr) end
    if M.count() == 0 then return M.dismiss() end
  end
  render(bufnr)
end

--- Autocommands: drop marks on other changes, re-render on cursor moves, predict after insert mode.
function M.attach(group, opts)
  api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI' }, { group = group, callback = function(ev)
    local st = states[ev.buf]
    local tick = api.nvim_buf_get_changedtick(ev.buf)
    if st and tick ~= st.tick then drop(ev.buf) end
    local s = session
    if s and s.bufnr == ev.buf and tick ~= s.tick then
      s.update_pending = false -- the requested document moved on: its update is stale
    end
    if s and not s.update_pending and M.count() == 0 then session = nil end
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
