-- :AgentMcp against the real server: a project server waits for approval, :AgentMcp approve
-- starts it, its state reaches the plugin (didChange) and :checkhealth; the model's call of
-- its tool asks for permission and runs.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local WAIT_MCP = 60000 -- ms; an MCP server's start under load (never a timing assertion)

H.test('approve a project server and use its tool', function()
  local agent = E.setup()
  local _, client = E.open('main.py')
  local mcp = require('lsp_agent.mcp')

  -- The notice about the server waiting for approval, and the list.
  local listed
  mcp.list(client, function(result)
    listed = result
  end)
  H.wait(E.WAIT, function()
    return listed ~= nil
  end, 'lspAgent/mcp/list')
  H.eq(listed.servers[1].name, 'fx')
  H.eq(listed.servers[1].state, 'needs_approval')

  -- :AgentMcp opened before the approval follows the server's state (didChange) in place.
  local view, view_text = E.open_mcp_view()
  H.ok(view_text():find('fx  needs_approval', 1, true), view_text())

  vim.cmd('AgentMcp approve fx')
  H.wait(WAIT_MCP, function()
    local known = mcp.known(client.id)
    return known and known.servers[1].state == 'ready'
  end, 'the server to be ready after approval (didChange)')
  H.wait(E.WAIT, function()
    return view_text():find('fx  ready  %d+ tools  project') ~= nil
  end, 'the open :AgentMcp buffer to show the server ready')

  -- A second :AgentMcp reuses the buffer and its window.
  vim.cmd('AgentMcp')
  H.wait(E.WAIT, function()
    return vim.api.nvim_get_current_buf() == view
  end, 'the :AgentMcp window again')
  local windows = 0
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.bo[vim.api.nvim_win_get_buf(win)].filetype == 'lsp_agent_mcp' then
      windows = windows + 1
    end
  end
  H.eq(windows, 1)
  vim.cmd('close')

  vim.cmd('checkhealth lsp_agent')
  local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.cmd('bwipeout!')
  H.ok(health:find('MCP servers', 1, true) and health:find('fx  ready', 1, true), health)

  -- The model calls the tool; the permission prompt is answered "allow once".
  agent.chat({ prompt = 'echo please' })
  local p = E.permission()
  H.eq(p:title(), 'fx: echo')
  p:answer('allow_once')
  local s = E.session(client)
  E.wait_idle(s)
end)

E.finish()
