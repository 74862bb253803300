--- Markdown rendering of a transcript, and a view that keeps a buffer in step with it.
---
--- `entry_lines()` turns one transcript entry into lines. `View` remembers what it wrote for
--- each entry and, when an entry changes, rewrites only the lines from the first one that
--- differs (up to the first of the unchanged tail) — streaming a long answer costs one line
--- per chunk, not the whole transcript.
--- The view writes through a `sink(start, end_, lines)` with `nvim_buf_set_lines` semantics
--- (0-based, end-exclusive), so tests can render into a plain Lua list.
local M = {}

local DEFAULT_ICONS = {
  pending = '○',
  in_progress = '◐',
  completed = '●',
  failed = '✗',
  awaiting = '?',
}

--- Count added and removed lines of a unified diff text.
--- @param diff string
--- @return integer added, integer removed
function M.diff_stat(diff)
  local added, removed = 0, 0
  for line in (diff .. '\n'):gmatch('([^\n]*)\n') do
    local c = line:sub(1, 1)
    if c == '+' and line:sub(1, 4) ~= '+++ ' then
      added = added + 1
    elseif c == '-' and line:sub(1, 4) ~= '--- ' then
      removed = removed + 1
    end
  end
  return added, removed
end

local function diff_summary(item)
  local added, removed
  if type(item.unifiedDiff) == 'string' then
    added, removed = M.diff_stat(item.unifiedDiff)
  else
    added, removed = 0, 0
    local old = type(item.oldText) == 'string' and item.oldText or ''
    local new = type(item.newText) == 'string' and item.newText or ''
    local diff = (vim.text and vim.text.diff or vim.diff)(old, new, { result_type = 'indices' })
    for _, h in ipairs(diff) do
      removed = removed + h[2]
      added = added + h[4]
    end
  end
  return ('    +%d -%d %s'):format(added, removed, vim.fn.fnamemodify(item.path or '', ':~:.'))
end

--- Why a tool call was refused, in one line (the refusal's reason: a rule, the user, a hook);
--- nil for other failures, whose output (shown below the title) says why.
--- @param entry table a tool entry
--- @return string|nil
function M.failure_reason(entry)
  local refusal = type(entry.raw_output) == 'table' and entry.raw_output.refusal or nil
  local reason = type(refusal) == 'table' and refusal.reason or nil
  if type(reason) ~= 'string' or vim.trim(reason) == '' then
    return nil
  end
  reason = vim.split(vim.trim(reason), '\n', { plain = true })[1]
  if vim.fn.strchars(reason) > 160 then
    reason = vim.fn.strcharpart(reason, 0, 159) .. '…'
  end
  return reason
end

local function tool_lines(entry, opts)
  local icons = opts.icons or DEFAULT_ICONS
  local icon = entry.awaiting and icons.awaiting or icons[entry.status] or icons.pending
  local title = tostring(entry.title):gsub('\n', ' ')
  local head = icon .. ' ' .. title
  local failed = entry.status == 'failed' and not entry.awaiting
  if entry.awaiting then
    head = head .. ' — awaiting permission'
  elseif failed then
    local reason = M.failure_reason(entry)
    head = head .. ' — failed' .. (reason and (': ' .. reason) or '')
  end
  local lines = { head }
  local max_output = entry.expanded and math.huge or (opts.tool_output_lines or 6)
  for _, item in ipairs(entry.content or {}) do
    if item.type == 'diff' then
      table.insert(lines, diff_summary(item))
    elseif item.type == 'content' and type(item.content) == 'table'
      and item.content.type == 'text' and type(item.content.text) == 'string' then
      local text = item.content.text:gsub('\n$', '')
      local out = vim.split(text, '\n', { plain = true })
      -- A read's output is the file itself: its size says enough (unless it failed, or the
      -- user expanded the card).
      local quiet = entry.tool_kind == 'read' and not failed and not entry.expanded
      local shown = quiet and 0 or max_output
      for i = 1, math.min(#out, shown) do
        table.insert(lines, '    │ ' .. out[i])
      end
      if quiet then
        local count = #out == 1 and '1 line (<CR> shows it)' or ('%d lines (<CR> shows them)'):format(#out)
        table.insert(lines, '    ' .. count)
      elseif #out > shown then
        local more = #out - shown
        table.insert(lines, more == 1 and '    │ … 1 more line (<CR> shows it)'
          or ('    │ … %d more lines (<CR> shows them)'):format(more))
      end
    end
  end
  table.insert(lines, '')
  return lines
end

local PLAN_MARKS = { pending = '[ ]', in_progress = '[~]', completed = '[x]' }

--- The model's Markdown headings two levels down (at most 6), outside code fences, so they
--- nest under the transcript's own `## You` / `## Agent` instead of standing beside them.
--- @param lines string[]
--- @return string[] a new list
function M.nest_headings(lines)
  local out, fence = {}, nil
  for _, line in ipairs(lines) do
    local marker = line:match('^%s*(```+)') or line:match('^%s*(~~~+)')
    if marker then
      if not fence then
        fence = marker:sub(1, 1)
      elseif marker:sub(1, 1) == fence then
        fence = nil
      end
      table.insert(out, line)
    elseif not fence and line:match('^#+%s') then
      local hashes, rest = line:match('^(#+)(%s.*)$')
      table.insert(out, ('#'):rep(math.min(#hashes + 2, 6)) .. rest)
    else
      table.insert(out, line)
    end
  end
  return out
end

--- Lines of one transcript entry (always ending with an empty separator line).
--- @param entry table a transcript entry
--- @param opts table|nil { icons, tool_output_lines }
--- @return string[]
function M.entry_lines(entry, opts)
  opts = opts or {}
  local kind = entry.kind
  if kind == 'header' then
    return { '## ' .. entry.text, '' }
  elseif kind == 'user' then
    local lines = { '## You', '' }
    vim.list_extend(lines, entry.lines)
    for _, label in ipairs(entry.attachments or {}) do
      table.insert(lines, '`@' .. label .. '`')
    end
    table.insert(lines, '')
    return lines
  elseif kind == 'agent' then
    local lines = M.nest_headings(entry.lines)
    table.insert(lines, '')
    return lines
  elseif kind == 'thought' then
    local lines = {}
    for _, line in ipairs(entry.lines) do
      table.insert(lines, line == '' and '>' or ('> ' .. line))
    end
    table.insert(lines, '')
    return lines
  elseif kind == 'tool' then
    return tool_lines(entry, opts)
  elseif kind == 'plan' then
    local lines = { '### Plan' }
    for _, item in ipairs(entry.plan_entries or {}) do
      local content = tostring(item.content or ''):gsub('\n', ' ')
      table.insert(lines, ('- %s %s'):format(PLAN_MARKS[item.status] or '[ ]', content))
    end
    table.insert(lines, '')
    return lines
  elseif kind == 'info' then
    local lines = {}
    for _, line in ipairs(vim.split(entry.text, '\n', { plain = true })) do
      table.insert(lines, '-- ' .. line)
    end
    if entry.summary and entry.expanded then
      -- A compaction's summary, shown under its line on request (<CR>, as a tool's output).
      for _, line in ipairs(vim.split(entry.summary, '\n', { plain = true })) do
        table.insert(lines, '   ' .. line)
      end
    elseif entry.summary then
      lines[#lines] = lines[#lines] .. ' (<CR>: summary)'
    end
    table.insert(lines, '')
    return lines
  end
  return { '' }
end

--- All lines of a transcript (what a fresh view writes).
--- @return string[]
function M.lines(transcript, opts)
  local out = {}
  for _, entry in ipairs(transcript.entries) do
    vim.list_extend(out, M.entry_lines(entry, opts))
  end
  return out
end

local View = {}
View.__index = View

--- A view writing through `sink(start, end_, lines)`.
--- @param sink fun(start: integer, end_: integer, lines: string[])
--- @param opts table|nil render options
function M.view(sink, opts)
  return setmetatable({ sink = sink, opts = opts or {}, rendered = {}, starts = {}, total = 0 },
    View)
end

--- Forget what was written; the next `refresh()` renders everything again.
--- Clears the target through the sink.
function View:reset()
  self.rendered, self.starts, self.total = {}, {}, 0
  self.sink(0, -1, {})
end

--- Number of lines written.
function View:line_count()
  return self.total
end

--- First line (0-based) of entry `index`, or nil when not rendered.
function View:entry_start(index)
  return self.starts[index]
end

--- Bring entry `index` (and every entry not yet written before it) up to date.
--- @param transcript table
--- @param index integer|nil entry that changed (nil: only append new entries)
function View:refresh(transcript, index)
  local n = #transcript.entries
  -- Entries appended since the last refresh are written in order, at the end.
  for i = #self.rendered + 1, n do
    local lines = M.entry_lines(transcript.entries[i], self.opts)
    self.starts[i] = self.total
    self.sink(self.total, self.total, lines)
    self.rendered[i] = lines
    self.total = self.total + #lines
    if i == index then
      index = nil
    end
  end
  if not index or not self.rendered[index] then
    return
  end
  local old = self.rendered[index]
  local new = M.entry_lines(transcript.entries[index], self.opts)
  local first = 1
  while first <= #old and first <= #new and old[first] == new[first] do
    first = first + 1
  end
  if first > #old and first > #new then
    return
  end
  -- Skip the common tail too (the separator line, tool output below a changed title).
  local old_last, new_last = #old, #new
  while old_last >= first and new_last >= first and old[old_last] == new[new_last] do
    old_last, new_last = old_last - 1, new_last - 1
  end
  local start = self.starts[index]
  self.sink(start + first - 1, start + old_last, vim.list_slice(new, first, new_last))
  self.rendered[index] = new
  local delta = #new - #old
  if delta ~= 0 then
    for i = index + 1, #self.rendered do
      self.starts[i] = self.starts[i] + delta
    end
    self.total = self.total + delta
  end
end

return M
