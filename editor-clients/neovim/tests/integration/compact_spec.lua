-- /compact in the chat against the real server: the compaction shows as one line, and <CR> on
-- that line in the transcript shows the summary under it and folds it again.
-- Scenario: tests/clients/neovim/test_integration.py::test_compact (an answer, the summary
-- request of /compact, then an answer after the compaction).
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

E.setup()
local chat = require('lsp_agent.chat')

local LINE = '^%-%- Compacted: [%d.k]+ → [%d.k]+ tokens; kept 1 instruction, 0 files'

local client, s
local function send(text)
  local c = chat.get(client.id)
  vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, { text })
  vim.api.nvim_set_current_win(vim.fn.bufwinid(c.prompt_buf))
  vim.api.nvim_feedkeys(vim.keycode('<Esc>') .. vim.keycode('<CR>'), 'xt', false)
  s = E.session(client)
  E.wait_idle(s)
end

--- The transcript line that holds the compaction (1-based), or nil.
local function compaction_row()
  for row, line in ipairs(E.transcript(client)) do
    if line:find(LINE) then
      return row
    end
  end
end

H.test('/compact shows one line with its figures, summary folded', function()
  vim.cmd('AgentChat')
  H.wait(E.WAIT, function()
    client = vim.lsp.get_clients({ name = 'lsp_agent' })[1]
    return client ~= nil and client.initialized and chat.is_open(client.id)
  end, 'the chat')
  send('what is in notes.md?')
  H.ok(E.transcript_has(client, 'It lists two items.'))
  send('/compact keep the list')
  H.wait(E.WAIT, function()
    return compaction_row() ~= nil
  end, 'the compaction line')
  local lines = E.transcript(client)
  local row = compaction_row()
  H.ok(lines[row]:find('(<CR>: summary)', 1, true), lines[row])
  H.eq(E.transcript_has(client, 'GOAL: describe notes.md'), false, 'the summary starts folded')
end)

H.test('<CR> on the line in the transcript expands the summary, and again folds it', function()
  local c = chat.get(client.id)
  local win = vim.fn.bufwinid(c.buf)
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { compaction_row(), 0 })
  vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'xt', false)
  local lines = E.transcript(client)
  local row = compaction_row()
  H.eq(lines[row]:find('(<CR>: summary)', 1, true), nil, lines[row])
  H.eq(lines[row + 1], '   GOAL: describe notes.md')
  H.eq(lines[row + 2], '   PENDING: nothing')
  vim.api.nvim_win_set_cursor(win, { row, 0 })
  vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'xt', false)
  H.ok(E.transcript(client)[compaction_row()]:find('(<CR>: summary)', 1, true))
  H.eq(E.transcript_has(client, 'GOAL: describe notes.md'), false, 'folded again')
end)

H.test('the conversation goes on after the compaction', function()
  send('and now?')
  H.eq(s.last_stop, 'end_turn')
  H.ok(E.transcript_has(client, 'Still two items.'))
end)

E.finish()
