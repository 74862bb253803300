-- Permission prompts: the handler yields (never blocks), answers resume it; per-hunk answers
-- carry editedText; "decide later" keeps the request pending; the review window's keys.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../harness.lua')
local config = require('lsp_agent.config')
local permission = require('lsp_agent.permission')

config.set({})

local OLD = 'a\nb\nc\nd\ne\nf\n'
local NEW = 'a\nB\nc\nd\ne\nF\n'

local function params(extra)
  return vim.tbl_extend('force', {
    sessionId = 'sess-1',
    toolCall = {
      toolCallId = 'toolu_1',
      title = 'Edit f.txt',
      kind = 'edit',
      status = 'pending',
      content = { {
        type = 'diff', path = '/p/f.txt', uri = 'file:///p/f.txt', oldText = OLD, newText = NEW,
      } },
    },
    options = {
      { optionId = 'allow_once', name = 'Allow', kind = 'allow_once' },
      { optionId = 'allow_always', name = 'Allow for this session', kind = 'allow_always' },
      { optionId = 'reject_once', name = 'Reject', kind = 'reject_once' },
      { optionId = 'reject_always', name = 'Reject for this session', kind = 'reject_always' },
    },
    reason = 'Edit needs approval',
  }, extra or {})
end

--- Run the handler the way Neovim does: inside a coroutine. Returns a getter of the response.
local function request(p_params)
  local response, done = nil, false
  local co = coroutine.create(function()
    response = permission.handler(nil, p_params, { client_id = 9999, method = 'x' })
    done = true
  end)
  assert(coroutine.resume(co))
  return function()
    return done, response
  end
end

local function close_all()
  for _, p in ipairs(permission.list()) do
    p:resolve({ outcome = { outcome = 'cancelled' } })
  end
end

H.test('the handler yields until answered, then returns the answer', function()
  config.set({ permission = { auto_open = false } })
  local result = request(params())
  local done = result()
  H.eq(done, false, 'suspended while waiting: the editor loop keeps running')
  local p = permission.list()[1]
  H.eq(p:title(), 'Edit f.txt')
  H.eq(#p.files[1].proposal.hunks, 2)
  H.ok(p:answer('allow_once'))
  local finished, response = result()
  H.ok(finished)
  H.eq(response, { outcome = { outcome = 'selected', optionId = 'allow_once' } })
  H.eq(#permission.list(), 0)
end)

H.test('per-hunk decisions and edits become editedText keyed by uri', function()
  config.set({ permission = { auto_open = false } })
  local result = request(params())
  local p = permission.list()[1]
  p.edits_supported = true -- a server advertising protocolVersion >= 1
  H.ok(p:set_hunk(1, 1, false))
  H.ok(p:edit_hunk(1, 2, { 'F1', 'F2' }))
  H.ok(p:answer('allow_always', 'looks fine'))
  local _, response = result()
  H.eq(response, { outcome = {
    outcome = 'selected',
    optionId = 'allow_always',
    feedback = 'looks fine',
    editedText = { ['file:///p/f.txt'] = 'a\nb\nc\nd\ne\nF1\nF2\n' },
  } })
end)

H.test('allowing with every hunk rejected is a rejection', function()
  config.set({ permission = { auto_open = false } })
  local result = request(params())
  local p = permission.list()[1]
  p.edits_supported = true
  p:set_hunk(1, 1, false)
  p:set_hunk(1, 2, false)
  p:answer('allow_once')
  local _, response = result()
  H.eq(response.outcome.optionId, 'reject_once')
  H.ok(response.outcome.feedback:find('rejected every hunk', 1, true))
end)

H.test('every hunk rejected without a reject option: allow with the old text', function()
  config.set({ permission = { auto_open = false } })
  local p_params = params()
  p_params.options = { { optionId = 'ok', name = 'OK', kind = 'allow_once' } }
  local result = request(p_params)
  local p = permission.list()[1]
  p.edits_supported = true
  p:set_hunk(1, 1, false)
  p:set_hunk(1, 2, false)
  p:answer('ok')
  local _, response = result()
  H.eq(response.outcome.optionId, 'ok')
  H.eq(response.outcome.editedText, { ['file:///p/f.txt'] = OLD }, 'nothing changes')
end)

H.test('partial review is refused when the server cannot take edited text', function()
  config.set({ permission = { auto_open = false } })
  local result = request(params())
  local p = permission.list()[1]
  local notify = vim.notify
  local warned
  vim.notify = function(msg)
    warned = msg
  end
  H.eq(p:set_hunk(1, 1, false), false)
  vim.notify = notify
  H.ok(warned and warned:find('cannot apply a partly accepted edit', 1, true))
  H.eq(p.files[1].proposal.hunks[1].accepted, true)
  H.eq(result(), false)
  close_all()
end)

H.test('unknown options and malformed requests', function()
  config.set({ permission = { auto_open = false } })
  local result = request(params())
  local p = permission.list()[1]
  local response, err = p:response_for('nope')
  H.eq(response, nil)
  H.eq(err, 'no option "nope" offered')
  close_all()
  H.eq(select(2, result()), { outcome = { outcome = 'cancelled' } })
  local res, rpc_err = permission.handler(nil, { sessionId = 'x', options = {} }, { client_id = 1 })
  H.eq(res, nil)
  H.eq(rpc_err.code, vim.lsp.protocol.ErrorCodes.InvalidParams)
end)

H.test('a tool call that starts running drops its prompt', function()
  config.set({ permission = { auto_open = false } })
  local result = request(params())
  permission.on_update('sess-1', { sessionUpdate = 'tool_call_update', toolCallId = 'other',
    status = 'in_progress' })
  H.eq(#permission.list(), 1, 'another tool call changes nothing')
  permission.on_update('sess-1', { sessionUpdate = 'tool_call_update', toolCallId = 'toolu_1',
    status = 'failed' })
  H.eq(#permission.list(), 0)
  H.eq(select(2, result()), { outcome = { outcome = 'cancelled' } })
end)

H.test('review window: hunk keys, closing means later, reopening, answering', function()
  config.set({ permission = { auto_open = true } })
  local result = request(params())
  local p = permission.list()[1]
  p.edits_supported = true
  H.ok(p.ui and vim.api.nvim_win_is_valid(p.ui.win), 'opened at once')
  H.eq(vim.api.nvim_get_current_win(), p.ui.win)
  local text = table.concat(vim.api.nvim_buf_get_lines(p.ui.buf, 0, -1, false), '\n')
  H.ok(text:find('Edit f.txt', 1, true))
  H.ok(text:find('Reason: Edit needs approval', 1, true))
  H.ok(text:find('[✓] 1/2 @@ -2,1 +2,1 @@', 1, true), text)
  H.ok(text:find('-b\n+B', 1, true), text)
  -- Cursor starts on hunk 1; ]h moves to hunk 2; n rejects it.
  vim.api.nvim_feedkeys(']hn', 'x', false)
  H.eq(p.files[1].proposal.hunks[2].accepted, false)
  H.eq(p.files[1].proposal.hunks[1].accepted, true)
  text = table.concat(vim.api.nvim_buf_get_lines(p.ui.buf, 0, -1, false), '\n')
  H.ok(text:find('[✗] 2/2', 1, true), 'the window re-rendered')
  -- Closing the window: decide later. Still pending, handler still waiting.
  local notify = vim.notify
  vim.notify = function() end
  vim.api.nvim_win_close(p.ui.win, true)
  vim.wait(50, function()
    return false
  end)
  vim.notify = notify
  H.eq(#permission.list(), 1)
  H.eq(result(), false)
  -- :AgentReview equivalent reopens with the decisions kept; `a` answers.
  local reopened = permission.review_next()
  H.eq(reopened, p)
  text = table.concat(vim.api.nvim_buf_get_lines(p.ui.buf, 0, -1, false), '\n')
  H.ok(text:find('[✗] 2/2', 1, true))
  vim.api.nvim_feedkeys('a', 'x', false)
  local done, response = result()
  H.ok(done)
  H.eq(response.outcome.editedText, { ['file:///p/f.txt'] = 'a\nB\nc\nd\ne\nf\n' })
end)

H.test('review window: editing a hunk through its buffer', function()
  config.set({ permission = { auto_open = true } })
  local result = request(params())
  local p = permission.list()[1]
  p.edits_supported = true
  vim.api.nvim_feedkeys('e', 'x', false)
  local edit_buf = vim.api.nvim_get_current_buf()
  H.ok(vim.api.nvim_buf_get_name(edit_buf):find('lsp%-agent://hunk/'))
  H.eq(vim.api.nvim_buf_get_lines(edit_buf, 0, -1, false), { 'B' })
  vim.api.nvim_buf_set_lines(edit_buf, 0, -1, false, { 'B!', 'extra' })
  vim.cmd('write')
  H.eq(vim.api.nvim_get_current_win(), p.ui.win, 'back in the review window')
  H.eq(p.files[1].proposal.hunks[1].edited, { 'B!', 'extra' })
  local text = table.concat(vim.api.nvim_buf_get_lines(p.ui.buf, 0, -1, false), '\n')
  H.ok(text:find('[✎] 1/2', 1, true), text)
  vim.api.nvim_feedkeys('a', 'x', false)
  local _, response = result()
  H.eq(response.outcome.editedText, { ['file:///p/f.txt'] = 'a\nB!\nextra\nc\nd\ne\nF\n' })
end)

H.test('non-edit tool calls show the command; reject with the key', function()
  config.set({ permission = { auto_open = true } })
  local p_params = params({
    toolCall = { toolCallId = 'toolu_b', title = 'Bash: make test', kind = 'execute',
      rawInput = { command = 'make test' } },
  })
  local result = request(p_params)
  local p = permission.list()[1]
  local text = table.concat(vim.api.nvim_buf_get_lines(p.ui.buf, 0, -1, false), '\n')
  H.ok(text:find('$ make test', 1, true), text)
  vim.api.nvim_feedkeys('R', 'x', false)
  H.eq(select(2, result()), { outcome = { outcome = 'selected', optionId = 'reject_always' } })
end)

H.test('<CR> offers the options with vim.ui.select; feedback via vim.ui.input', function()
  config.set({ permission = { auto_open = true } })
  local ui_select, ui_input = vim.ui.select, vim.ui.input
  local offered
  vim.ui.select = function(items, opts, on_choice)
    offered = vim.tbl_map(opts.format_item, items)
    on_choice(items[2], 2)
  end
  local result = request(params())
  vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)
  H.eq(offered, { 'Allow', 'Allow for this session', 'Reject', 'Reject for this session',
    'Reject with feedback…', 'Decide later' })
  H.eq(select(2, result()), { outcome = { outcome = 'selected', optionId = 'allow_always' } })
  -- Feedback: `f`, then the text.
  vim.ui.input = function(_, on_confirm)
    on_confirm('use a constant')
  end
  result = request(params())
  vim.api.nvim_feedkeys('f', 'x', false)
  vim.ui.select, vim.ui.input = ui_select, ui_input
  H.eq(select(2, result()), { outcome = { outcome = 'selected', optionId = 'reject_once',
    feedback = 'use a constant' } })
end)

H.test('outside a coroutine the handler asks synchronously', function()
  config.set({ permission = { auto_open = false } })
  local confirm = vim.fn.confirm
  vim.fn.confirm = function()
    return 3
  end
  local response = permission.handler(nil, params(), { client_id = 1 })
  vim.fn.confirm = confirm
  H.eq(response, { outcome = { outcome = 'selected', optionId = 'reject_once' } })
end)

H.finish()
