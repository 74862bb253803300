-- Second Neovim of the resume test (a new Neovim and a new server over the same data folder):
-- :AgentSessions lists the saved session with its title, :AgentResume rebuilds the chat from
-- the replayed history, and the next prompt goes on from it.
-- Scenario: tests/clients/neovim/test_integration_project.py::test_resume_after_restart.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

E.setup()
local _, client = E.open('notes.txt')

H.test(':AgentSessions lists the saved session with its first prompt as title', function()
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
  H.eq(#offered, 1)
  H.ok(offered[1]:find('remember the word in notes.txt', 1, true), offered[1])
  H.ok(offered[1]:find('1 prompt', 1, true), offered[1])
end)

H.test(':AgentResume rebuilds the chat from the replayed history', function()
  vim.cmd('AgentResume')
  local s = E.session(client)
  H.wait(E.WAIT, function()
    return E.transcript_has(client, 'The word is pineapple.')
  end, 'the replayed answer in the chat')
  H.ok(E.transcript_has(client, 'remember the word in notes.txt'), table.concat(E.transcript(client), '\n'))
  H.ok(E.transcript_has(client, 'notes.txt'), 'the tool call line')
  H.eq(s.running, false)
end)

H.test('the resumed session goes on with its history', function()
  local s = E.session(client)
  require('lsp_agent').send_text(client.id, 'which word was it?')
  H.wait(E.WAIT, function()
    return s.last_stop ~= nil and not s.running
  end, 'the turn to end')
  H.eq(s.last_stop, 'end_turn')
  H.ok(E.transcript_has(client, 'It was pineapple.'), table.concat(E.transcript(client), '\n'))
end)

E.finish()
