--- Options of lsp-agent.nvim: defaults, merging and validation.
---
--- `setup()` merges the user's table over `defaults()`; every other module reads the merged
--- options through `get()`. Unknown keys are reported (a typo must not be silently ignored).
local M = {}

--- Permission modes the server knows (Claude Code's modes).
M.MODES = { 'default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk' }

--- Default options. A function so that callers can never mutate the shared defaults.
--- @return table
function M.defaults()
  return {
    -- Command that starts the server (stdio). A list, as for `vim.lsp.start()`.
    cmd = { 'lsp-agent', 'serve' },
    -- Extra environment for the server process (e.g. ANTHROPIC_BASE_URL).
    cmd_env = nil,
    -- Command printing the server version; nil = `cmd` up to "serve", plus "--version".
    version_cmd = nil,
    -- Model name sent in initializationOptions (nil = the server's own choice).
    model = nil,
    -- Initial permission mode of new sessions (nil = the server's default).
    permission_mode = nil,
    -- Your own MCP servers, shaped like `mcpServers` in .mcp.json (nil = none), e.g.
    -- { github = { type = 'http', url = 'https://example.com/mcp' } }. They run without
    -- approval, like those in ~/.claude.json (sent as initializationOptions.lspAgent.mcpServers).
    mcp_servers = nil,
    -- Start the server for file buffers automatically.
    autostart = true,
    -- Files or directories that mark a project root (searched upwards from the buffer).
    root_markers = {
      '.git',
      '.hg',
      '.jj',
      'CLAUDE.md',
      'AGENTS.md',
      '.claude',
      'pyproject.toml',
      'package.json',
      'Cargo.toml',
      'go.mod',
    },
    -- fun(bufnr): string|nil overriding root detection (nil = no server for that buffer).
    root_dir = nil,
    -- Filetypes to attach to (nil = every file buffer).
    filetypes = nil,
    trust = {
      -- 'ask' (once per root), true (trust every root) or false (never trust).
      default = 'ask',
      -- Roots always trusted (absolute paths), in addition to the stored decisions.
      folders = {},
      -- Where decisions are stored (nil = stdpath("data") .. "/lsp_agent/trust.json").
      file = nil,
    },
    chat = {
      -- 'right', 'left', 'bottom' or 'top'.
      position = 'right',
      width = 80,
      height = 20,
      prompt_height = 6,
      -- Lines of tool output shown under a tool call in the transcript.
      tool_output_lines = 6,
      -- Open the chat when a session starts streaming from elsewhere (code action, resume).
      auto_open = true,
    },
    permission = {
      -- 'float' or 'split' for the review window.
      window = 'float',
      -- Open the review window at once (false: only notify; :AgentReview opens it).
      auto_open = true,
    },
    diagnostics = {
      -- Forward other language servers' diagnostics to the agent.
      enabled = true,
      debounce_ms = 250,
    },
    icons = {
      pending = '○',
      in_progress = '◐',
      completed = '●',
      failed = '✗',
      awaiting = '?',
    },
    keymaps = {
      -- Global normal/visual mappings; set one (or all: `global = false`) to false to disable.
      -- A mapping is only made where the key is not mapped already.
      global = {
        chat = '<leader>ac',
        ask = '<leader>aa',
        fix = '<leader>af',
        cancel = '<leader>ax',
        review = '<leader>ar',
      },
      chat = {
        submit = '<CR>',
        -- Insert mode: <CR> sends (as in VS Code's chat); <C-j> inserts a line break.
        submit_insert = { '<CR>', '<C-s>' },
        cancel = '<C-c>',
        close = 'q',
        review = 'gp',
        expand = '<CR>', -- transcript: show or fold all output of the tool call under the cursor
      },
      review = {
        allow = 'a',
        allow_always = 'A',
        reject = 'r',
        reject_always = 'R',
        -- Change where "always" answers are kept (session → project → user).
        scope = 's',
        feedback = 'f',
        choose = '<CR>',
        accept_hunk = 'y',
        reject_hunk = 'n',
        edit_hunk = 'e',
        next_hunk = ']h',
        prev_hunk = '[h',
        later = 'q',
      },
    },
    -- Entries kept in the :AgentLog ring buffer.
    log_size = 2000,
    -- Lowest server log level forwarded to the editor (window/logMessage, shown in :AgentLog):
    -- 'error', 'warning', 'info' or 'debug'.
    server_log_level = 'warning',
  }
end

local current = nil

--- Walk `user` against `defaults` and collect keys that have no default.
--- Tables without defaults underneath (cmd, cmd_env, folders, ...) are leaves.
local LEAF_TABLES = {
  cmd = true,
  cmd_env = true,
  mcp_servers = true,
  version_cmd = true,
  root_markers = true,
  filetypes = true,
  folders = true,
}

-- Options whose default is nil (so they are absent from `defaults()`).
local OPTIONAL = {
  cmd_env = true,
  mcp_servers = true,
  version_cmd = true,
  model = true,
  permission_mode = true,
  root_dir = true,
  filetypes = true,
  file = true,
}

local function unknown_keys(user, defaults, prefix, out)
  for key, value in pairs(user) do
    local path = prefix == '' and tostring(key) or (prefix .. '.' .. tostring(key))
    local default = defaults[key]
    if default == nil and not OPTIONAL[key] then
      table.insert(out, path)
    elseif type(value) == 'table' and type(default) == 'table' and not LEAF_TABLES[key] then
      unknown_keys(value, default, path, out)
    end
  end
  return out
end

local function validate(opts)
  local function check(name, value, types, optional)
    local ok = (optional and value == nil)
    for _, t in ipairs(types) do
      ok = ok or type(value) == t
    end
    if not ok then
      error(('lsp_agent: option %s must be %s, got %s'):format(name, table.concat(types, ' or '),
        type(value)), 0)
    end
  end
  check('cmd', opts.cmd, { 'table', 'function' })
  if type(opts.cmd) == 'table' and #opts.cmd == 0 then
    error('lsp_agent: option cmd must not be empty', 0)
  end
  check('cmd_env', opts.cmd_env, { 'table' }, true)
  check('mcp_servers', opts.mcp_servers, { 'table' }, true)
  check('version_cmd', opts.version_cmd, { 'table' }, true)
  check('model', opts.model, { 'string' }, true)
  check('permission_mode', opts.permission_mode, { 'string' }, true)
  if opts.permission_mode and not vim.tbl_contains(M.MODES, opts.permission_mode) then
    error(('lsp_agent: option permission_mode must be one of %s, got %q'):format(
      table.concat(M.MODES, ', '), opts.permission_mode), 0)
  end
  check('root_markers', opts.root_markers, { 'table' })
  check('root_dir', opts.root_dir, { 'function', 'string' }, true)
  check('filetypes', opts.filetypes, { 'table' }, true)
  check('trust.default', opts.trust.default, { 'string', 'boolean' })
  if type(opts.trust.default) == 'string' and opts.trust.default ~= 'ask' then
    error(('lsp_agent: option trust.default must be "ask", true or false, got %q'):format(
      opts.trust.default), 0)
  end
  if not vim.tbl_contains({ 'right', 'left', 'bottom', 'top' }, opts.chat.position) then
    error(('lsp_agent: option chat.position must be right, left, bottom or top, got %q'):format(
      tostring(opts.chat.position)), 0)
  end
  if not vim.tbl_contains({ 'float', 'split' }, opts.permission.window) then
    error(('lsp_agent: option permission.window must be "float" or "split", got %q'):format(
      tostring(opts.permission.window)), 0)
  end
  check('diagnostics.debounce_ms', opts.diagnostics.debounce_ms, { 'number' })
  if not vim.tbl_contains({ 'error', 'warning', 'info', 'debug' }, opts.server_log_level) then
    error(('lsp_agent: option server_log_level must be error, warning, info or debug, got %q')
      :format(tostring(opts.server_log_level)), 0)
  end
end

--- Validate merged options.
--- @raise string naming the bad option
M.validate = validate

--- Merge `user` over the defaults, validate and make the result current.
--- @param user table|nil
--- @return table merged options
--- @raise string naming the bad option
function M.set(user)
  user = user or {}
  if type(user) ~= 'table' then
    error('lsp_agent: setup() expects a table of options', 0)
  end
  local defaults = M.defaults()
  local unknown = unknown_keys(user, defaults, '', {})
  if #unknown > 0 then
    table.sort(unknown)
    error('lsp_agent: unknown option(s): ' .. table.concat(unknown, ', '), 0)
  end
  -- `false` disables a whole keymap group; deep_extend would keep the default table otherwise.
  local keymaps = user.keymaps
  local opts = vim.tbl_deep_extend('force', defaults, user)
  if keymaps then
    for group, value in pairs(keymaps) do
      if value == false then
        opts.keymaps[group] = {}
      end
    end
  end
  for _, key in ipairs({ 'cmd', 'root_markers', 'filetypes', 'version_cmd' }) do
    if user[key] ~= nil then
      opts[key] = user[key] -- lists replace, never merge index-wise
    end
  end
  if user.trust and user.trust.folders then
    opts.trust.folders = user.trust.folders
  end
  validate(opts)
  current = opts
  return opts
end

--- The current options (defaults until `set()` was called).
--- @return table
function M.get()
  if not current then
    current = M.defaults()
  end
  return current
end

--- Whether `setup()` has run.
--- @return boolean
function M.is_set()
  return current ~= nil
end

return M
