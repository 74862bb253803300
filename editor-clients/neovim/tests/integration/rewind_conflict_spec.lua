-- :AgentRewind when the user changed, after the turn, the very line the turn changed: the
-- server asks through the ordinary permission prompt (a review of the diff from the buffer
-- now to the checkpoint's line), the user picks "Restore the checkpoint's lines", and the
-- buffer gets the checkpoint's line back while the user's other typing stays.
-- Scenario: tests/clients/neovim/test_integration_project.py::test_rewind_conflict.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local agent = E.setup()
local app_buf, client = E.open('app.py')
local s

H.test('the turn edits the buffer', function()
  vim.cmd('AgentChat change the version')
  s = E.session(client)
  E.permission():answer('allow_once') -- Edit app.py
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
  H.eq(E.lines(app_buf), { 'VERSION = 2', '', '', "NAME = 'app'" })
end)

H.test('the user types over the line the turn changed, and another line', function()
  vim.api.nvim_buf_set_lines(app_buf, 0, 1, false, { 'VERSION = 3' })
  vim.api.nvim_buf_set_lines(app_buf, 3, 4, false, { "NAME = 'mine'" })
end)

H.test(':AgentRewind asks about the overlap; the answer restores the checkpoint line', function()
  local select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    if opts.prompt == 'Restore' then
      return on_choice('code')
    end
    return on_choice(items[1])
  end
  local result
  agent.rewind({
    client_id = client.id,
    done = function(r)
      result = r
    end,
  })
  local p = E.permission()
  vim.ui.select = select
  H.eq(p.tool_call.title, 'Rewind: conflicts in app.py')
  local ids = vim.tbl_map(function(o)
    return o.optionId
  end, p.options)
  H.eq(ids, { 'checkpoint', 'mine', 'markers' })
  p:answer('checkpoint')
  H.wait(E.WAIT, function()
    return result ~= nil
  end, 'the rewind')
  H.eq(result.conflicts, {})
  H.wait(E.WAIT, function()
    return E.lines(app_buf)[1] == 'VERSION = 1'
  end, 'the buffer to be restored')
  H.eq(E.lines(app_buf), { 'VERSION = 1', '', '', "NAME = 'mine'" })
end)

E.finish()
