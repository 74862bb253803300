--- The plugin's own log: a ring buffer shown by :AgentLog.
---
--- Holds plugin events (server start, session changes, errors) and the server's
--- `window/logMessage` lines. The LSP wire itself is in Neovim's LSP log (:LspLog / lsp.log).
local M = {}

local LEVELS = { 'ERROR', 'WARN', 'INFO', 'DEBUG' }

local state = { entries = {}, first = 1, size = 2000 }

--- Set the number of entries kept.
--- @param size integer
function M.set_size(size)
  state.size = math.max(1, size)
end

--- Append one entry.
--- @param level 'ERROR'|'WARN'|'INFO'|'DEBUG'
--- @param fmt string `string.format` pattern
function M.log(level, fmt, ...)
  local ok, message = pcall(string.format, fmt, ...)
  if not ok then
    message = fmt
  end
  local line = ('%s [%s] %s'):format(os.date('%H:%M:%S'), level, message)
  table.insert(state.entries, line)
  while #state.entries - state.first + 1 > state.size do
    state.entries[state.first] = nil
    state.first = state.first + 1
  end
end

for _, level in ipairs(LEVELS) do
  M[level:lower()] = function(fmt, ...)
    M.log(level, fmt, ...)
  end
end

--- The kept entries, oldest first; each entry may contain newlines.
--- @return string[]
function M.entries()
  local out = {}
  for i = state.first, #state.entries do
    table.insert(out, state.entries[i])
  end
  return out
end

--- Open the log in a scratch buffer (reused) in a split.
function M.open()
  local name = 'lsp-agent://log'
  local bufnr = vim.fn.bufnr(name)
  if bufnr == -1 then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, name)
    vim.bo[bufnr].bufhidden = 'hide'
    vim.bo[bufnr].filetype = 'log'
  end
  local lines = {}
  for _, entry in ipairs(M.entries()) do
    vim.list_extend(lines, vim.split(entry, '\n', { plain = true }))
  end
  table.insert(lines, '')
  table.insert(lines, '-- LSP wire log: ' .. vim.lsp.get_log_path())
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  local win = vim.fn.bufwinid(bufnr)
  if win == -1 then
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, bufnr)
  else
    vim.api.nvim_set_current_win(win)
  end
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(bufnr), 0 })
  return bufnr
end

return M
