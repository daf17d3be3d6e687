-- mercury-lsp for Neovim >= 0.12: ghost-text completions from a local diffusion model.
-- Put this file in your config (e.g. ~/.config/nvim/plugin/mercury.lua) and make sure
-- `mercury-lsp` is on PATH (or set `cmd` to the full path of the virtualenv's binary).

vim.lsp.config('mercury', {
  cmd = { 'mercury-lsp', 'serve' },
  filetypes = { 'python', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact',
                'go', 'rust', 'java', 'c', 'cpp', 'lua', 'sh' },
  root_markers = { '.git' },
  -- Every field is optional; invalid ones are reported once and replaced by defaults.
  init_options = {
    -- model = '/path/to/checkpoint',   -- default: the embedded model
    preset = 'balanced',                -- 'fast' | 'balanced' | 'quality'
    maxTokens = 96,
    debounceMs = 0,                     -- Neovim already waits 200 ms after a keystroke
  },
  settings = { mercury = {} },          -- sent with workspace/didChangeConfiguration
  handlers = {
    -- Model state for a statusline: 'loading' | 'ready' | 'error'.
    ['mercury/status'] = function(_, result)
      vim.g.mercury_status = result.state
      if result.state == 'error' then
        vim.notify('mercury-lsp: ' .. result.message, vim.log.levels.ERROR)
      end
    end,
  },
})

vim.lsp.enable('mercury')
vim.lsp.inline_completion.enable()

-- <Tab> accepts the suggestion (falls back to a normal <Tab>); <M-]>/<M-[> cycle.
vim.keymap.set('i', '<Tab>', function()
  if not vim.lsp.inline_completion.get() then
    return '<Tab>'
  end
end, { expr = true, desc = 'mercury: accept inline completion' })
vim.keymap.set('i', '<M-]>', function() vim.lsp.inline_completion.select({ count = 1 }) end)
vim.keymap.set('i', '<M-[>', function() vim.lsp.inline_completion.select({ count = -1 }) end)
