--- The review window of a permission request: the tool call, its diff by hunk, and keys to
--- answer, accept/reject/edit single hunks, or close it to decide later.
local config = require('lsp_agent.config')
local hunks = require('lsp_agent.hunks')

local M = {}

local ns = vim.api.nvim_create_namespace('lsp_agent_review')

local MARK = { accepted = '[✓]', rejected = '[✗]', edited = '[✎]' }

local function hunk_state(hunk)
  if not hunk.accepted then
    return 'rejected'
  end
  return hunk.edited and 'edited' or 'accepted'
end

local function key_help(keys, pairs_)
  local parts = {}
  for _, pair in ipairs(pairs_) do
    local lhs = keys[pair[1]]
    if lhs and lhs ~= '' then
      table.insert(parts, lhs .. ' ' .. pair[2])
    end
  end
  return table.concat(parts, ' · ')
end

local function raw_input_lines(raw)
  if type(raw) ~= 'table' then
    return {}
  end
  if type(raw.command) == 'string' then
    local out = {}
    for i, line in ipairs(vim.split(raw.command, '\n', { plain = true })) do
      table.insert(out, (i == 1 and '$ ' or '  ') .. line)
    end
    return out
  end
  local ok, encoded = pcall(vim.json.encode, raw)
  if not ok then
    return { vim.inspect(raw) }
  end
  return vim.split(vim.inspect(vim.json.decode(encoded)), '\n', { plain = true })
end

local OPTION_KEYS = {
  allow_once = 'allow',
  allow_always = 'allow_always',
  reject_once = 'reject',
  reject_always = 'reject_always',
}

local function option_labels(keys, options)
  local out = {}
  for _, option in ipairs(options) do
    local key = keys[OPTION_KEYS[option.kind]]
    table.insert(out, (key and key ~= '' and (key .. ' ') or '') .. (option.name or option.optionId))
  end
  return table.concat(out, ' · ')
end

--- The review text of a pending request.
--- @return string[] lines, table[] highlights {line (0-based), group[, start_col, end_col,
---   priority]} (no columns: the whole line), table line_map (1-based line -> { file = i, hunk = j })
function M.build(p)
  local keys = config.get().keymaps.review or {}
  local lines, hl, map = {}, {}, {}
  local function add(line, group)
    table.insert(lines, line)
    if group then
      table.insert(hl, { #lines - 1, group })
    end
  end
  --- Highlight the first `text` at or after byte `from` of the last line; returns the byte
  --- after it (nil when not found). Ranges on a line drawn over a dimmed base (`dim`) need a
  --- higher priority; whole-line groups would hide them, so those lines use ranges only.
  local function mark(text, group, from, priority)
    local start = lines[#lines]:find(text, from or 1, true)
    if start then
      table.insert(hl, { #lines - 1, group, start - 1, start - 1 + #text, priority or 200 })
      return start + #text
    end
    return nil
  end
  local function dim(first, last)
    table.insert(hl, { #lines - 1, 'Comment', first or 0, last or #lines[#lines], 100 })
  end
  add(p:title(), 'Title')
  if type(p.params.reason) == 'string' and p.params.reason ~= '' then
    add('Reason: ' .. p.params.reason:gsub('\n', ' '), 'Comment')
  end
  for _, status in ipairs(p:proposal_notes()) do
    add(status.text, status.group)
  end
  local origin = require('lsp_agent.permission').describe_origin(p.params)
  if origin then
    add(origin)
    dim()
    if p.rule then
      mark(p.rule, 'Special')
    end
  end
  for _, line in ipairs(raw_input_lines(#p.files == 0 and p.tool_call.rawInput or nil)) do
    add(line, 'Special')
  end
  for _, item in ipairs(p.tool_call.content or {}) do
    if type(item) == 'table' and item.type == 'content' and type(item.content) == 'table'
      and type(item.content.text) == 'string' then
      for _, line in ipairs(vim.split(item.content.text, '\n', { plain = true })) do
        add(line)
      end
    end
  end
  add('')
  local once, always = p:split_options()
  add(option_labels(keys, once), 'Comment')
  if #always > 0 then
    -- The "always" answers, the exact rules they remember and where: shown before answering.
    add(option_labels(keys, always), 'Comment')
    -- The rules in the user's words ("Edit src/calc.py"); when that differs from the rule
    -- text that is saved ("Edit(//home/me/proj/src/calc.py)"), the text follows, dimmed.
    local shown = #p.suggested_rules > 0 and table.concat(p.rule_labels, '  ')
      or '(none suggested by the server)'
    add((#p.suggested_rules > 1 and '  rules: ' or '  rule:  ') .. shown)
    dim(0, 9)
    for _, label in ipairs(p.rule_labels) do
      mark(label, 'Special')
    end
    if #p.suggested_rules == 0 then
      dim(9)
    end
    local saved = table.concat(p.suggested_rules, '  ')
    if #p.suggested_rules > 0 and saved ~= shown then
      add('         saved as ' .. saved)
      dim()
    end
    local scopes = {}
    for _, scope in ipairs(p.scopes) do
      table.insert(scopes, scope == p.scope and ('[' .. scope .. ']') or scope)
    end
    local scope_key = keys.scope
    local hint = (#p.scopes > 1 and scope_key and scope_key ~= '')
      and ('   (' .. scope_key .. ' changes)') or ''
    add('  keep in: ' .. table.concat(scopes, ' ') .. hint)
    dim(0, 10)
    mark('[' .. p.scope .. ']', 'PmenuSel')
    if hint ~= '' then
      dim(#lines[#lines] - #hint)
    end
    add('           ' .. (require('lsp_agent.permission').SCOPE_DETAIL[p.scope] or ''), 'Comment')
  end
  add(key_help(keys, { { 'feedback', 'reject with feedback' }, { 'choose', 'choose' },
    { 'later', 'decide later' } }), 'Comment')
  if #p.files > 0 then
    add(key_help(keys, { { 'accept_hunk', 'accept hunk' }, { 'reject_hunk', 'reject hunk' },
      { 'edit_hunk', 'edit hunk' }, { 'next_hunk', 'next' }, { 'prev_hunk', 'previous' } }),
      'Comment')
  end
  for fi, file in ipairs(p.files) do
    local t = hunks.tally(file.proposal)
    add('')
    add(('── %s ── %d hunk(s): %d accepted, %d rejected, %d edited%s'):format(
      vim.fn.fnamemodify(file.path or '?', ':~:.'), t.total, t.accepted, t.rejected, t.edited,
      type(file.item.oldText) ~= 'string' and ' (new file)' or ''), 'Title')
    for hi, hunk in ipairs(file.proposal.hunks) do
      local state = hunk_state(hunk)
      local diff = hunks.hunk_diff_lines(hunk, file.proposal.old, 2)
      add(('%s %d/%d %s'):format(MARK[state], hi, t.total, diff[1]),
        state == 'rejected' and 'DiagnosticError' or 'DiagnosticOk')
      map[#lines] = { file = fi, hunk = hi }
      for i = 2, #diff do
        local line = diff[i]
        local mark = line:sub(1, 1)
        local group = mark == '+' and 'DiffAdd' or mark == '-' and 'DiffDelete' or nil
        if state == 'rejected' and group == 'DiffAdd' then
          group = 'Comment'
        end
        add(line, group)
        map[#lines] = { file = fi, hunk = hi }
      end
    end
  end
  return lines, hl, map
end

local function hunk_at_cursor(ui)
  local line = vim.api.nvim_win_get_cursor(0)[1]
  return ui.map[line]
end

local function jump(ui, direction)
  local line = vim.api.nvim_win_get_cursor(0)[1]
  local starts = {}
  local last
  for l = 1, vim.api.nvim_buf_line_count(ui.buf) do
    local entry = ui.map[l]
    local key = entry and (entry.file .. ':' .. entry.hunk)
    if entry and key ~= last then
      table.insert(starts, l)
    end
    last = key
  end
  local target
  if direction > 0 then
    for _, l in ipairs(starts) do
      if l > line then
        target = l
        break
      end
    end
  else
    for i = #starts, 1, -1 do
      if starts[i] < line then
        target = starts[i]
        break
      end
    end
  end
  if target then
    vim.api.nvim_win_set_cursor(0, { target, 0 })
  end
end

local function edit_hunk(p, ui)
  local at = hunk_at_cursor(ui)
  if not at then
    vim.notify('lsp-agent: the cursor is not on a hunk', vim.log.levels.INFO)
    return
  end
  local hunk = p:hunk(at.file, at.hunk)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, ('lsp-agent://hunk/%d/%d/%d'):format(p.n, at.file, at.hunk))
  vim.bo[buf].buftype = 'acwrite'
  vim.bo[buf].bufhidden = 'wipe'
  local path = p.files[at.file].path or ''
  local ft = vim.filetype.match({ filename = path }) or ''
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, hunk.edited or hunk.new_lines)
  vim.bo[buf].filetype = ft
  vim.bo[buf].modified = false
  local width = math.min(vim.o.columns - 8, 100)
  local height = math.min(vim.o.lines - 8, math.max(5, #(hunk.edited or hunk.new_lines) + 2))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    width = width,
    height = height,
    row = math.floor((vim.o.lines - height) / 2),
    col = math.floor((vim.o.columns - width) / 2),
    border = 'rounded',
    title = ' edit hunk — :w accepts, :q discards ',
    zindex = 60,
  })
  vim.api.nvim_create_autocmd('BufWriteCmd', {
    buffer = buf,
    callback = function()
      local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
      if p:edit_hunk(at.file, at.hunk, lines) then
        vim.bo[buf].modified = false
        if vim.api.nvim_win_is_valid(win) then
          vim.api.nvim_win_close(win, true)
        end
        if ui.win and vim.api.nvim_win_is_valid(ui.win) then
          vim.api.nvim_set_current_win(ui.win)
        end
      end
    end,
  })
end

local SCOPE_LABEL = {
  session = 'this session',
  project = 'project: .claude/settings.local.json',
  user = 'user: ~/.claude/settings.json',
}

local function choose(p)
  local once, always = p:split_options()
  local items = {}
  for _, option in ipairs(once) do
    table.insert(items, { optionId = option.optionId, name = option.name or option.optionId })
  end
  -- One entry per "always" answer and scope: the scope is part of the choice.
  for _, option in ipairs(always) do
    for _, scope in ipairs(p.scopes) do
      table.insert(items, {
        optionId = option.optionId,
        scope = scope,
        name = ('%s · %s'):format(option.name or option.optionId, SCOPE_LABEL[scope]),
      })
    end
  end
  table.insert(items, { optionId = '__feedback', name = 'Reject with feedback…' })
  table.insert(items, { optionId = '__later', name = 'Decide later' })
  local prompt = 'lsp-agent: ' .. p:title()
  if #always > 0 and #p.suggested_rules > 0 then
    prompt = prompt .. ' (always: ' .. table.concat(p.rule_labels, ', ') .. ')'
  end
  vim.ui.select(items, {
    prompt = prompt,
    format_item = function(item)
      return item.name
    end,
  }, function(item)
    if not item or item.optionId == '__later' then
      return
    elseif item.optionId == '__feedback' then
      M.ask_feedback(p)
    else
      p:answer(item.optionId, nil, item.scope)
    end
  end)
end

--- Ask for feedback text and reject with it.
function M.ask_feedback(p)
  vim.ui.input({ prompt = 'Feedback for the agent: ' }, function(text)
    if text and text ~= '' then
      p:answer('reject_once', text)
    end
  end)
end

local function set_keymaps(p, ui)
  local keys = config.get().keymaps.review or {}
  local function map(lhs, fn, desc)
    if lhs and lhs ~= '' then
      vim.keymap.set('n', lhs, fn, { buffer = ui.buf, nowait = true, desc = 'lsp-agent: ' .. desc })
    end
  end
  local function answer(kind)
    return function()
      if p:option(kind) then
        p:answer(kind)
      else
        vim.notify(('lsp-agent: the server offers no %s option here'):format(kind))
      end
    end
  end
  map(keys.allow, answer('allow_once'), 'allow once')
  map(keys.allow_always, answer('allow_always'), 'allow always (in the shown scope)')
  map(keys.reject, answer('reject_once'), 'reject')
  map(keys.reject_always, answer('reject_always'), 'reject always (in the shown scope)')
  map(keys.scope, function()
    p:cycle_scope()
  end, 'change where "always" answers are kept')
  map(keys.feedback, function()
    M.ask_feedback(p)
  end, 'reject with feedback')
  map(keys.choose, function()
    choose(p)
  end, 'choose an answer')
  map(keys.later, function()
    p:later()
  end, 'decide later')
  local function set_hunk(accepted)
    return function()
      local at = hunk_at_cursor(ui)
      if at then
        p:set_hunk(at.file, at.hunk, accepted)
      else
        vim.notify('lsp-agent: the cursor is not on a hunk', vim.log.levels.INFO)
      end
    end
  end
  map(keys.accept_hunk, set_hunk(true), 'accept hunk')
  map(keys.reject_hunk, set_hunk(false), 'reject hunk')
  map(keys.edit_hunk, function()
    edit_hunk(p, ui)
  end, 'edit hunk')
  map(keys.next_hunk, function()
    jump(ui, 1)
  end, 'next hunk')
  map(keys.prev_hunk, function()
    jump(ui, -1)
  end, 'previous hunk')
end

local function fill(ui, p)
  local lines, hl, map = M.build(p)
  ui.map = map
  vim.bo[ui.buf].modifiable = true
  vim.api.nvim_buf_set_lines(ui.buf, 0, -1, false, lines)
  vim.bo[ui.buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(ui.buf, ns, 0, -1)
  for _, h in ipairs(hl) do
    if h[3] then
      vim.api.nvim_buf_set_extmark(ui.buf, ns, h[1], h[3], { end_col = h[4], hl_group = h[2],
        priority = h[5] })
    else
      vim.api.nvim_buf_set_extmark(ui.buf, ns, h[1], 0, { line_hl_group = h[2] })
    end
  end
  return lines
end

--- Open (or focus) the review window of a pending request.
function M.open(p)
  if p.ui and p.ui.win and vim.api.nvim_win_is_valid(p.ui.win) then
    vim.api.nvim_set_current_win(p.ui.win)
    return p.ui
  end
  local ui = { origin = vim.api.nvim_get_current_win() }
  ui.buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(ui.buf, ('lsp-agent://permission/%d'):format(p.n))
  vim.bo[ui.buf].bufhidden = 'wipe'
  -- A filetype of its own, as the chat (markdown) and the MCP list have: users can theme it and
  -- hang autocommands on it.
  vim.bo[ui.buf].filetype = 'lsp_agent_permission'
  vim.b[ui.buf].lsp_agent_permission = p.n
  local lines = fill(ui, p)
  local longest = 40
  for _, line in ipairs(lines) do
    longest = math.max(longest, vim.fn.strdisplaywidth(line))
  end
  if config.get().permission.window == 'split' then
    ui.win = vim.api.nvim_open_win(ui.buf, true, {
      split = 'below',
      win = -1,
      height = math.min(#lines, math.floor(vim.o.lines / 2)),
    })
  else
    local width = math.min(vim.o.columns - 4, longest + 2)
    local height = math.max(1, math.min(vim.o.lines - 4, #lines))
    ui.win = vim.api.nvim_open_win(ui.buf, true, {
      relative = 'editor',
      width = width,
      height = height,
      row = math.floor((vim.o.lines - height) / 2) - 1,
      col = math.floor((vim.o.columns - width) / 2),
      border = 'rounded',
      title = ' lsp-agent: permission ',
      zindex = 50,
    })
  end
  -- The answer keys are normal-mode keys; text typed in insert mode must not land here.
  vim.cmd('stopinsert')
  -- Local options the float would otherwise inherit from the window it was opened from.
  vim.wo[ui.win].number = false
  vim.wo[ui.win].relativenumber = false
  vim.wo[ui.win].signcolumn = 'no'
  vim.wo[ui.win].foldcolumn = '0'
  vim.wo[ui.win].wrap = true
  vim.wo[ui.win].linebreak = true
  vim.wo[ui.win].cursorline = true
  ui.refresh = function()
    if vim.api.nvim_buf_is_valid(ui.buf) then
      local cursor = ui.win and vim.api.nvim_win_is_valid(ui.win)
        and vim.api.nvim_win_get_cursor(ui.win)
      fill(ui, p)
      if cursor then
        cursor[1] = math.min(cursor[1], vim.api.nvim_buf_line_count(ui.buf))
        pcall(vim.api.nvim_win_set_cursor, ui.win, cursor)
      end
    end
  end
  ui.close = function()
    ui.closing = true
    if ui.win and vim.api.nvim_win_is_valid(ui.win) then
      vim.api.nvim_win_close(ui.win, true)
    end
    if ui.origin and vim.api.nvim_win_is_valid(ui.origin) then
      pcall(vim.api.nvim_set_current_win, ui.origin)
    end
    p.ui = nil
  end
  vim.api.nvim_create_autocmd('WinClosed', {
    pattern = tostring(ui.win),
    once = true,
    callback = function()
      if not ui.closing and not p.result then
        p.ui = nil
        vim.schedule(function()
          p:later() -- closed by the user: decide later, not reject
        end)
      end
    end,
  })
  set_keymaps(p, ui)
  -- Start on the first hunk, where the hunk keys act.
  for l = 1, #lines do
    if ui.map[l] then
      vim.api.nvim_win_set_cursor(ui.win, { l, 0 })
      break
    end
  end
  p.ui = ui
  return ui
end

return M
