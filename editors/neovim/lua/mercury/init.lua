-- mercury-lsp for Neovim >= 0.11: ghost text (Neovim 0.12's vim.lsp.inline_completion, drawn by
-- lua/mercury/ghost.lua on 0.11), next-edit suggestions (lua/mercury/next_edit.lua), a statusline
-- component and :checkhealth mercury.
--
--   require('mercury').setup({ settings = { preset = 'balanced' } })
local M = {}

M.MIN_VERSION = 'nvim-0.11' -- vim.lsp.config / vim.lsp.enable
M.enabled = true -- :MercuryToggle

---@class mercury.Keys
---@field accept string|false            insert: accept the ghost text (else the key's own action)
---@field accept_confident string|false  insert: accept up to the first low-confidence token
---@field accept_word string|false       insert: accept the suggestion's next word
---@field accept_line string|false       insert: accept the suggestion's next line
---@field next string|false              insert: next suggestion
---@field prev string|false              insert: previous suggestion
---@field next_edit string|false         normal/insert: predict the next edit now
---@field next_edit_accept string|false  normal: jump to the next predicted edit, then accept it
---@field next_edit_dismiss string|false normal: dismiss the predicted edits

M.defaults = {
  cmd = { 'mercury-lsp', 'serve' },
  filetypes = { 'python', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact', 'go', 'rust',
                'java', 'c', 'cpp', 'lua', 'sh' },
  root_markers = { '.git' },
  -- Server settings (mercury_lsp/config.py, camelCase), e.g. { preset = 'fast', maxTokens = 64 }.
  settings = {},
  ghost_text = true,
  ---@type mercury.Keys
  keys = {
    accept = '<Tab>',
    accept_confident = '<M-l>',
    accept_word = '<M-Right>', -- copilot.vim's keys for these two
    accept_line = '<M-C-Right>',
    next = '<M-]>',
    prev = '<M-[>',
    next_edit = '<M-n>',
    next_edit_accept = '<Tab>',
    next_edit_dismiss = '<Esc>',
  },
  next_edit = {
    auto = true, -- predict after leaving insert mode when the buffer changed
  },
  -- Ghost-text highlight visible without 'termguicolors' (256 colours); false: keep ComplHint.
  highlight = { fg = '#808080', ctermfg = 244, italic = true },
}

M.config = vim.deepcopy(M.defaults)
M.state = 'stopped' ---@type 'stopped'|'starting'|'loading'|'ready'|'error'|'disabled'
M.message = ''

local function notify_status(state, message)
  M.state, M.message = state, message or ''
  vim.g.mercury_status = state
  vim.api.nvim_exec_autocmds('User', { pattern = 'MercuryStatus', modeline = false })
  vim.cmd.redrawstatus({ bang = true, mods = { emsg_silent = true } })
end

--- A statusline component: '' when not started, 'mercury' when ready, else 'mercury: <state>'.
function M.status()
  if M.state == 'stopped' then return '' end
  return M.state == 'ready' and 'mercury' or ('mercury: ' .. M.state)
end

function M.client(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr or 0, name = 'mercury' })[1]
end

--- Highlights: ghost text readable in 256-colour terminals (unless a colorscheme styles ComplHint).
function M.highlights()
  local hl = M.config.highlight
  if hl then
    vim.api.nvim_set_hl(0, 'MercuryGhost', vim.tbl_extend('force', hl, { default = true }))
    local compl = vim.api.nvim_get_hl(0, { name = 'ComplHint', link = true })
    if vim.tbl_isempty(compl) or compl.link == 'NonText' or compl.link == 'MercuryGhost' then
      vim.api.nvim_set_hl(0, 'ComplHint', { link = 'MercuryGhost' })
    end
  end
  vim.api.nvim_set_hl(0, 'MercuryNextEditOld', { strikethrough = true, fg = '#d75f5f', ctermfg = 167, default = true })
  vim.api.nvim_set_hl(0, 'MercuryNextEditNew', { fg = '#87af87', ctermfg = 108, bold = true, default = true })
  vim.api.nvim_set_hl(0, 'MercuryNextEditCurrent',
    { strikethrough = true, underline = true, fg = '#d75f5f', ctermfg = 167, default = true })
end

--- Insert the confident part of an inline item (vim.lsp.inline_completion.Item), else all of it.
function M.insert_confident(item)
  local arg = item.command and item.command.arguments and item.command.arguments[1] or {}
  local text = type(arg) == 'table' and arg.confidentText or nil
  local range = item.range
  if not range then return end
  if type(text) ~= 'string' then
    text, arg = item.insert_text, nil -- nothing marked unsure: the whole suggestion
  end
  if type(text) ~= 'string' then return end
  local bufnr = vim.api.nvim_get_current_buf()
  local lines = vim.split(text, '\n', { plain = true })
  -- The item replaces the cursor's line: the text after the cursor stays after it.
  local line = vim.api.nvim_buf_get_lines(bufnr, range.start.row, range.start.row + 1, true)[1]
  local after = line:sub(vim.api.nvim_win_get_cursor(0)[2] + 1, range.end_.col)
  vim.api.nvim_buf_set_text(bufnr, range.start.row, range.start.col, range.end_.row, range.end_.col, lines)
  local last = lines[#lines]
  vim.api.nvim_win_set_cursor(0, { range.start.row + #lines,
    (#lines == 1 and range.start.col or 0) + #last - #after })
  local client = vim.lsp.get_client_by_id(item.client_id)
  if client and item.command then
    client:exec_cmd({ title = item.command.title, command = item.command.command,
                      arguments = { { partial = arg ~= nil } } }, { bufnr = bufnr })
  end
end

--- Accept only the confident part of the ghost text (up to the model's first unsure token).
function M.accept_confident()
  return require('mercury.ghost').take(function(item)
    M.insert_confident({ insert_text = item.text, client_id = item.client_id, command = item.command,
                         range = item.range and { start = { row = item.range.row, col = item.range.col },
                                                  end_ = { row = item.range.end_row, col = item.range.end_col } } })
  end)
end

local function map(mode, lhs, rhs, desc, opts)
  if lhs then vim.keymap.set(mode, lhs, rhs, vim.tbl_extend('force', { desc = 'mercury: ' .. desc }, opts or {})) end
end

local function keymaps(keys)
  local ghost = require('mercury.ghost')
  -- With no suggestion shown, a key does what it does without mercury.
  local function accepting(key, kind, desc)
    map('i', key, function()
      if not ghost.accept(kind) then return key end
      return ''
    end, desc, { expr = true, replace_keycodes = true })
  end
  accepting(keys.accept, 'all', 'accept the suggestion')
  accepting(keys.accept_word, 'word', "accept the suggestion's next word")
  accepting(keys.accept_line, 'line', "accept the suggestion's next line")
  map('i', keys.accept_confident, function() M.accept_confident() end, 'accept the confident part')
  map('i', keys.next, function() ghost.select(1) end, 'next suggestion')
  map('i', keys.prev, function() ghost.select(-1) end, 'previous suggestion')
  local ne = require('mercury.next_edit')
  map({ 'n', 'i' }, keys.next_edit, function() ne.request(0) end, 'predict the next edit')
  map('n', keys.next_edit_accept, function()
    if not ne.visible(0) then return keys.next_edit_accept end
    vim.schedule(function() ne.jump_or_accept(0) end)
    return ''
  end, 'jump to / accept the next edit', { expr = true, replace_keycodes = true })
  map('n', keys.next_edit_dismiss, function()
    if not ne.visible(0) then return keys.next_edit_dismiss end
    vim.schedule(function() ne.dismiss(0) end)
    return ''
  end, 'dismiss the predicted edits', { expr = true, replace_keycodes = true })
end

function M.setup(opts)
  if vim.fn.has(M.MIN_VERSION) == 0 then
    vim.notify('mercury: Neovim >= 0.11 is required (vim.lsp.config)', vim.log.levels.ERROR)
    return
  end
  local ghost = require('mercury.ghost')
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  local cfg = M.config
  local settings = next(cfg.settings) and cfg.settings or vim.empty_dict()
  vim.lsp.config('mercury', {
    cmd = cfg.cmd,
    cmd_cwd = cfg.cmd_cwd,
    filetypes = cfg.filetypes,
    root_markers = cfg.root_markers,
    root_dir = cfg.root_dir,
    init_options = settings,
    settings = { mercury = settings },
    handlers = {
      ['mercury/status'] = function(_, result)
        notify_status(result.state, result.message)
        if result.state == 'error' then
          vim.notify('mercury-lsp: ' .. (result.message or 'error'), vim.log.levels.ERROR)
        end
      end,
      -- The workspace files' edits of a next-edit answer, sent after it (lua/mercury/next_edit.lua).
      ['mercury/nextEditUpdate'] = function(_, result) require('mercury.next_edit').on_update(result) end,
    },
    on_init = function(client)
      ghost.guard(client) -- no stale ghost text (lua/mercury/ghost.lua)
      notify_status('starting')
    end,
    on_exit = function()
      vim.schedule(function() if M.state ~= 'disabled' then notify_status('stopped') end end)
    end,
  })
  vim.lsp.enable('mercury')
  M.enabled = cfg.ghost_text
  if cfg.ghost_text and ghost.core then vim.lsp.inline_completion.enable() end
  M.highlights()
  local group = vim.api.nvim_create_augroup('mercury', { clear = true })
  vim.api.nvim_create_autocmd('ColorScheme', { group = group, callback = M.highlights })
  ghost.attach(group)
  require('mercury.next_edit').attach(group, cfg.next_edit)
  keymaps(cfg.keys)
end

--- Stop (or start again) the server and ghost text.
function M.toggle()
  local ghost = require('mercury.ghost')
  if M.state == 'disabled' or M.state == 'stopped' then
    vim.lsp.enable('mercury', true)
    M.enabled = M.config.ghost_text
    if M.config.ghost_text and ghost.core then vim.lsp.inline_completion.enable(true) end
  else
    M.enabled = false
    if ghost.core then vim.lsp.inline_completion.enable(false) end
    ghost.clear()
    vim.lsp.enable('mercury', false)
    notify_status('disabled')
  end
end

return M
