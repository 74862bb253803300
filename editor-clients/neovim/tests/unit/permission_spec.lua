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
      { optionId = 'allow_always', name = 'Always allow', kind = 'allow_always' },
      { optionId = 'reject_once', name = 'Reject', kind = 'reject_once' },
      { optionId = 'reject_always', name = 'Always reject', kind = 'reject_always' },
    },
    reason = 'Edit needs approval',
    source = 'default',
    suggestedRules = { 'Edit(//p/f.txt)' },
    scopes = { 'session', 'project', 'user' },
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
    scope = 'session',
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
  H.eq(select(2, result()), { outcome = { outcome = 'selected', optionId = 'reject_always',
    scope = 'session' } })
end)

H.test('<CR> offers the options with vim.ui.select; feedback via vim.ui.input', function()
  config.set({ permission = { auto_open = true } })
  local ui_select, ui_input = vim.ui.select, vim.ui.input
  local offered
  vim.ui.select = function(items, opts, on_choice)
    offered = { prompt = opts.prompt, items = vim.tbl_map(opts.format_item, items) }
    on_choice(items[4], 4)
  end
  local result = request(params())
  vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)
  H.eq(offered, {
    prompt = 'lsp-agent: Edit f.txt (always: Edit(//p/f.txt))',
    items = {
      'Allow', 'Reject',
      'Always allow · this session',
      'Always allow · project: .claude/settings.local.json',
      'Always allow · user: ~/.claude/settings.json',
      'Always reject · this session',
      'Always reject · project: .claude/settings.local.json',
      'Always reject · user: ~/.claude/settings.json',
      'Reject with feedback…', 'Decide later',
    },
  })
  H.eq(select(2, result()), { outcome = { outcome = 'selected', optionId = 'allow_always',
    scope = 'project' } }, 'the scope is part of the choice')
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

local PUSH = {
  toolCall = { toolCallId = 'toolu_push', title = 'git push origin main', kind = 'execute',
    rawInput = { command = 'git push origin main' } },
  options = {
    { optionId = 'allow_once', name = 'Allow', kind = 'allow_once' },
    { optionId = 'reject_once', name = 'Reject', kind = 'reject_once' },
    { optionId = 'reject_always', name = 'Always reject', kind = 'reject_always' },
  },
  reason = 'the rule Bash(git push:*) asks before `git push origin main` (project settings)',
  rule = 'Bash(git push:*)',
  source = 'project',
  suggestedRules = { 'Bash(git push:*)' },
}

local function window_lines(p)
  return vim.api.nvim_buf_get_lines(p.ui.buf, 0, -1, false)
end

--- The highlight groups of the ranges marked on 0-based `row`, as { text = group }.
local function range_highlights(p, row)
  local ns = vim.api.nvim_get_namespaces().lsp_agent_review
  local line = vim.api.nvim_buf_get_lines(p.ui.buf, row, row + 1, false)[1]
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(p.ui.buf, ns, { row, 0 }, { row, -1 },
    { details = true })) do
    if m[4].end_col then
      out[line:sub(m[3] + 1, m[4].end_col)] = m[4].hl_group
    end
  end
  return out
end

H.test('who asked: the rule and its settings layer, or the policy', function()
  H.eq(permission.describe_origin({ rule = 'Bash(git push:*)', source = 'project' }),
    'Asked by rule Bash(git push:*) from project settings')
  H.eq(permission.describe_origin({ rule = 'Edit(//p/a.py)' }), 'Asked by rule Edit(//p/a.py)')
  H.eq(permission.describe_origin({ source = 'sandbox' }), 'Asked by the sandbox')
  H.eq(permission.describe_origin({ source = 'default' }), 'Asked by the default policy')
  H.eq(permission.describe_origin({ source = 'local', rule = 'Bash(rm:*)' }),
    'Asked by rule Bash(rm:*) from local project settings')
  H.eq(permission.describe_origin({ source = 'policyServer' }), 'Asked by policyServer')
  H.eq(permission.describe_origin({}), nil)
  H.eq(permission.describe_origin({ rule = ' ', source = vim.NIL }), nil)
end)

H.test('the prompt: reason, who asked, the rule "always" remembers and where', function()
  config.set({ permission = { auto_open = true } })
  local result = request(params({ toolCall = { toolCallId = 'toolu_lint', title = 'npm run lint',
    kind = 'execute', rawInput = { command = 'npm run lint -- --fix' } },
    reason = '`npm run lint -- --fix`: npm run lint is not known to be read-only',
    suggestedRules = { 'Bash(npm run lint:*)' } }))
  local p = permission.list()[1]
  H.eq(window_lines(p), {
    'npm run lint',
    'Reason: `npm run lint -- --fix`: npm run lint is not known to be read-only',
    'Asked by the default policy',
    '$ npm run lint -- --fix',
    '',
    'a Allow · r Reject',
    'A Always allow · R Always reject',
    '  rule:  Bash(npm run lint:*)',
    '  keep in: [session] project user   (s changes)',
    '           kept for this session only; nothing is saved',
    'f reject with feedback · <CR> choose · q decide later',
  })
  H.eq(range_highlights(p, 7)['Bash(npm run lint:*)'], 'Special', 'the rule stands out')
  H.eq(range_highlights(p, 8)['[session]'], 'PmenuSel', 'the picked scope stands out')
  -- `s` moves to the next scope; the window shows it and what it means.
  vim.api.nvim_feedkeys('s', 'x', false)
  H.eq(p.scope, 'project')
  H.eq(window_lines(p)[9], '  keep in: session [project] user   (s changes)')
  H.eq(window_lines(p)[10], '           saved to .claude/settings.local.json in this project')
  H.eq(range_highlights(p, 8)['[project]'], 'PmenuSel')
  vim.api.nvim_feedkeys('A', 'x', false)
  H.eq(select(2, result()), { outcome = { outcome = 'selected', optionId = 'allow_always',
    scope = 'project' } })
end)

H.test('a path rule is shown as the file the user knows, the saved text below it', function()
  config.set({ permission = { auto_open = true } })
  local result = request(params({ suggestedRules = { 'Edit(//p/src/f.txt)' },
    suggestedRuleLabels = { 'Edit src/f.txt' } }))
  local p = permission.list()[1]
  local lines = window_lines(p)
  local at = nil
  for i, line in ipairs(lines) do
    if line:find('^  rule:') then
      at = i
    end
  end
  H.eq(lines[at], '  rule:  Edit src/f.txt')
  H.eq(lines[at + 1], '         saved as Edit(//p/src/f.txt)')
  H.eq(range_highlights(p, at - 1)['Edit src/f.txt'], 'Special')
  H.ok(p:answer('reject_once'))
  H.eq(select(2, result()).outcome.optionId, 'reject_once')
end)

H.test('a rule that asks: named in the prompt; no "always allow" when the server left it out', function()
  config.set({ permission = { auto_open = true } })
  local result = request(params(PUSH))
  local p = permission.list()[1]
  local lines = window_lines(p)
  H.eq(lines[3], 'Asked by rule Bash(git push:*) from project settings')
  H.eq(range_highlights(p, 2)['Bash(git push:*)'], 'Special')
  H.eq(lines[6], 'a Allow · r Reject')
  H.eq(lines[7], 'R Always reject', 'only the "always" answer offered')
  H.eq(lines[8], '  rule:  Bash(git push:*)')
  -- `A` does nothing here: the server offers no allow_always.
  local notify, said = vim.notify, nil
  vim.notify = function(msg)
    said = msg
  end
  vim.api.nvim_feedkeys('A', 'x', false)
  vim.notify = notify
  H.ok(said and said:find('offers no allow_always', 1, true), said)
  H.eq(result(), false, 'still waiting')
  -- `s` twice: the user scope; `R` rejects always, kept there.
  vim.api.nvim_feedkeys('ssR', 'x', false)
  H.eq(select(2, result()), { outcome = { outcome = 'selected', optionId = 'reject_always',
    scope = 'user' } })
end)

H.test('scopes: only offered ones; once answers carry none; an older server means session', function()
  config.set({ permission = { auto_open = false } })
  local result = request(params({ scopes = { 'project', 'session', 'bogus', 'project' } }))
  local p = permission.list()[1]
  H.eq(p.scopes, { 'project', 'session' })
  H.eq(p.scope, 'session', 'the session is preselected')
  local ok, err = p:set_scope('user')
  H.eq(ok, false)
  H.eq(err, 'scope "user" is not offered (offered: project, session)')
  local response, why = p:response_for('allow_always', nil, 'user')
  H.eq(response, nil)
  H.eq(why, 'scope "user" is not offered (offered: project, session)')
  H.eq(p:response_for('allow_once', nil, 'project'),
    { outcome = { outcome = 'selected', optionId = 'allow_once' } })
  H.eq(p:cycle_scope(), 'project', 'wraps around')
  H.ok(p:answer('reject_always'))
  H.eq(select(2, result()), { outcome = { outcome = 'selected', optionId = 'reject_always',
    scope = 'project' } })
  -- A server without suggestedRules/scopes: "always" is kept for the session; no scope key hint.
  config.set({ permission = { auto_open = true } })
  local old = params()
  old.scopes, old.suggestedRules, old.source = nil, nil, nil
  result = request(old)
  p = permission.list()[1]
  H.eq(p.scopes, { 'session' })
  local lines = window_lines(p)
  H.eq(lines[3], '', 'no "Asked by" line when the server does not say')
  H.eq(lines[5], 'A Always allow · R Always reject')
  H.eq(lines[6], '  rule:  (none suggested by the server)')
  H.eq(lines[7], '  keep in: [session]', 'one scope: nothing to change')
  vim.api.nvim_feedkeys('A', 'x', false)
  H.eq(select(2, result()).outcome.scope, 'session')
end)

H.test('once-only questions show no "always" lines', function()
  config.set({ permission = { auto_open = true } })
  local result = request(params({ options = {
    { optionId = 'allow_once', name = 'Allow', kind = 'allow_once' },
    { optionId = 'reject_once', name = 'Reject', kind = 'reject_once' },
  } }))
  local p = permission.list()[1]
  local text = table.concat(window_lines(p), '\n')
  H.ok(not text:find('keep in', 1, true), text)
  H.ok(not text:find('rule:', 1, true), text)
  H.ok(text:find('a Allow · r Reject', 1, true), text)
  close_all()
  H.eq(select(2, result()), { outcome = { outcome = 'cancelled' } })
end)

H.finish()
