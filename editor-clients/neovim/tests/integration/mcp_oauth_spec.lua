-- OAuth login of an HTTP MCP server from Neovim against the real server and a real OAuth
-- authorisation server (the SDK's, started by the Python test): the server shows needs_login
-- with a notice, :AgentMcp login opens the authorisation URL (window/showDocument external ->
-- vim.ui.open, captured here), the "browser" (a Python process) follows it to the loopback
-- callback, the server becomes ready and its tool runs; :AgentMcp logout forgets the token.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local WAIT_MCP = 60000 -- ms; an MCP server's start and a login under load (never timing)
local URL = assert(vim.env.LSP_AGENT_TEST_OAUTH_URL, 'LSP_AGENT_TEST_OAUTH_URL is not set')
local PYTHON = assert(vim.env.LSP_AGENT_TEST_PYTHON, 'LSP_AGENT_TEST_PYTHON is not set')

-- The browser: GET the URL, follow its redirects (to the loopback callback), print the status.
local BROWSER = 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).status)'

H.test('log in to an HTTP server and use its tool', function()
  local opened = {}
  vim.ui.open = function(uri)
    table.insert(opened, uri)
    return { wait = function() return { code = 0 } end }
  end
  local notices = {}
  local notify = vim.notify
  vim.notify = function(msg, ...)
    table.insert(notices, msg)
    return notify(msg, ...)
  end

  local agent = E.setup({ mcp_servers = { secure = { type = 'http', url = URL } } })
  local _, client = E.open('main.py')
  local mcp = require('lsp_agent.mcp')
  local function state()
    local known = mcp.known(client.id)
    return known and known.servers[1] and known.servers[1].state
  end
  mcp.list(client, function() end)
  H.wait(WAIT_MCP, function()
    return state() == 'needs_login'
  end, 'the server to need a login')
  H.wait(E.WAIT, function()
    return vim.iter(notices):any(function(m) return m:find(':AgentMcp login secure', 1, true) end)
  end, 'the needs-login notice')
  vim.cmd('checkhealth lsp_agent')
  local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.cmd('bwipeout!')
  H.ok(health:find('secure  needs_login', 1, true) and health:find(':AgentMcp login secure', 1, true),
    health)

  vim.cmd('AgentMcp login secure')
  H.wait(WAIT_MCP, function()
    return #opened == 1
  end, 'the authorisation URL to be opened')
  H.ok(opened[1]:find('code_challenge=', 1, true), opened[1])
  local browser = vim.system({ PYTHON, '-c', BROWSER, opened[1] }, { text = true }):wait(WAIT_MCP)
  H.eq(vim.trim(browser.stdout), '200', browser.stderr)
  H.wait(WAIT_MCP, function()
    return state() == 'ready'
  end, 'the server to be ready after the login')
  H.wait(E.WAIT, function()
    return vim.iter(notices):any(function(m) return m:find('secure: logged in', 1, true) end)
  end, 'the logged-in notice')
  local line = mcp.format(mcp.known(client.id).servers[1])
  H.ok(line:find('logged in (:AgentMcp logout secure)', 1, true), line)

  agent.chat({ prompt = 'who am I?' })
  local p = E.permission()
  H.eq(p:title(), 'secure: whoami')
  p:answer('allow_once')
  E.wait_idle(E.session(client))

  vim.cmd('AgentMcp logout secure')
  H.wait(WAIT_MCP, function()
    return state() == 'needs_login'
  end, 'the server to need a login again after logout')
  line = mcp.format(mcp.known(client.id).servers[1])
  H.ok(not line:find('logged in', 1, true), line)
end)

E.finish()
