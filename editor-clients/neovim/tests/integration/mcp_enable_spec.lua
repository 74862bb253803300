-- :AgentMcp disable/enable against the real server with a real MCP server (the SDK fixture,
-- defined in setup{mcp_servers}): the server turns off for the project (state "disabled" via
-- didChange, :checkhealth says how to turn it on), the next turn's request has none of its
-- tools, and it comes back when turned on. Both words and the server's name complete.
-- Scenario: tests/clients/neovim/test_integration_mcp.py::test_mcp_enable_disable.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local WAIT_MCP = 60000 -- ms; an MCP server's start under load (never a timing assertion)

local fixture = vim.json.decode((assert(vim.env.LSP_AGENT_TEST_MCP, 'LSP_AGENT_TEST_MCP is not set')))
local agent = E.setup({ mcp_servers = { ed = fixture } })
local mcp = require('lsp_agent.mcp')

local function state_of(client, name)
  local known = mcp.known(client.id)
  for _, server in ipairs(known and known.servers or {}) do
    if server.name == name then
      return server.state
    end
  end
end

H.test('turn a server off and on again', function()
  local _, client = E.open('main.py')
  H.wait(WAIT_MCP, function()
    local done = false
    mcp.list(client, function()
      done = true
    end)
    vim.wait(E.WAIT, function()
      return done
    end, 10)
    return state_of(client, 'ed') == 'ready'
  end, 'the ed server to be ready')

  H.ok(vim.tbl_contains(vim.fn.getcompletion('AgentMcp ', 'cmdline'), 'disable'), 'disable completes')
  H.ok(vim.tbl_contains(vim.fn.getcompletion('AgentMcp ', 'cmdline'), 'enable'), 'enable completes')
  H.eq(vim.fn.getcompletion('AgentMcp disable ', 'cmdline'), { 'ed' })

  -- An open :AgentMcp list follows disable/enable in place (no second window).
  local view, view_text = E.open_mcp_view()
  H.ok(view_text():find('ed  ready', 1, true), view_text())

  vim.cmd('AgentMcp disable ed')
  H.wait(E.WAIT, function()
    return state_of(client, 'ed') == 'disabled'
  end, 'ed to be disabled (didChange)')
  H.wait(E.WAIT, function()
    return view_text():find('ed  disabled', 1, true) ~= nil
  end, 'the open :AgentMcp buffer to show ed disabled')

  vim.cmd('checkhealth lsp_agent')
  local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.cmd('bwipeout!')
  H.ok(health:find('ed  disabled', 1, true), health)
  H.ok(health:find(':AgentMcp enable ed', 1, true), health)

  -- The turn's request has none of ed's tools (the scenario checks the request body).
  agent.chat({ prompt = 'anything from ed?' })
  local s = E.session(client)
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')

  vim.cmd('AgentMcp enable ed')
  H.wait(WAIT_MCP, function()
    return state_of(client, 'ed') == 'ready'
  end, 'ed to be ready again')
  H.wait(E.WAIT, function()
    return view_text():find('ed  ready', 1, true) ~= nil
  end, 'the open :AgentMcp buffer to show ed ready again')
  local windows = 0
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == view then
      windows = windows + 1
    end
  end
  H.eq(windows, 1)
end)

E.finish()
