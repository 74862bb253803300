-- First Neovim of the resume test: one turn with a tool call, then Neovim and the server exit.
-- Scenario: tests/clients/neovim/test_integration_project.py::test_resume_after_restart.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

E.setup()
local _, client = E.open('notes.txt')

H.test('a turn that reads a file', function()
  vim.cmd('AgentChat remember the word in notes.txt')
  local s = E.session(client)
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
  H.ok(E.transcript_has(client, 'The word is pineapple.'), table.concat(E.transcript(client), '\n'))
end)

E.finish()
