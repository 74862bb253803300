--- The transcript of one session: a list of entries built from `lspAgent/session/update`s.
---
--- Pure data (no buffers, no windows), so the renderer can be tested with plain asserts.
--- Entry kinds:
---   header  {text}                      "## Agent" before the first agent output of a turn
---   user    {lines, attachments}        the user's prompt (attachments: short labels)
---   agent   {lines}                     streamed answer text, one element per line
---   thought {lines}                     streamed thinking
---   tool    {id, title, tool_kind, status, content, locations, raw_input, raw_output, awaiting,
---            expanded (the user asked to see all of its output)}
---   plan    {plan_entries}
---   info    {text, summary, expanded}   stop reasons, mode changes, errors, compactions
---                                       (summary: the compaction's summary, shown when expanded)
--- `apply()` returns the index of the entry it changed or added (nil when nothing visible
--- changed), which the view re-renders.
local M = {}

local Transcript = {}
Transcript.__index = Transcript

local function k(n)
  n = tonumber(n) or 0
  if n >= 1000 then
    return ('%.1fk'):format(n / 1000)
  end
  return tostring(n)
end

local function plural(n, word)
  return ('%d %s%s'):format(n, word, n == 1 and '' or 's')
end

--- The one line a compaction shows: "Compacted: 182.0k → 31.0k tokens; kept 4 instructions,
--- 7 files" (the server's `context_compacted` update).
function M.compaction_line(update)
  return ('Compacted: %s → %s tokens; kept %s, %s'):format(
    k(update.tokensBefore),
    k(update.tokensAfter),
    plural(tonumber(update.promptsKept) or 0, 'instruction'),
    plural(tonumber(update.files) or 0, 'file')
  )
end

--- Slash-command completions for `base` (the text typed so far, starting with "/"):
--- complete-items for `vim.fn.complete`, from the session's advertised commands.
function Transcript:command_items(base)
  local items = {}
  for _, c in ipairs(self.commands or {}) do
    local word = '/' .. tostring(c.name)
    if word:sub(1, #base) == base then
      local hint = type(c.input) == 'table' and c.input.hint or nil
      table.insert(items, {
        word = word,
        menu = c.description,
        info = hint and ('/' .. c.name .. ' <' .. hint .. '>') or nil,
      })
    end
  end
  return items
end

--- A new, empty transcript.
function M.new()
  return setmetatable({
    entries = {},
    tools = {}, -- toolCallId -> entry index
    in_agent_turn = false,
    usage = nil, -- { used, size } from usage_update
    mode = nil, -- current mode id from current_mode_update
    commands = {}, -- { name, description, input } from available_commands_update
  }, Transcript)
end

local AGENT_SIDE = { agent = true, thought = true, tool = true, plan = true }

local function split(text)
  return vim.split(text, '\n', { plain = true })
end

function Transcript:_push(entry)
  if AGENT_SIDE[entry.kind] and not self.in_agent_turn then
    table.insert(self.entries, { kind = 'header', text = 'Agent' })
    self.in_agent_turn = true
  end
  table.insert(self.entries, entry)
  return #self.entries
end

--- Append streamed text to the last entry when it has the same kind, else start an entry.
function Transcript:_append_text(kind, text)
  local last = self.entries[#self.entries]
  if not (last and last.kind == kind) then
    if kind == 'user' then
      self.in_agent_turn = false
      -- A replayed user message (session/load): the next agent output gets a header again.
      table.insert(self.entries, { kind = 'user', lines = { '' }, attachments = {} })
      last = self.entries[#self.entries]
    else
      local index = self:_push({ kind = kind, lines = { '' } })
      last = self.entries[index]
    end
  end
  local parts = split(text)
  local lines = last.lines
  lines[#lines] = lines[#lines] .. parts[1]
  for i = 2, #parts do
    table.insert(lines, parts[i])
  end
  return #self.entries
end

--- Add the user's prompt.
--- @param text string
--- @param attachments string[]|nil short labels of attached resources ("a.py:3-7")
--- @return integer index
function Transcript:add_user(text, attachments)
  self.in_agent_turn = false
  table.insert(self.entries,
    { kind = 'user', lines = split(text), attachments = attachments or {} })
  return #self.entries
end

--- Add an informational line (stop reason, error, mode change).
--- @return integer index
function Transcript:add_info(text)
  table.insert(self.entries, { kind = 'info', text = text })
  return #self.entries
end

local TOOL_FIELDS = { 'title', 'status', 'content', 'locations' }

--- Mark a tool call as waiting for (or no longer waiting for) a permission answer.
--- @return integer|nil index
function Transcript:set_awaiting(tool_call_id, awaiting)
  local index = self.tools[tool_call_id]
  if not index then
    return nil
  end
  self.entries[index].awaiting = awaiting or nil
  return index
end

--- Apply one ACP-shaped session update.
--- @param update table the `update` of `lspAgent/session/update`
--- @return integer|nil index of the changed entry
function Transcript:apply(update)
  local kind = type(update) == 'table' and update.sessionUpdate or nil
  if kind == 'agent_message_chunk' or kind == 'agent_thought_chunk'
    or kind == 'user_message_chunk' then
    local content = update.content or {}
    if content.type ~= 'text' or type(content.text) ~= 'string' then
      return nil -- images and other blocks are not shown in the transcript
    end
    local target = ({
      agent_message_chunk = 'agent',
      agent_thought_chunk = 'thought',
      user_message_chunk = 'user',
    })[kind]
    return self:_append_text(target, content.text)
  elseif kind == 'tool_call' or kind == 'tool_call_update' then
    local id = update.toolCallId
    if type(id) ~= 'string' then
      return nil
    end
    local index = self.tools[id]
    if not index then
      index = self:_push({
        kind = 'tool',
        id = id,
        title = id,
        tool_kind = 'other',
        status = 'pending',
        content = {},
        locations = {},
      })
      self.tools[id] = index
    end
    local entry = self.entries[index]
    for _, field in ipairs(TOOL_FIELDS) do
      if update[field] ~= nil and update[field] ~= vim.NIL then
        entry[field] = update[field]
      end
    end
    if update.kind ~= nil and update.kind ~= vim.NIL then
      entry.tool_kind = update.kind
    end
    if update.rawInput ~= nil and update.rawInput ~= vim.NIL then
      entry.raw_input = update.rawInput
    end
    if type(update.rawOutput) == 'table' then
      entry.raw_output = update.rawOutput
    end
    return index
  elseif kind == 'plan' then
    local entries = type(update.entries) == 'table' and update.entries or {}
    -- The newest plan replaces the plan shown in the current turn.
    for i = #self.entries, 1, -1 do
      local entry = self.entries[i]
      if entry.kind == 'user' then
        break
      end
      if entry.kind == 'plan' then
        entry.plan_entries = entries
        return i
      end
    end
    return self:_push({ kind = 'plan', plan_entries = entries })
  elseif kind == 'usage_update' then
    self.usage = { used = update.used, size = update.size }
    return nil
  elseif kind == 'available_commands_update' then
    self.commands = type(update.availableCommands) == 'table' and update.availableCommands or {}
    return nil
  elseif kind == 'context_compacted' then
    table.insert(self.entries, {
      kind = 'info',
      text = M.compaction_line(update),
      summary = type(update.summary) == 'string' and update.summary or nil,
    })
    return #self.entries
  elseif kind == 'current_mode_update' then
    self.mode = update.currentModeId
    return self:add_info('mode: ' .. tostring(update.currentModeId))
  end
  return nil
end

return M
