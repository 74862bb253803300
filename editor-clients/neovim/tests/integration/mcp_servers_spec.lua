-- setup{ mcp_servers = ... } against the real server with a real MCP server (the SDK fixture):
-- the server defined in the plugin's options starts (user scope, no approval) and its tools
-- count in lspAgent/mcp/list; in the prompt buffer "@ed:" completes the server's resources
-- (<C-x><C-o> in insert mode), and the chosen mention reaches the model with the resource.
-- Scenario: tests/clients/neovim/test_integration_mcp.py::test_mcp_servers_from_setup.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local WAIT_MCP = 60000 -- ms; an MCP server's start under load (never a timing assertion)

local fixture = vim.json.decode((assert(vim.env.LSP_AGENT_TEST_MCP, 'LSP_AGENT_TEST_MCP is not set')))
local agent = E.setup({ mcp_servers = { ed = fixture } })
local mcp = require('lsp_agent.mcp')
local chat = require('lsp_agent.chat')

local client
H.test('a server from setup{mcp_servers} starts and lists its tools', function()
  local _
  _, client = E.open('main.py')
  local ed
  H.wait(WAIT_MCP, function()
    local done = false
    mcp.list(client, function(result)
      for _, server in ipairs(result and result.servers or {}) do
        if server.name == 'ed' then
          ed = server
        end
      end
      done = true
    end)
    vim.wait(E.WAIT, function()
      return done
    end, 10)
    return ed ~= nil and ed.state == 'ready'
  end, 'the ed server to be ready')
  H.eq(ed.scope, 'lsp')
  H.ok(ed.tools > 0, vim.inspect(ed))
end)

H.test('"@ed:" completes the resources of ed in the prompt buffer', function()
  agent.chat()
  local c = chat.get(client.id)
  vim.api.nvim_set_current_win(vim.fn.bufwinid(c.prompt_buf))
  vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, { 'Summarise @ed:' })
  vim.api.nvim_win_set_cursor(0, { 1, #'Summarise @ed:' })
  H.eq(chat.omnifunc(1, ''), #'Summarise @')
  local words = vim.tbl_map(function(item)
    return item.word
  end, chat.omnifunc(0, 'ed:'))
  H.eq(words, { 'ed:test://blob', 'ed:test://notes/readme' })
  H.eq(mcp.typed_resource('mail me@ed:x', 12), nil, 'an address in a word is not a mention')

  -- As a user: type the start of the mention, <C-x><C-o> completes the one match, <CR> sends.
  vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, { '' })
  vim.api.nvim_feedkeys('iSummarise @ed:test://n' .. vim.keycode('<C-x><C-o>'), 'xt', false)
  H.eq(vim.api.nvim_buf_get_lines(c.prompt_buf, 0, -1, false), { 'Summarise @ed:test://notes/readme' })
  vim.api.nvim_feedkeys('A' .. vim.keycode('<CR>'), 'xt', false)
  local s = E.session(client)
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
end)

E.finish()
