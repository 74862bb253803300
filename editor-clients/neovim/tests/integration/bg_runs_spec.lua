-- :AgentSessions marks the session a background run (`lsp-agent run -p --bg`, started in a
-- terminal before this Neovim) is running, with the run's id, as running (not interrupted);
-- picking it says which run holds it and how to follow it.
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
  H.ok(line:find('(running: background run ' .. run_id .. ')', 1, true), line)
  H.ok(not line:find('(busy)', 1, true), line)
  -- Its turn is under way, not cut off; its time is shown as a local date and time.
  H.ok(not line:find('(interrupted)', 1, true), line)
  H.ok(line:find('  %d%d%d%d%-%d%d%-%d%d %d%d:%d%d  '), line)
end)

H.test('picking the running background run says which run holds it and how to follow it', function()
  vim.ui.select = function(items, _, on_choice)
    for _, item in ipairs(items) do
      if item.sessionId == session_id then
        return on_choice(item)
      end
    end
    on_choice(nil)
  end
  local said
  local notify = vim.notify
  vim.notify = function(msg, level)
    if level == vim.log.levels.ERROR then
      said = msg
    end
  end
  vim.cmd('AgentSessions')
  H.wait(E.WAIT, function()
    return said ~= nil
  end, 'the refusal')
  vim.notify = notify
  H.ok(said:find('in use by background run ' .. run_id .. ': follow it with `lsp-agent attach '
    .. run_id .. '`', 1, true), said)
  H.ok(not said:find('.jsonl', 1, true), said)
end)

H.test('session times are shown in local time', function()
  local lsp_agent = require('lsp_agent')
  local shown = lsp_agent._local_time('2026-01-02T03:04:05.678Z')
  H.eq(shown, os.date('%Y-%m-%d %H:%M', 1767323045))
  H.eq(lsp_agent._local_time('not a time'), nil)
end)

E.finish()
