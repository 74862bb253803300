-- Renderer and transcript: streaming markdown, tool lines, plans, incremental view updates.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../harness.lua')
local transcript_mod = require('lsp_agent.transcript')
local render = require('lsp_agent.render')

local function chunk(text)
  return { sessionUpdate = 'agent_message_chunk', content = { type = 'text', text = text } }
end

--- A view rendering into a Lua list, applying sink calls like nvim_buf_set_lines.
local function list_view(opts)
  local lines = {}
  local calls = 0
  local view = render.view(function(start, end_, new)
    calls = calls + 1
    if end_ < 0 then
      end_ = #lines
    end
    local out = {}
    for i = 1, start do
      out[i] = lines[i]
    end
    vim.list_extend(out, new)
    for i = end_ + 1, #lines do
      table.insert(out, lines[i])
    end
    lines = out
  end, opts)
  return view, function()
    return lines
  end, function()
    return calls
  end
end

H.test("the model's headings nest under ## Agent (code fences untouched)", function()
  local entry = { kind = 'agent', lines = {
    '# Summary', '## Plan', '###### Deep', '```sh', '# a comment', '```', '#hashtag', 'text',
  } }
  H.eq(render.entry_lines(entry), {
    '### Summary', '#### Plan', '###### Deep', '```sh', '# a comment', '```', '#hashtag', 'text', '',
  })
end)

H.test('streamed chunks join across chunk boundaries and newlines', function()
  local t = transcript_mod.new()
  t:add_user('explain')
  t:apply(chunk('Hel'))
  t:apply(chunk('lo **wor'))
  t:apply(chunk('ld**\n\n```lua\nx = 1\n'))
  t:apply(chunk('```'))
  H.eq(render.lines(t), {
    '## You', '', 'explain', '',
    '## Agent', '',
    'Hello **world**', '', '```lua', 'x = 1', '```', '',
  })
end)

H.test('tool call lines show status icons, diff stats and output', function()
  local t = transcript_mod.new()
  t:add_user('go')
  t:apply({
    sessionUpdate = 'tool_call', toolCallId = 't1', title = 'Edit a.py', kind = 'edit',
    status = 'pending',
    content = { {
      type = 'diff', path = '/p/a.py', oldText = 'a\nb\n', newText = 'a\nB\nc\n',
      unifiedDiff = '--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,3 @@\n a\n-b\n+B\n+c\n',
    } },
  })
  t:apply({ sessionUpdate = 'tool_call', toolCallId = 't2', title = 'Bash: ls', kind = 'execute' })
  t:apply({ sessionUpdate = 'tool_call_update', toolCallId = 't1', status = 'completed' })
  t:apply({
    sessionUpdate = 'tool_call_update', toolCallId = 't2', status = 'failed',
    content = { { type = 'content', content = { type = 'text', text = '1\n2\n3\n4\n' } } },
  })
  local lines = render.lines(t, { tool_output_lines = 3 })
  H.eq(lines, {
    '## You', '', 'go', '',
    '## Agent', '',
    '● Edit a.py', '    +2 -1 /p/a.py', '',
    '✗ Bash: ls — failed', '    │ 1', '    │ 2', '    │ 3', '    │ … 1 more line (<CR> shows it)', '',
  })
end)

H.test('diff stats are computed from the texts when there is no unified diff', function()
  local t = transcript_mod.new()
  t:apply({
    sessionUpdate = 'tool_call', toolCallId = 'w', title = 'Write n.txt', status = 'in_progress',
    content = { { type = 'diff', path = '/p/n.txt', oldText = vim.NIL, newText = 'x\ny\n' } },
  })
  H.eq(render.lines(t)[3], '◐ Write n.txt')
  H.eq(render.lines(t)[4], '    +2 -0 /p/n.txt')
end)

H.test('awaiting permission marks the tool line', function()
  local t = transcript_mod.new()
  t:apply({ sessionUpdate = 'tool_call', toolCallId = 'x', title = 'Bash: make' })
  local index = t:set_awaiting('x', true)
  H.eq(render.entry_lines(t.entries[index]), { '? Bash: make — awaiting permission', '' })
  t:set_awaiting('x', false)
  H.eq(render.entry_lines(t.entries[index]), { '○ Bash: make', '' })
  H.eq(t:set_awaiting('unknown', true), nil)
end)

H.test('plan replaces the plan of the current turn; thoughts are quoted', function()
  local t = transcript_mod.new()
  t:add_user('plan it')
  t:apply({ sessionUpdate = 'agent_thought_chunk',
    content = { type = 'text', text = 'hmm\n\nok' } })
  t:apply({ sessionUpdate = 'plan', entries = { { content = 'a', status = 'pending' } } })
  t:apply({ sessionUpdate = 'plan', entries = {
    { content = 'a', status = 'completed' }, { content = 'b', status = 'in_progress' },
  } })
  H.eq(render.lines(t), {
    '## You', '', 'plan it', '',
    '## Agent', '',
    '> hmm', '>', '> ok', '',
    '### Plan', '- [x] a', '- [~] b', '',
  })
end)

H.test('usage and mode updates; unknown updates are ignored', function()
  local t = transcript_mod.new()
  H.eq(t:apply({ sessionUpdate = 'usage_update', used = 10, size = 200 }), nil)
  H.eq(t.usage, { used = 10, size = 200 })
  H.eq(t:apply({ sessionUpdate = 'something_new', x = 1 }), nil)
  H.eq(t:apply('garbage'), nil)
  H.eq(t:apply({ sessionUpdate = 'agent_message_chunk', content = { type = 'image' } }), nil)
  local i = t:apply({ sessionUpdate = 'current_mode_update', currentModeId = 'plan' })
  H.eq(t.mode, 'plan')
  H.eq(render.entry_lines(t.entries[i]), { '-- mode: plan', '' })
end)

H.test('replayed user chunks start a new turn with its own agent header', function()
  local t = transcript_mod.new()
  t:apply({ sessionUpdate = 'user_message_chunk', content = { type = 'text', text = 'one' } })
  t:apply(chunk('A1'))
  t:apply({ sessionUpdate = 'user_message_chunk', content = { type = 'text', text = 'two' } })
  t:apply(chunk('A2'))
  H.eq(render.lines(t), {
    '## You', '', 'one', '', '## Agent', '', 'A1', '',
    '## You', '', 'two', '', '## Agent', '', 'A2', '',
  })
end)

H.test('user attachments are listed', function()
  local t = transcript_mod.new()
  t:add_user('why?', { 'a.py:3-4' })
  H.eq(render.lines(t), { '## You', '', 'why?', '`@a.py:3-4`', '' })
end)

H.test('view applies incremental updates equal to a full render', function()
  local view, lines, calls = list_view()
  local t = transcript_mod.new()
  local function step(index)
    view:refresh(t, index)
    H.eq(lines(), render.lines(t))
  end
  step(t:add_user('hi\nthere'))
  step(t:apply(chunk('a')))
  step(t:apply(chunk('b\nc')))
  step(t:apply({ sessionUpdate = 'tool_call', toolCallId = '1', title = 'Read x' }))
  step(t:apply(chunk('after tool')))
  -- An earlier entry grows: later entries shift down.
  step(t:apply({
    sessionUpdate = 'tool_call_update', toolCallId = '1', status = 'completed',
    content = { { type = 'content', content = { type = 'text', text = 'l1\nl2' } } },
  }))
  -- And shrinks again.
  step(t:apply({ sessionUpdate = 'tool_call_update', toolCallId = '1', content = {} }))
  step(t:apply(chunk(' more')))
  step(t:add_info('turn ended: cancelled'))
  step(nil)
  local before = calls()
  step(t:apply({ sessionUpdate = 'usage_update', used = 1, size = 2 }))
  H.eq(calls(), before, 'no write for invisible updates')
end)

H.test('streaming a long line rewrites only the last line', function()
  local writes = {}
  local view = render.view(function(start, end_, new)
    table.insert(writes, { start, end_, #new })
  end)
  local t = transcript_mod.new()
  view:refresh(t, t:add_user('q'))
  view:refresh(t, t:apply(chunk('x')))
  writes = {}
  for _ = 1, 5 do
    view:refresh(t, t:apply(chunk('y')))
  end
  for _, w in ipairs(writes) do
    H.eq(w, { 6, 7, 1 }, 'one line replaced per chunk')
  end
  H.eq(#writes, 5)
end)

H.test('view reset clears and re-renders', function()
  local view, lines = list_view()
  local t = transcript_mod.new()
  view:refresh(t, t:add_user('x'))
  view:reset()
  H.eq(lines(), {})
  view:refresh(t, nil)
  H.eq(lines(), render.lines(t))
  H.eq(view:entry_start(1), 0)
  H.eq(view:line_count(), #render.lines(t))
end)

H.test('view renders into a real buffer', function()
  local buf = vim.api.nvim_create_buf(false, true)
  local view = render.view(function(s, e, l)
    vim.api.nvim_buf_set_lines(buf, s, e, false, l)
  end)
  local t = transcript_mod.new()
  view:refresh(t, t:add_user('x'))
  view:refresh(t, t:apply(chunk('y\nz')))
  local expected = render.lines(t)
  table.insert(expected, '') -- the buffer's initial empty line stays last
  H.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), expected)
end)

H.test('diff_stat ignores file headers', function()
  H.eq({ render.diff_stat('--- a\n+++ b\n@@\n-x\n+y\n+z\n ctx') }, { 2, 1 })
end)

H.test('a failed read shows why; a refusal names its reason; <CR> expands output', function()
  local t = transcript_mod.new()
  t:add_user('go')
  t:apply({ sessionUpdate = 'tool_call', toolCallId = 'r', title = 'Read big.py', kind = 'read' })
  t:apply({
    sessionUpdate = 'tool_call_update', toolCallId = 'r', status = 'failed',
    content = { { type = 'content', content = { type = 'text',
      text = 'Cannot read big.py as text: file is too large' } } },
  })
  t:apply({ sessionUpdate = 'tool_call', toolCallId = 'b', title = 'Bash: rm -rf x',
    kind = 'execute' })
  t:apply({
    sessionUpdate = 'tool_call_update', toolCallId = 'b', status = 'failed',
    rawOutput = { refusal = { kind = 'denied', reason = 'the rule Bash(rm:*) denies it' } },
  })
  t:apply({ sessionUpdate = 'tool_call', toolCallId = 'c', title = 'Bash: seq 9',
    kind = 'execute' })
  t:apply({
    sessionUpdate = 'tool_call_update', toolCallId = 'c', status = 'completed',
    content = { { type = 'content', content = { type = 'text', text = '1\n2\n3\n4\n' } } },
  })
  local lines = render.lines(t, { tool_output_lines = 2 })
  H.eq(vim.list_slice(lines, 5), {
    '## Agent', '',
    '✗ Read big.py — failed', '    │ Cannot read big.py as text: file is too large', '',
    '✗ Bash: rm -rf x — failed: the rule Bash(rm:*) denies it', '',
    '● Bash: seq 9', '    │ 1', '    │ 2', '    │ … 2 more lines (<CR> shows them)', '',
  })
  t.entries[#t.entries].expanded = true
  lines = render.lines(t, { tool_output_lines = 2 })
  H.eq(vim.list_slice(lines, #lines - 4), { '    │ 1', '    │ 2', '    │ 3', '    │ 4', '' })
end)

H.test('a quiet read counts its lines in words that fit the count', function()
  local t = transcript_mod.new()
  t:add_user('go')
  for id, text in pairs({ one = 'x = 1\n', two = 'a\nb\n' }) do
    t:apply({ sessionUpdate = 'tool_call', toolCallId = id, title = 'Read ' .. id .. '.py',
      kind = 'read' })
    t:apply({
      sessionUpdate = 'tool_call_update', toolCallId = id, status = 'completed',
      content = { { type = 'content', content = { type = 'text', text = text } } },
    })
  end
  local text = table.concat(render.lines(t, {}), '\n')
  H.ok(text:find('Read one.py\n    1 line (<CR> shows it)', 1, true), text)
  H.ok(text:find('Read two.py\n    2 lines (<CR> shows them)', 1, true), text)
end)

H.finish()
