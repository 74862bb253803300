-- :AgentChat PROMPT while a turn runs queues the prompt (never drops it): sent when the turn
-- ends, or kept unsent in the prompt window when the turn is cancelled.
-- Scenario: tests/clients/neovim/test_chat_queue.py.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

E.setup()
local _, client = E.open('notes.py')
local said = {}
local notify = vim.notify
vim.notify = function(msg, level)
  table.insert(said, msg)
  return notify(msg, level)
end

local s
H.test('prompts given while a turn waits for permission are sent together when it ends', function()
  vim.cmd('AgentChat first prompt')
  s = E.session(client)
  local p = E.permission() -- the turn runs, waiting for the Bash approval
  H.ok(s.running, 'the turn runs')
  vim.cmd('AgentChat queued one')
  vim.cmd('AgentChat queued two')
  -- One notice for both, on one line: two in a row (or a wrapped one) stop at "Press ENTER".
  H.wait(E.WAIT, function()
    return #said > 0 and said[#said]:find('queued (2)', 1, true)
  end, 'the queue notice')
  local notices = vim.tbl_filter(function(m)
    return m:find('queued (', 1, true)
  end, said)
  H.eq(#notices, 1, vim.inspect(said))
  H.ok(vim.fn.strdisplaywidth(notices[1]) <= vim.v.echospace, notices[1])
  H.ok(not E.transcript_has(client, 'queued one'), 'not sent while the turn runs')
  p:answer('allow_once')
  H.wait(E.WAIT, function()
    return E.transcript_has(client, 'Got both.')
  end, 'the queued prompts to be answered')
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
  H.ok(E.transcript_has(client, 'Done with the first.'))
end)

H.test('a prompt queued behind a cancelled turn stays unsent in the prompt window', function()
  vim.cmd('AgentChat slow prompt')
  H.wait(E.WAIT, function()
    return E.transcript_has(client, 'Thinking about it')
  end, 'the first chunk')
  vim.cmd('AgentChat keep this for later')
  vim.cmd('AgentCancel')
  E.wait_idle(s)
  H.eq(s.last_stop, 'cancelled')
  local chat = require('lsp_agent.chat').get(client.id)
  H.wait(E.WAIT, function()
    return vim.api.nvim_buf_get_lines(chat.prompt_buf, 0, -1, false)[1] == 'keep this for later'
  end, 'the queued prompt in the prompt window')
  H.ok(said[#said]:find('the queued prompt was not sent: it is in the prompt window', 1, true),
    vim.inspect(said))
  H.ok(not E.transcript_has(client, 'keep this for later'), 'never sent')
end)

E.finish()
