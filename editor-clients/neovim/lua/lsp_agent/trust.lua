--- Workspace trust: which project roots may run their own settings and hooks.
---
--- Decisions are asked once per root and stored as JSON `{ "<root>": true|false }` in
--- stdpath("data")/lsp_agent/trust.json. Opening a file never asks: a root without a decision
--- gets a server started untrusted (`trusted = false` in its initializationOptions; the server
--- then ignores project settings, hooks and MCP servers of that root). The question comes when
--- the agent is first used in the root (a chat, a prompt, a code action), as Claude Code asks
--- when started in a folder; "Not now" (or dismissing it) is remembered until Neovim exits.
local config = require('lsp_agent.config')
local log = require('lsp_agent.log')

local M = {}

local function normalize(path)
  local normalized = vim.fs.normalize(vim.fn.fnamemodify(path, ':p')):gsub('(.)/$', '%1')
  return normalized
end

--- Path of the decisions file.
--- @return string
function M.file()
  return config.get().trust.file or (vim.fn.stdpath('data') .. '/lsp_agent/trust.json')
end

--- Read the stored decisions; a missing file is empty, a corrupt one is reported and ignored.
--- @return table<string, boolean>
function M.read()
  local path = M.file()
  local fd = io.open(path, 'r')
  if not fd then
    return {}
  end
  local text = fd:read('*a')
  fd:close()
  if text == '' then
    return {}
  end
  local ok, decoded = pcall(vim.json.decode, text)
  if not ok or type(decoded) ~= 'table' then
    log.warn('trust file %s is not a JSON object; ignoring it', path)
    return {}
  end
  local out = {}
  for root, value in pairs(decoded) do
    if type(value) == 'boolean' then
      out[root] = value
    end
  end
  return out
end

--- Store a decision for `root` (atomically: temp file + rename).
--- @param root string
--- @param trusted boolean
function M.set(root, trusted)
  local decisions = M.read()
  decisions[normalize(root)] = trusted
  local path = M.file()
  vim.fn.mkdir(vim.fs.dirname(path), 'p')
  local tmp = path .. '.tmp'
  local fd = assert(io.open(tmp, 'w'))
  fd:write(vim.json.encode(decisions))
  fd:close()
  assert(os.rename(tmp, path))
end

--- The decision for `root`: true, false, or nil when the user has not been asked yet.
--- @param root string
--- @return boolean|nil
function M.get(root)
  root = normalize(root)
  local opts = config.get().trust
  for _, folder in ipairs(opts.folders or {}) do
    if normalize(folder) == root then
      return true
    end
  end
  local stored = M.read()[root]
  if stored ~= nil then
    return stored
  end
  if opts.default == true or opts.default == false then
    return opts.default
  end
  return nil
end

-- Roots being asked about now, with the callbacks waiting for the answer.
local asking = {}
-- Roots whose question was answered "Not now" (or dismissed) in this Neovim session.
local postponed = {}

--- Whether `root` still needs the question: no decision, and not postponed in this session.
--- @param root string
--- @return boolean
function M.needs_question(root)
  return M.get(root) == nil and not postponed[normalize(root)]
end

--- Forget the "Not now" answers of this session (tests).
function M.reset_postponed()
  postponed = {}
end

--- Call `callback(trusted)` once the trust of `root` is known, asking the user if needed
--- (a "Not now" of this session counts as not trusted, without asking again). Concurrent
--- calls for the same root share one question.
--- @param root string
--- @param callback fun(trusted: boolean)
function M.resolve(root, callback)
  local decided = M.get(root)
  if decided ~= nil then
    callback(decided)
    return
  end
  root = normalize(root)
  if postponed[root] then
    callback(false)
    return
  end
  if asking[root] then
    table.insert(asking[root], callback)
    return
  end
  asking[root] = { callback }
  local choices = {
    'Trust (project settings, hooks and MCP servers may run)',
    'Do not trust (the agent runs with project configuration disabled)',
    'Not now (ask again next time Neovim starts)',
  }
  vim.ui.select(choices, { prompt = ('lsp-agent: trust the folder %s?'):format(root) },
    function(_, index)
      -- "Not now" and dismissing count as "not trusted" for this Neovim session, unstored.
      local trusted = index == 1
      if index == 1 or index == 2 then
        M.set(root, trusted)
      else
        postponed[root] = true
      end
      log.info('trust %s: %s%s', root, tostring(trusted),
        (index == 1 or index == 2) and '' or ' (not now)')
      local waiting = asking[root] or {}
      asking[root] = nil
      for _, cb in ipairs(waiting) do
        cb(trusted)
      end
    end)
end

return M
