-- After the first prompt the model writes a short title in the background (background requests
-- turned on for this test); :AgentSessions lists the session under that title.
-- Scenario: tests/clients/neovim/test_integration_project.py::test_written_title.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

E.setup()
local _, client = E.open('notes.txt')

H.test(':AgentSessions lists the title the model wrote', function()
  vim.cmd('AgentChat please tidy up notes.txt, one item per line')
  local s = E.session(client)
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
  local offered
  vim.ui.select = function(items, opts)
    offered = vim.tbl_map(function(item)
      return opts.format_item(item)
    end, items)
  end
  local found
  for _ = 1, 100 do
    offered = nil
    vim.cmd('AgentSessions')
    H.wait(E.WAIT, function()
      return offered ~= nil
    end, 'the session list')
    if offered[1] and offered[1]:find('Tidy the notes file', 1, true) then
      found = offered[1]
      break
    end
    vim.wait(100)
  end
  H.ok(found, vim.inspect(offered))
  H.eq(#offered, 1)
end)

E.finish()
