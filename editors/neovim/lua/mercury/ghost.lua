-- Ghost text: shown only for the buffer, text, cursor and mode it was asked for.
--
-- Neovim >= 0.12 draws it with `vim.lsp.inline_completion`; this module guards that: an answer
-- that arrives after the user left insert mode, changed buffer, typed on or moved (an answer that
-- crossed its `$/cancelRequest` on the wire, or one a newer request superseded) paints nothing,
-- and what is shown is cleared on every mode change, buffer or window change and normal-mode edit.
-- Neovim 0.11 has no `vim.lsp.inline_completion`: the same requests and rules, drawn here.
--
-- Accepting works on either: the whole suggestion, its next word, its next line, or (init.lua)
-- its confident part; a partial accept tells the server (`mercury.accepted` { partial = true }),
-- and the rest comes back at once from its typeahead cache as ghost text again.
local M = {}

local api = vim.api
local CORE_NS = 'nvim.lsp.inline_completion'
local ns = api.nvim_create_namespace('mercury.ghost') -- the 0.11 drawing
local METHOD = 'textDocument/inlineCompletion'
-- 0.11: wait this long after the last keystroke before asking (Neovim 0.12's own debounce is 200 ms;
-- shorter here: the server answers typing-along from its cache without the model).
local DEBOUNCE_MS = 75
local AUTOMATIC = 2 -- lsp.InlineCompletionTriggerKind

--- True where Neovim draws inline completions itself (0.12+).
M.core = vim.lsp.inline_completion ~= nil
M.dropped = 0 -- answers that arrived stale and were not drawn (tests read it)

---@class mercury.GhostItem  an inline completion, the same on 0.11 and 0.12
---@field text string
---@field range? { row: integer, col: integer, end_row: integer, end_col: integer }  0-based, bytes
---@field command? table
---@field client_id integer

---@type { bufnr: integer, item: mercury.GhostItem, items: table[], index: integer, encoding: string }?
local shown = nil -- 0.11: what is drawn
local timer = nil ---@type uv.uv_timer_t?
local inflight = nil ---@type { client: vim.lsp.Client, id: integer }?

local function in_insert()
  return api.nvim_get_mode().mode:sub(1, 1) == 'i'
end

--- What an answer must still match to be drawn: buffer, text, cursor, insert mode.
local function snapshot()
  local bufnr = api.nvim_get_current_buf()
  return { bufnr = bufnr, tick = api.nvim_buf_get_changedtick(bufnr), cursor = api.nvim_win_get_cursor(0),
           insert = in_insert() }
end

local function fresh(snap)
  if not snap.insert or not in_insert() or api.nvim_get_current_buf() ~= snap.bufnr then return false end
  if api.nvim_buf_get_changedtick(snap.bufnr) ~= snap.tick then return false end
  local c = api.nvim_win_get_cursor(0)
  return c[1] == snap.cursor[1] and c[2] == snap.cursor[2]
end

local function stop_timer()
  if timer and not timer:is_closing() then
    timer:stop()
    timer:close()
  end
  timer = nil
end

local function cancel_inflight()
  if inflight then
    pcall(inflight.client.cancel_request, inflight.client, inflight.id)
    inflight = nil
  end
end

--- Clear the ghost text of `bufnr` (every loaded buffer when nil): Neovim's and this module's.
function M.clear(bufnr)
  local core_ns = api.nvim_get_namespaces()[CORE_NS]
  local bufs = bufnr and { bufnr } or api.nvim_list_bufs()
  for _, b in ipairs(bufs) do
    if api.nvim_buf_is_valid(b) then
      api.nvim_buf_clear_namespace(b, ns, 0, -1)
      if core_ns then api.nvim_buf_clear_namespace(b, core_ns, 0, -1) end
    end
  end
  if not bufnr or (shown and shown.bufnr == bufnr) then shown = nil end
end

--- Whether `handler` is vim.lsp.inline_completion's (the requests whose answers it draws; a
--- request of another plugin, or request_sync, is left alone).
local function drawn_by_core(handler)
  local info = debug.getinfo(handler, 'S')
  return info ~= nil and info.source:find('lsp/inline_completion.lua', 1, true) ~= nil
end

--- Neovim 0.12: answers to its inline-completion requests are drawn only while still fresh (also
--- one its debounce timer sent after the user left insert mode: the snapshot is not in insert mode).
function M.guard(client)
  if not M.core or client._mercury_guarded then return end
  client._mercury_guarded = true
  local request = client.request
  client.request = function(self, method, params, handler, bufnr, ...)
    if method == METHOD and handler and drawn_by_core(handler) then
      local snap, inner = snapshot(), handler
      handler = function(err, result, ctx)
        if not fresh(snap) then
          M.dropped = M.dropped + 1
          return -- the user moved on: nothing stale is painted
        end
        return inner(err, result, ctx)
      end
    end
    return request(self, method, params, handler, bufnr, ...)
  end
end

-- ---------------------------------------------------------------- items

local function byte_col(line, character, encoding)
  if encoding == 'utf-8' then return math.min(character, #line) end
  local ok, col = pcall(vim.str_byteindex, line, encoding, character, false)
  return ok and col or #line
end

--- An LSP InlineCompletionItem as a mercury.GhostItem (byte columns of the buffer).
local function from_lsp(bufnr, raw, client_id, encoding)
  local text = type(raw.insertText) == 'table' and raw.insertText.value or raw.insertText
  if type(text) ~= 'string' then return nil end
  local item = { text = text, command = raw.command, client_id = client_id }
  local r = raw.range
  if r then
    local function line(n) return api.nvim_buf_get_lines(bufnr, n, n + 1, false)[1] or '' end
    item.range = { row = r.start.line, col = byte_col(line(r.start.line), r.start.character, encoding),
                   end_row = r['end'].line, end_col = byte_col(line(r['end'].line), r['end'].character, encoding) }
  end
  return item
end

--- A `vim.lsp.inline_completion.Item` (0.12) as a mercury.GhostItem.
local function from_core(item)
  local text = type(item.insert_text) == 'table' and item.insert_text.value or item.insert_text
  local r = item.range
  return { text = text, command = item.command, client_id = item.client_id,
           range = r and { row = r.start.row, col = r.start.col, end_row = r.end_.row, end_col = r.end_.col } }
end

--- What the item adds at the cursor: its text past what is typed of it already (nil when the
--- text before the cursor is no longer the item's start).
local function rest(item, bufnr, row, col)
  local r = item.range
  local typed = ''
  if r then
    if r.row ~= row or r.col > col then return nil end
    typed = (api.nvim_buf_get_lines(bufnr, row, row + 1, true)[1] or ''):sub(r.col + 1, col)
  end
  if item.text:sub(1, #typed) ~= typed then return nil end
  return item.text:sub(#typed + 1)
end

-- ---------------------------------------------------------------- 0.11: request and draw

local function draw(bufnr, item)
  api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  local cursor = api.nvim_win_get_cursor(0)
  local more = rest(item, bufnr, cursor[1] - 1, cursor[2])
  if not more or more == '' then return false end
  local lines = vim.split(more, '\n', { plain = true })
  local virt_lines = {}
  for i = 2, #lines do virt_lines[#virt_lines + 1] = { { lines[i], 'ComplHint' } } end
  api.nvim_buf_set_extmark(bufnr, ns, cursor[1] - 1, cursor[2], {
    virt_text = { { lines[1], 'ComplHint' } }, virt_text_pos = 'inline',
    virt_lines = #virt_lines > 0 and virt_lines or nil, hl_mode = 'combine',
  })
  return true
end

local function show(bufnr, items, index, client)
  local item = items[index] and from_lsp(bufnr, items[index], client.id, client.offset_encoding)
  if item and draw(bufnr, item) then
    shown = { bufnr = bufnr, item = item, items = items, index = index, encoding = client.offset_encoding }
  else
    M.clear(bufnr)
  end
end

--- 0.11: ask the server for the suggestion at the cursor (drawn if still fresh when it answers).
function M.request(kind)
  local bufnr = api.nvim_get_current_buf()
  local client = require('mercury').client(bufnr)
  if M.core or not client or not in_insert() then return end
  cancel_inflight()
  local snap = snapshot()
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.context = { triggerKind = kind or AUTOMATIC }
  local ok, id = client:request(METHOD, params, function(err, result)
    inflight = nil
    if err or not fresh(snap) then
      if not err then M.dropped = M.dropped + 1 end
      return
    end
    local items = result and (result.items or result) or {}
    show(bufnr, items, 1, client)
  end, bufnr)
  if ok then inflight = { client = client, id = id } end
end

local function schedule_request()
  stop_timer()
  timer = vim.defer_fn(function()
    timer = nil
    M.request(AUTOMATIC)
  end, DEBOUNCE_MS)
end

--- 0.11: the next/previous suggestion of the last answer.
function M.select(count)
  if M.core then return vim.lsp.inline_completion.select({ count = count }) end
  if not shown or #shown.items < 2 then return end
  local client = vim.lsp.get_client_by_id(shown.item.client_id)
  if client then show(shown.bufnr, shown.items, (shown.index - 1 + count) % #shown.items + 1, client) end
end

-- ---------------------------------------------------------------- accepting

local function next_word(s)
  if s:match('^\r?\n') then return s:match('^\r?\n[ \t]*') end -- the line break and the indent after it
  return s:match('^[ \t]*[%w_]+') or s:match('^[ \t]*[^%w_%s]+') or s
end

local function next_line(s)
  local br = s:match('^\r?\n')
  if br then return br .. (s:sub(#br + 1):match('^[^\r\n]*')) end
  return s:match('^[^\r\n]*')
end

--- Insert all of `item` (it replaces its range), or its next word or line (inserted at the cursor).
---@param kind 'all'|'word'|'line'
function M.insert(item, kind)
  local bufnr = api.nvim_get_current_buf()
  local cursor = api.nvim_win_get_cursor(0)
  local row, col = cursor[1] - 1, cursor[2]
  local more = rest(item, bufnr, row, col)
  if not more then return false end
  local part = kind == 'word' and next_word(more) or kind == 'line' and next_line(more) or more
  local lines = vim.split(part, '\n', { plain = true })
  if kind == 'all' and item.range then
    local r = item.range
    local whole = vim.split(item.text, '\n', { plain = true })
    api.nvim_buf_set_text(bufnr, r.row, r.col, r.end_row, r.end_col, whole)
    api.nvim_win_set_cursor(0, { r.row + #whole, (#whole == 1 and r.col or 0) + #whole[#whole] })
  else
    api.nvim_buf_set_text(bufnr, row, col, row, col, lines)
    api.nvim_win_set_cursor(0, { row + #lines, (#lines == 1 and col or 0) + #lines[#lines] })
  end
  local client = vim.lsp.get_client_by_id(item.client_id)
  if client and item.command then
    local partial = kind ~= 'all' and part ~= more
    client:exec_cmd({ title = item.command.title, command = item.command.command,
                      arguments = { { partial = partial } } }, { bufnr = bufnr })
  end
  return true
end

--- Accept the shown suggestion (`kind`: all of it, its next word, its next line). Returns false
--- when none is shown (the key then does what it does without mercury).
---@param kind 'all'|'word'|'line'
function M.accept(kind)
  if M.core then
    if kind == 'all' then return vim.lsp.inline_completion.get() end
    return vim.lsp.inline_completion.get({ on_accept = function(item) M.insert(from_core(item), kind) end })
  end
  if not shown or shown.bufnr ~= api.nvim_get_current_buf() then return false end
  local item = shown.item
  M.clear(shown.bufnr)
  vim.schedule(function() M.insert(item, kind) end) -- after the <expr> mapping returns
  return true
end

--- The shown suggestion as a mercury.GhostItem, handed to `on_accept` (then cleared); false if none.
function M.take(on_accept)
  if M.core then
    return vim.lsp.inline_completion.get({ on_accept = function(item) on_accept(from_core(item)) end })
  end
  if not shown or shown.bufnr ~= api.nvim_get_current_buf() then return false end
  local item = shown.item
  M.clear(shown.bufnr)
  vim.schedule(function() on_accept(item) end)
  return true
end

function M.visible(bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  local core_ns = api.nvim_get_namespaces()[CORE_NS]
  local function any(n) return n and #api.nvim_buf_get_extmarks(bufnr, n, 0, -1, { limit = 1 }) > 0 end
  return any(ns) or any(core_ns)
end

--- Autocommands: clear on every mode, buffer, window and normal-mode text change; 0.11 also asks
--- after each keystroke in insert mode.
function M.attach(group)
  local function clear(ev)
    stop_timer()
    cancel_inflight()
    M.clear(ev.buf)
  end
  api.nvim_create_autocmd('ModeChanged', { group = group, pattern = 'i*:*', callback = clear })
  api.nvim_create_autocmd({ 'BufLeave', 'WinLeave', 'TextChanged' }, { group = group, callback = clear })
  if not M.core then
    api.nvim_create_autocmd({ 'InsertEnter', 'CursorMovedI', 'TextChangedI' }, { group = group, callback = function(ev)
      if not require('mercury').enabled then return end
      if shown and shown.bufnr == ev.buf and draw(ev.buf, shown.item) then
        -- typed along the suggestion: keep drawing its rest until the fresh answer comes
      else
        M.clear(ev.buf)
      end
      schedule_request()
    end })
  end
end

return M
