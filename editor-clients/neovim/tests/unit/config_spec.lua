-- Options: defaults, merging, validation errors that name the option.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../harness.lua')
local config = require('lsp_agent.config')

H.test('defaults', function()
  local opts = config.set({})
  H.eq(opts.cmd, { 'lsp-agent', 'serve' })
  H.eq(opts.trust.default, 'ask')
  H.eq(opts.chat.position, 'right')
  H.eq(opts.keymaps.review.later, 'q')
  H.ok(config.is_set())
end)

H.test('user values override; lists replace instead of merging', function()
  local opts = config.set({
    cmd = { 'python', '-m', 'lsp_agent', 'serve' },
    root_markers = { '.git' },
    model = 'claude-sonnet-4-5',
    permission_mode = 'acceptEdits',
    chat = { width = 100 },
    trust = { folders = { '/a' } },
  })
  H.eq(opts.cmd, { 'python', '-m', 'lsp_agent', 'serve' })
  H.eq(opts.root_markers, { '.git' })
  H.eq(opts.chat.width, 100)
  H.eq(opts.chat.position, 'right', 'siblings keep defaults')
  H.eq(opts.model, 'claude-sonnet-4-5')
  H.eq(opts.trust.folders, { '/a' })
end)

H.test('a keymap group set to false is emptied; single keys can be disabled', function()
  local opts = config.set({ keymaps = { global = false, chat = { close = false } } })
  H.eq(opts.keymaps.global, {})
  H.eq(opts.keymaps.chat.close, false)
  H.eq(opts.keymaps.chat.submit, '<CR>')
end)

H.test('unknown options are reported with their path', function()
  H.raises(function()
    config.set({ chat = { widht = 1 }, colour = 'red' })
  end, 'unknown option(s): chat.widht, colour')
end)

H.test('bad values name the option', function()
  H.raises(function()
    config.set({ cmd = {} })
  end, 'cmd must not be empty')
  H.raises(function()
    config.set({ permission_mode = 'yolo' })
  end, 'permission_mode must be one of default, acceptEdits, plan, bypassPermissions, dontAsk')
  H.raises(function()
    config.set({ chat = { position = 'middle' } })
  end, 'chat.position')
  H.raises(function()
    config.set({ trust = { default = 'maybe' } })
  end, 'trust.default')
  H.raises(function()
    config.set({ model = 42 })
  end, 'option model must be string')
  H.raises(function()
    config.set({ mcp_servers = 'github' })
  end, 'option mcp_servers must be table')
  H.raises(function()
    config.set({ server_log_level = 'loud' })
  end, 'server_log_level')
  H.raises(function()
    config.set('nope')
  end, 'expects a table')
end)

H.test('setup() reports a bad option without raising', function()
  local messages = {}
  local notify = vim.notify
  vim.notify = function(msg, level)
    table.insert(messages, { msg, level })
  end
  require('lsp_agent').setup({ bogus = true })
  vim.notify = notify
  H.eq(messages, { { 'lsp-agent: lsp_agent: unknown option(s): bogus', vim.log.levels.ERROR } })
end)

H.test('the version command is cmd up to "serve" plus --version', function()
  local health = require('lsp_agent.health')
  config.set({ cmd = { '/venv/bin/python', '-m', 'lsp_agent', 'serve', '--log-file', 'x' } })
  H.eq(health.version_cmd(), { '/venv/bin/python', '-m', 'lsp_agent', '--version' })
  config.set({ cmd = { 'lsp-agent', 'serve' }, version_cmd = { 'lsp-agent', '-V' } })
  H.eq(health.version_cmd(), { 'lsp-agent', '-V' })
end)

H.finish()
