-- A retried model request is shown in the chat's winbar ("retrying (1/4) in 3s —
-- overloaded_error") while the server waits, and the status goes back to normal once the answer
-- arrives. Scenario: tests/clients/neovim/test_integration.py::test_retry (HTTP 529 with
-- retry-after 3 s, then the answer).
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

E.setup()
local chat = require('lsp_agent.chat')
local session_mod = require('lsp_agent.session')

local client, s
H.test('the winbar says the model request is being retried, and why', function()
  vim.cmd('AgentChat')
  H.wait(E.WAIT, function()
    client = vim.lsp.get_clients({ name = 'lsp_agent' })[1]
    return client ~= nil and client.initialized and chat.is_open(client.id)
  end, 'the chat')
  local c = chat.get(client.id)
  vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, { 'hello' })
  vim.api.nvim_set_current_win(vim.fn.bufwinid(c.prompt_buf))
  vim.api.nvim_feedkeys(vim.keycode('<Esc>') .. vim.keycode('<CR>'), 'xt', false)
  s = E.session(client)
  H.wait(E.WAIT, function()
    return s.retry ~= nil
  end, 'the retry to be announced')
  vim.g.statusline_winid = vim.fn.bufwinid(c.buf)
  local bar = chat.winbar()
  H.ok(bar:find('retrying %(1/4%) in %ds — overloaded_error'), bar)
  H.ok(bar:find('agent default · retrying', 1, true), bar)
end)

H.test('the answer clears it', function()
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
  H.eq(s.retry, nil)
  H.ok(E.transcript_has(client, 'Answered after the retry.'))
  local line = session_mod.status_line(s)
  H.eq(line:find('retrying', 1, true), nil, line)
end)

E.finish()
