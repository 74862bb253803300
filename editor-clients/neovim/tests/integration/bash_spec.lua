-- An Edit, then a Bash command: the server asks the editor to save the edited buffer
-- (saveDocuments) before Bash reads the disk, and after Bash changed another open file the
-- editor reloads that clean buffer (didChangeFiles). A buffer with unsaved changes that Bash
-- also changed on disk is left alone.
-- Scenario: tests/clients/neovim/test_integration.py::test_bash_save_and_reload.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

E.setup()
local data_buf = E.open('data.txt')
local dirty_buf = E.open('dirty.txt')
vim.api.nvim_buf_set_lines(dirty_buf, 0, -1, false, { 'my unsaved words' })
local app_buf, client = E.open('app.py')

H.test('the turn edits, saves, runs Bash, reloads', function()
  vim.cmd('AgentChat update and regenerate')
  local s = E.session(client)
  -- Edit, then Bash: two permission prompts, both allowed.
  local p = E.permission()
  H.ok(p:title():find('app.py', 1, true), p:title())
  H.wait(E.WAIT, function()
    return p.ui ~= nil and p.ui.buf ~= nil
  end, 'the permission window')
  H.eq(vim.bo[p.ui.buf].filetype, 'lsp_agent_permission')
  p:answer('allow_once')
  p = E.permission()
  H.eq(p.tool_call.rawInput.command ~= nil, true, 'the Bash prompt shows its command')
  p:answer('allow_once')
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
end)

H.test('the edited buffer was saved through the editor', function()
  H.eq(E.lines(app_buf), { 'VERSION = 2' })
  H.eq(vim.bo[app_buf].modified, false)
  H.eq(E.read('app.py'), 'VERSION = 2\n')
end)

H.test('the clean buffer changed by Bash was reloaded', function()
  H.eq(E.lines(data_buf), { 'regenerated' })
  H.eq(vim.bo[data_buf].modified, false)
end)

H.test('the buffer with unsaved changes was not touched', function()
  H.eq(E.lines(dirty_buf), { 'my unsaved words' })
  H.ok(vim.bo[dirty_buf].modified)
end)

E.finish()
