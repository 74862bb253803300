-- The chat outside any file buffer: the server starts for the current directory's root; the
-- layout (transcript above a prompt), typing a prompt with an @-mention and sending it with
-- <CR>, streamed markdown and tool lines, closing and reopening, :AgentLog.
-- Scenario: tests/clients/neovim/test_integration.py::test_chat.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local agent = E.setup()
local chat = require('lsp_agent.chat')

local client
H.test(':AgentChat from an empty buffer starts a server for the cwd root', function()
  H.eq(vim.api.nvim_buf_get_name(0), '')
  vim.cmd('AgentChat')
  H.wait(E.WAIT, function()
    client = vim.lsp.get_clients({ name = 'lsp_agent' })[1]
    return client ~= nil and client.initialized and chat.is_open(client.id)
  end, 'the chat')
  H.eq(client.config.root_dir, E.root)
  local c = chat.get(client.id)
  H.eq(vim.api.nvim_get_current_buf(), c.prompt_buf, 'the prompt has the focus')
  H.eq(vim.bo[c.buf].filetype, 'markdown')
  H.eq(vim.bo[c.buf].modifiable, false, 'the transcript is read-only')
  local transcript_win = vim.fn.bufwinid(c.buf)
  H.ok(transcript_win ~= -1)
  H.eq(vim.w[transcript_win].lsp_agent_chat, 'transcript')
  -- Wrapped tool output and list items continue under their text, not under the gutter.
  H.eq(vim.wo[transcript_win].breakindent, true)
  H.eq(vim.wo[transcript_win].breakindentopt, 'list:-1')
  H.eq(vim.fn.matchend('    │ output line', vim.bo[c.buf].formatlistpat), #'    │ ')
  H.eq(vim.fn.matchend('- item', vim.bo[c.buf].formatlistpat), 2)
  vim.g.statusline_winid = transcript_win
  H.eq(chat.winbar(), ' lsp-agent — no session yet')
end)

local s
H.test('typing a prompt with an @-mention and pressing <CR> in insert mode sends it', function()
  local c = chat.get(client.id)
  local prompt_win = vim.fn.bufwinid(c.prompt_buf)
  vim.api.nvim_set_current_win(prompt_win)
  H.eq(vim.wo[prompt_win].winbar, ' prompt — <CR> sends · <C-j> new line')
  vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, { '' })
  -- As a user types it: insert mode, <C-j> for the second line, <CR> to send.
  vim.api.nvim_feedkeys('isummarize @notes.md' .. vim.keycode('<C-j>') .. 'briefly'
    .. vim.keycode('<CR>'), 'xt', false)
  s = E.session(client)
  H.eq(vim.api.nvim_buf_get_lines(c.prompt_buf, 0, -1, false), { '' }, 'the prompt was cleared')
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
end)

H.test('the transcript shows the turn as markdown with tool lines', function()
  local lines = E.transcript(client)
  local text = table.concat(lines, '\n')
  local user = '## You\n\nsummarize @notes.md\nbriefly\n`@notes.md`\n\n## Agent\n'
  H.ok(text:find(user, 1, true), text)
  H.ok(text:find('\n● Read notes.md', 1, true) or text:find('● Read', 1, true), text)
  H.ok(text:find('**Summary:** the notes list\n\n- one\n- two', 1, true), text)
  -- The winbar carries the status line.
  local win = vim.fn.bufwinid(chat.get(client.id).buf)
  vim.g.statusline_winid = win
  H.ok(chat.winbar():find('agent default', 1, true), chat.winbar())
end)

H.test('q closes the chat; :AgentChat reopens it with the transcript kept', function()
  local c = chat.get(client.id)
  vim.api.nvim_set_current_win(vim.fn.bufwinid(c.prompt_buf))
  vim.api.nvim_feedkeys('q', 'x', false)
  H.eq(chat.is_open(client.id), false)
  H.eq(vim.fn.bufwinid(c.prompt_buf), -1)
  vim.cmd('AgentChat')
  H.ok(chat.is_open(client.id))
  H.ok(E.transcript_has(client, '**Summary:**'))
  H.eq(#vim.api.nvim_list_wins(), 3, 'no duplicate windows: editor + transcript + prompt')
end)

H.test(':AgentLog shows the plugin log', function()
  vim.cmd('AgentLog')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  H.ok(text:find('session ' .. s.id .. ' created', 1, true), text)
  H.ok(text:find('LSP wire log:', 1, true), text)
  H.eq(agent.status(vim.api.nvim_create_buf(true, true)), '', 'no server for a scratch buffer')
  H.eq(agent.status(-1), '')
end)

E.finish()
