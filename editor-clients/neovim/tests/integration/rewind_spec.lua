-- :AgentRewind after a turn that edited two files (one open in a buffer) and ran `rm` plus a
-- new file through Bash, then the user typed in the buffer: the picker lists the prompt,
-- "code and conversation" restores the files (the buffer through one applyEdit, so `u` takes
-- the rewind back), keeps what the user typed, and cuts the conversation.
-- Scenario: tests/clients/neovim/test_integration_project.py::test_rewind.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local agent = E.setup()
local app_buf, client = E.open('app.py')
local s
local before_rewind

H.test('the turn edits the buffer and runs Bash', function()
  vim.cmd('AgentChat change things')
  s = E.session(client)
  E.permission():answer('allow_once') -- Edit app.py
  E.permission():answer('allow_once') -- Edit lib.py
  E.permission():answer('allow_once') -- Bash
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
  H.eq(E.lines(app_buf), { 'VERSION = 2', '', '', "NAME = 'app'" })
  H.eq(E.read('lib.py'), 'X = 2\n')
  H.eq(vim.fn.filereadable(E.path('gone.txt')), 0)
  H.eq(E.read('made.txt'), 'new\n')
end)

H.test('the user types in the edited buffer after the turn', function()
  vim.api.nvim_buf_set_lines(app_buf, 3, 4, false, { "NAME = 'mine'" })
end)

H.test(':AgentRewind picks the prompt and what to restore', function()
  local shown = {}
  local select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    table.insert(shown, { prompt = opts.prompt, items = vim.tbl_map(opts.format_item, items) })
    if opts.prompt == 'Restore' then
      return on_choice('both')
    end
    return on_choice(items[1])
  end
  -- A script makes no undo breaks of its own: close the turn's undo block as typing would.
  vim.api.nvim_buf_call(app_buf, function()
    vim.cmd('let &l:undolevels = &undolevels')
  end)
  before_rewind = vim.fn.undotree(app_buf).seq_cur
  local result
  agent.rewind({
    client_id = client.id,
    done = function(r)
      result = r
    end,
  })
  H.wait(E.WAIT, function()
    return result ~= nil
  end, 'the rewind')
  vim.ui.select = select
  H.eq(#shown, 2)
  H.ok(shown[1].items[1]:find('change things', 1, true), shown[1].items[1])
  H.ok(shown[1].items[1]:find('4 files', 1, true), shown[1].items[1])
  H.eq(shown[2].items, { 'code and conversation', 'code only (files)', 'conversation only' })
  H.eq(result.conversation, true)
  H.eq(result.conflicts, {})
  H.eq(result.prompt, 'change things')
end)

H.test('the three files are restored, the typing kept, and the buffer can undo the rewind', function()
  H.wait(E.WAIT, function()
    return E.lines(app_buf)[1] == 'VERSION = 1'
  end, 'the buffer to be restored')
  H.eq(E.lines(app_buf), { 'VERSION = 1', '', '', "NAME = 'mine'" })
  H.eq(E.read('lib.py'), 'X = 1\n')
  H.eq(E.read('gone.txt'), 'bye\n')
  H.eq(vim.fn.filereadable(E.path('made.txt')), 0)
  H.eq(vim.fn.getqflist(), {})
  -- The rewind is one more change in the buffer's undo history (not a reload from disk).
  H.ok(vim.fn.undotree(app_buf).seq_cur > before_rewind, 'the rewind is undoable')
  vim.api.nvim_buf_call(app_buf, function()
    vim.cmd('silent undo ' .. before_rewind)
  end)
  H.eq(E.lines(app_buf), { 'VERSION = 2', '', '', "NAME = 'mine'" })
end)

H.test('the next prompt starts from a conversation without the rewound turn', function()
  vim.cmd('AgentChat again')
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
end)

E.finish()
