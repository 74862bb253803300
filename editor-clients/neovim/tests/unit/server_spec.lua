-- Which buffers get a server, root detection, the client config, and a missing server binary.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../harness.lua')
local config = require('lsp_agent.config')
local server = require('lsp_agent.server')

local root = vim.fs.normalize(vim.fn.tempname())
vim.fn.mkdir(root .. '/.git', 'p')
vim.fn.mkdir(root .. '/src', 'p')
vim.fn.writefile({ 'x = 1' }, root .. '/src/a.py')
local outside = vim.fs.normalize(vim.fn.tempname())
vim.fn.mkdir(outside, 'p')
vim.fn.writefile({ 'y' }, outside .. '/b.txt')

H.test('project file buffers want a server; others do not', function()
  config.set({})
  vim.cmd.edit(root .. '/src/a.py')
  local file_buf = vim.api.nvim_get_current_buf()
  H.ok(server.wants_buf(file_buf))
  H.eq(server.root_for_buf(file_buf), root)
  local scratch = vim.api.nvim_create_buf(false, true)
  H.eq(server.wants_buf(scratch), false, 'scratch')
  local named = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_buf_set_name(named, 'fugitive:///repo/.git//0/a.py')
  H.eq(server.wants_buf(named), false, 'non-file scheme')
  vim.cmd('help help')
  H.eq(server.wants_buf(vim.api.nvim_get_current_buf()), false, 'help buffer')
  vim.cmd('close')
  vim.cmd.edit(outside .. '/b.txt')
  H.eq(server.root_for_buf(vim.api.nvim_get_current_buf()), nil, 'no marker, no root')
end)

H.test('filetypes and root_dir options', function()
  config.set({ filetypes = { 'lua' } })
  local buf = vim.fn.bufnr(root .. '/src/a.py')
  H.eq(server.wants_buf(buf), false)
  config.set({ root_dir = function(b)
    return 'custom:' .. b
  end })
  H.eq(server.root_for_buf(buf), 'custom:' .. buf)
  config.set({ root_dir = '/fixed' })
  H.eq(server.root_for_buf(buf), '/fixed')
end)

H.test('the client config carries trust, mode, model, handlers and documentChanges', function()
  config.set({ model = 'm', permission_mode = 'plan', cmd_env = { A = '1' } })
  local c = server.client_config('/r', false)
  H.eq(c.name, 'lsp_agent')
  H.eq(c.root_dir, '/r')
  H.eq(c.cmd_env, { A = '1' })
  H.eq(c.init_options, { lspAgent = {
    trusted = false,
    permissionMode = 'plan',
    model = 'm',
    logLevel = 'warning',
    clientCapabilities = { saveDocuments = true, reloadDocuments = true, mcpElicitation = true },
  } })
  H.eq(c.capabilities.workspace.workspaceEdit.documentChanges, true)
  H.eq(c.handlers, server.handlers)
  config.set({ mcp_servers = { ed = { command = 'srv', args = { '--x' } } } })
  H.eq(server.client_config('/r', false).init_options.lspAgent.mcpServers,
    { ed = { command = 'srv', args = { '--x' } } })
  config.set({ mcp_servers = {} })
  H.eq(server.client_config('/r', false).init_options.lspAgent.mcpServers, nil)
end)

H.test('a missing server binary is reported once, without raising', function()
  local messages = {}
  local notify, notify_once = vim.notify, vim.notify_once
  vim.notify = function(msg)
    table.insert(messages, msg)
  end
  vim.notify_once = function(msg)
    table.insert(messages, 'once: ' .. msg)
  end
  config.set({ cmd = { 'lsp-agent-not-installed-anywhere', 'serve' }, trust = { default = true } })
  local results = {}
  server.attach(vim.fn.bufnr(root .. '/src/a.py'), function(client, err)
    table.insert(results, { client = client, err = err })
  end)
  vim.notify, vim.notify_once = notify, notify_once
  H.eq(#results, 1)
  H.eq(results[1].client, nil)
  H.ok(results[1].err:find('could not start the lsp-agent server', 1, true), results[1].err)
  H.eq(#messages, 1, vim.inspect(messages))
  H.ok(messages[1]:find('once: lsp-agent: could not start the server '
    .. '(lsp-agent-not-installed-anywhere serve)', 1, true), messages[1])
  local log = table.concat(require('lsp_agent.log').entries(), '\n')
  H.ok(log:find('could not start lsp-agent-not-installed-anywhere serve', 1, true), log)
end)

H.test('a server that cannot start is explained, never "nil"', function()
  local server = require('lsp_agent.server')
  H.eq(server.start_failure_reason({ 'lsp-agent-missing-binary', 'serve' }, nil),
    '"lsp-agent-missing-binary" is not an executable on PATH')
  H.eq(server.start_failure_reason({ 'sh' }, nil),
    'the command did not start (see :AgentLog and :LspLog)')
  H.eq(server.start_failure_reason({ 'sh' }, 'spawn failed'), 'spawn failed')
end)

H.finish()
