-- Prompt building: selections (ranges in each encoding), @-mentions, the :AgentFix fallback,
-- diagnostics conversion for the bridge, and which server code action :AgentFix runs.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../harness.lua')
local actions = require('lsp_agent.actions')
local diagnostics = require('lsp_agent.diagnostics')

local function scratch(lines, name)
  local buf = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  if name then
    vim.api.nvim_buf_set_name(buf, name)
  end
  return buf
end

H.test('linewise selection: whole lines, range ends at the next line start', function()
  local buf = scratch({ 'one', 'two', 'three' })
  local text, range = actions.selection(buf, 2, 3, 'utf-16')
  H.eq(text, 'two\nthree\n')
  H.eq(range, { start = { line = 1, character = 0 }, ['end'] = { line = 3, character = 0 } })
end)

H.test('charwise selection with multibyte text, in utf-8, utf-16 and utf-32', function()
  -- "é" is 2 bytes (1 UTF-16 unit), "🙂" is 4 bytes (2 UTF-16 units, 1 UTF-32 unit).
  local buf = scratch({ 'aé🙂bc', 'x🙂yz' })
  -- Select from "é" (byte col 1) to "🙂" on line 2 (its first byte, col 1, inclusive).
  local sel = { start_col = 1, end_col = 1 }
  local text, r8 = actions.selection(buf, 1, 2, 'utf-8', sel)
  H.eq(text, 'é🙂bc\nx🙂')
  H.eq(r8, { start = { line = 0, character = 1 }, ['end'] = { line = 1, character = 5 } })
  local _, r16 = actions.selection(buf, 1, 2, 'utf-16', sel)
  H.eq(r16, { start = { line = 0, character = 1 }, ['end'] = { line = 1, character = 3 } })
  local _, r32 = actions.selection(buf, 1, 2, 'utf-32', sel)
  H.eq(r32, { start = { line = 0, character = 1 }, ['end'] = { line = 1, character = 2 } })
end)

H.test('buffer_text follows eol and carries unsaved text', function()
  local buf = scratch({ 'a', 'b' })
  H.eq(actions.buffer_text(buf), 'a\nb\n')
  vim.bo[buf].eol = false
  vim.bo[buf].fixeol = false
  H.eq(actions.buffer_text(buf), 'a\nb')
end)

H.test('resource blocks carry uri, text, mime type and range', function()
  local buf = scratch({ 'x' }, '/project/r.py')
  vim.bo[buf].filetype = 'python'
  local block = actions.resource(buf, 'x\n', { start = { line = 0, character = 0 },
    ['end'] = { line = 1, character = 0 } })
  H.eq(block, {
    type = 'resource',
    resource = {
      uri = 'file:///project/r.py',
      text = 'x\n',
      mimeType = 'text/x-python',
    },
    _meta = {
      range = { start = { line = 0, character = 0 }, ['end'] = { line = 1, character = 0 } },
    },
  })
end)

H.test('@-mentions resolve existing files and loaded buffers only', function()
  local root = vim.fn.tempname()
  vim.fn.mkdir(root .. '/src', 'p')
  vim.fn.writefile({ 'on disk' }, root .. '/src/a.py')
  vim.fn.writefile({ 'disk text' }, root .. '/b.py')
  -- b.py is loaded with unsaved text: the mention sends the buffer, not the disk.
  vim.cmd.edit(root .. '/b.py')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'buffer text' })
  local text = 'look at @src/a.py, and @b.py; not @missing.py or mail@example.com'
  local mentions = actions.mentions(text, root)
  H.eq(vim.tbl_map(function(m)
    return m.label
  end, mentions), { 'src/a.py', 'b.py' })
  local blocks, labels = actions.text_blocks(text, root)
  H.eq(labels, { 'src/a.py', 'b.py' })
  H.eq(blocks[1], { type = 'text', text = text })
  H.eq(blocks[2].resource.text, 'on disk\n')
  H.eq(blocks[3].resource.text, 'buffer text\n')
  H.eq(blocks[3].resource.uri, vim.uri_from_fname(root .. '/b.py'))
end)

H.test('@server:uri mentions are shown as attachments; the server attaches them', function()
  local text = 'Summarise @weather:notes://today, not mail@example.com or @C:/x'
  local blocks, labels = actions.text_blocks(text, vim.fn.tempname())
  H.eq(labels, { 'weather:notes://today' })
  H.eq(#blocks, 1)
end)

H.test('diagnostics at the cursor: covering ones first', function()
  local buf = scratch({ 'abcdef', 'ghi' })
  local ns = vim.api.nvim_create_namespace('unit_fix')
  vim.diagnostic.set(ns, buf, {
    { lnum = 0, col = 0, end_col = 2, message = 'left', severity = 2 },
    { lnum = 0, col = 3, end_col = 5, message = 'under cursor', severity = 1, source = 'lint',
      code = 'E1' },
    { lnum = 1, col = 0, message = 'other line', severity = 1 },
  })
  local items = actions.diagnostics_at_cursor(buf, 0, 4)
  H.eq(vim.tbl_map(function(d)
    return d.message
  end, items), { 'under cursor', 'left' })
  local blocks, text = actions.fix_blocks(buf, items, nil)
  H.ok(text:find('- Error 1:4: under cursor (lint E1)', 1, true), text)
  H.ok(text:find('- Warning 1:1: left', 1, true), text)
  H.eq(blocks[2].type, 'resource')
  H.eq(blocks[2].resource.text, 'abcdef\nghi\n')
  H.eq(blocks[2]._meta, nil, 'whole buffer, no range')
end)

H.test('vim.diagnostic → LSP diagnostics in the negotiated encoding, clamped', function()
  local buf = scratch({ 'x = "🙂" + y' })
  local items = {
    { lnum = 0, col = 10, end_lnum = 0, end_col = 13, message = 'm', severity = 1, source = 's' },
    { lnum = 5, col = 99, message = 'past the end', severity = 4 },
  }
  local out16 = diagnostics.to_lsp(buf, items, 'utf-16')
  H.eq(out16[1].range,
    { start = { line = 0, character = 8 }, ['end'] = { line = 0, character = 11 } })
  H.eq(out16[1].source, 's')
  local out8 = diagnostics.to_lsp(buf, items, 'utf-8')
  H.eq(out8[1].range.start.character, 10)
  H.eq(out8[2].range,
    { start = { line = 1, character = 0 }, ['end'] = { line = 1, character = 0 } })
  H.eq(diagnostics.character('🙂x', 4, 'utf-32'), 1)
end)

H.test(':AgentFix picks the server\'s "Fix with agent" for the diagnostic under the cursor', function()
  local pick = require('lsp_agent').pick_fix_action
  local function fix(message, extra)
    return vim.tbl_extend('force', { title = 'Fix with agent: ' .. message, kind = 'quickfix',
      data = { action = 'fix', uri = 'file:///a.py', problems = {} } }, extra or {})
  end
  local offered = {
    { title = 'AI fix (lsp-agent): x', kind = 'quickfix.lspAgent.suggestion', isPreferred = true,
      edit = {} },
    { title = 'Fix import', kind = 'quickfix', command = { command = 'other.fix' } },
    fix('first problem'),
    fix('second problem'),
    { title = 'Explain with agent', kind = 'refactor.lspAgent.explain',
      data = { action = 'explain' } },
  }
  H.eq(pick(offered, { message = 'second problem' }).title, 'Fix with agent: second problem')
  H.eq(pick(offered, { message = 'not offered' }).title, 'Fix with agent: first problem')
  -- The server cuts the title at 60 characters and at the first line.
  local long = string.rep('word ', 20)
  H.eq(pick({ fix('other'), fix(vim.trim(long):sub(1, 60)) }, { message = long .. '\nmore' }).title,
    'Fix with agent: ' .. vim.trim(long):sub(1, 60))
  -- A resolved action (command instead of data) counts too; nothing else does.
  local resolved = { title = 'Fix with agent: z', kind = 'quickfix',
    command = { command = 'lspAgent.fixWithAgent', arguments = { {} } } }
  H.eq(pick({ resolved }, { message = 'z' }), resolved)
  H.eq(pick({ offered[1], offered[2], offered[5] }, { message = 'x' }), nil)
  H.eq(pick(nil, { message = 'x' }), nil)
end)

H.finish()
