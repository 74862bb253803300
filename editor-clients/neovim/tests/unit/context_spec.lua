-- Context features in the chat: the compaction line and slash-command completion.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../harness.lua')
require('lsp_agent.config').set({})
local transcript = require('lsp_agent.transcript')
local session = require('lsp_agent.session')
local chat = require('lsp_agent.chat')

local COMMANDS = {
  { name = 'compact', description = 'Summarise the conversation', input = { hint = 'focus' } },
  { name = 'context', description = 'Show context use', input = vim.NIL },
  { name = 'clear', description = 'Start over', input = vim.NIL },
  { name = 'cost', description = 'Tokens used', input = vim.NIL },
}

H.test('a compaction shows as one line keeping its summary', function()
  local t = transcript.new()
  local index = t:apply({
    sessionUpdate = 'context_compacted',
    trigger = 'auto',
    tokensBefore = 182000,
    tokensAfter = 31000,
    promptsKept = 4,
    files = 7,
    summary = 'Goal: ship it.',
  })
  H.eq(t.entries[index].kind, 'info')
  H.eq(t.entries[index].text, 'Compacted: 182.0k → 31.0k tokens; kept 4 instructions, 7 files')
  H.eq(t.entries[index].summary, 'Goal: ship it.')
  H.eq(transcript.compaction_line({ tokensBefore = 900, tokensAfter = 1, promptsKept = 1, files = 1 }),
    'Compacted: 900 → 1 tokens; kept 1 instruction, 1 file')
end)

H.test('the compaction line expands to its summary', function()
  local render = require('lsp_agent.render')
  local t = transcript.new()
  local index = t:apply({
    sessionUpdate = 'context_compacted',
    trigger = 'manual',
    tokensBefore = 182000,
    tokensAfter = 31000,
    promptsKept = 4,
    files = 7,
    summary = 'Goal: ship it.\nPending: tests.',
  })
  local entry = t.entries[index]
  H.eq(render.entry_lines(entry), {
    '-- Compacted: 182.0k → 31.0k tokens; kept 4 instructions, 7 files (<CR>: summary)',
    '',
  })
  entry.expanded = true
  H.eq(render.entry_lines(entry), {
    '-- Compacted: 182.0k → 31.0k tokens; kept 4 instructions, 7 files',
    '   Goal: ship it.',
    '   Pending: tests.',
    '',
  })
end)

H.test('advertised commands complete after "/"', function()
  local t = transcript.new()
  H.eq(t:apply({ sessionUpdate = 'available_commands_update', availableCommands = COMMANDS }), nil)
  local words = vim.tbl_map(function(i)
    return i.word
  end, t:command_items('/c'))
  H.eq(words, { '/compact', '/context', '/clear', '/cost' })
  local items = t:command_items('/comp')
  H.eq(#items, 1)
  H.eq(items[1].menu, 'Summarise the conversation')
  H.eq(items[1].info, '/compact <focus>')
  H.eq(t:command_items('/zzz'), {})
end)

H.test('the prompt buffer offers commands through omnifunc', function()
  local client_id = 77
  session.handle_update(nil, {
    sessionId = 's-ctx',
    update = { sessionUpdate = 'available_commands_update', availableCommands = COMMANDS },
  }, { client_id = client_id })
  local c = chat.ensure(client_id)
  vim.api.nvim_set_current_buf(c.prompt_buf)
  H.eq(vim.bo[c.prompt_buf].omnifunc, "v:lua.require'lsp_agent.chat'.omnifunc")
  vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, { '/co' })
  vim.api.nvim_win_set_cursor(0, { 1, 3 })
  H.eq(chat.omnifunc(1, ''), 0)
  local words = vim.tbl_map(function(i)
    return i.word
  end, chat.omnifunc(0, '/co'))
  H.eq(words, { '/compact', '/context', '/cost' })
  vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, { 'fix /co' })
  vim.api.nvim_win_set_cursor(0, { 1, 7 })
  H.eq(chat.omnifunc(1, ''), -3)
end)

H.finish()
