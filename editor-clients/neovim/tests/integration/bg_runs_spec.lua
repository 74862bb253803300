-- :AgentSessions marks the session a background run (`lsp-agent run -p --bg`, started in a
-- terminal before this Neovim) is running, with the run's id.
-- Scenario: tests/clients/neovim/test_background_runs.py.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local run_id = assert(vim.env.LSP_AGENT_TEST_BG_RUN, 'LSP_AGENT_TEST_BG_RUN is not set')
local session_id = assert(vim.env.LSP_AGENT_TEST_BG_SESSION, 'LSP_AGENT_TEST_BG_SESSION is not set')

E.setup()
E.open('notes.txt')

H.test(':AgentSessions shows the running background run', function()
  local offered
  vim.ui.select = function(items, opts)
    offered = vim.tbl_map(function(item)
      return opts.format_item(item)
    end, items)
  end
  vim.cmd('AgentSessions')
  H.wait(E.WAIT, function()
    return offered ~= nil
  end, 'the session list')
  local line = vim.tbl_filter(function(text)
    return text:find(session_id, 1, true) ~= nil
  end, offered)[1]
  H.ok(line, table.concat(offered, '\n'))
  H.ok(line:find('refactor the parser', 1, true), line)
  H.ok(line:find('(background run ' .. run_id .. ')', 1, true), line)
  H.ok(not line:find('(busy)', 1, true), line)
end)

E.finish()
