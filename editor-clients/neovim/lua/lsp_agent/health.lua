--- :checkhealth lsp_agent
local compat = require('lsp_agent.compat')
local config = require('lsp_agent.config')

local M = {}

--- The command printing the server version: `version_cmd`, else `cmd` up to "serve" + --version.
--- @return string[]|nil
function M.version_cmd()
  local opts = config.get()
  if opts.version_cmd then
    return opts.version_cmd
  end
  if type(opts.cmd) ~= 'table' then
    return nil
  end
  local out = {}
  for _, arg in ipairs(opts.cmd) do
    if arg == 'serve' then
      break
    end
    table.insert(out, arg)
  end
  table.insert(out, '--version')
  return out
end

function M.check()
  local health = vim.health
  health.start('lsp-agent: editor')
  if vim.fn.has('nvim-0.10') == 1 then
    local v = vim.version()
    health.ok(('Neovim %d.%d.%d'):format(v.major, v.minor, v.patch))
  else
    health.error('Neovim 0.10 or newer is required')
  end
  if config.is_set() then
    health.ok('setup() has been called')
  else
    health.warn('setup() has not been called; defaults are used and no server starts on its own',
      { 'Call require("lsp_agent").setup({}) in your config' })
  end
  local ok, err = pcall(config.validate, config.get())
  if ok then
    health.ok('options are valid')
  else
    health.error(tostring(err))
  end

  health.start('lsp-agent: server')
  local opts = config.get()
  if type(opts.cmd) == 'function' then
    health.info('cmd is a function (custom transport); not checked')
  else
    local exe = vim.fn.exepath(opts.cmd[1])
    if exe == '' then
      health.error(('server command not found: %s'):format(opts.cmd[1]), {
        'Install the server from a clone of lsp-agent: pipx install ./lsp-agent'
          .. ' (or uv tool install ./lsp-agent), or set cmd in setup()',
      })
    else
      health.ok('server command: ' .. exe)
      local version_cmd = M.version_cmd()
      local env = opts.cmd_env and vim.tbl_extend('force', vim.fn.environ(), opts.cmd_env) or nil
      local result = compat.run(version_cmd, 20000, env)
      local version = vim.trim(result.stdout)
      if result.code == 0 and version ~= '' then
        health.ok(('version: %s (%s)'):format(version, table.concat(version_cmd, ' ')))
      else
        health.error(('`%s` failed (exit %s): %s'):format(table.concat(version_cmd, ' '),
          tostring(result.code), vim.trim(result.stderr)))
      end
    end
  end

  health.start('lsp-agent: model')
  local env = vim.tbl_extend('force', vim.fn.environ(), opts.cmd_env or {})
  local model = opts.model or env.ANTHROPIC_MODEL
  if model and model ~= '' then
    health.ok(('model: %s (%s)'):format(model, opts.model and 'setup option' or 'ANTHROPIC_MODEL'))
  else
    health.info('model: the server default (set `model` in setup() or ANTHROPIC_MODEL)')
  end
  if env.ANTHROPIC_BASE_URL and env.ANTHROPIC_BASE_URL ~= '' then
    health.info('endpoint: ' .. env.ANTHROPIC_BASE_URL)
  end
  local offline = type(opts.cmd) == 'table' and vim.tbl_contains(opts.cmd, '--offline')
  if offline then
    health.ok('offline: the server plays its bundled trial model (serve --offline); no API key needed')
  elseif (env.ANTHROPIC_API_KEY or '') ~= '' or (env.ANTHROPIC_AUTH_TOKEN or '') ~= '' then
    health.ok('an API key is set in the environment')
  elseif (env.CLAUDE_CODE_USE_BEDROCK or '') ~= '' or (env.CLAUDE_CODE_USE_VERTEX or '') ~= '' then
    health.ok('a cloud provider is selected (Bedrock or Vertex): its own credentials apply')
  else
    health.warn('ANTHROPIC_API_KEY is not set in the environment of the server', {
      'Export it, or pass it with cmd_env',
      "Or try it without a key: cmd = { 'lsp-agent', 'serve', '--offline' } (a scripted model)",
    })
  end
  health.info('permission mode for new sessions: ' .. (opts.permission_mode or 'server default'))

  health.start('lsp-agent: workspace trust')
  local trust = require('lsp_agent.trust')
  local decisions = trust.read()
  local n = 0
  for _ in pairs(decisions) do
    n = n + 1
  end
  health.info(('%d stored decision(s) in %s (default: %s)'):format(n, trust.file(),
    tostring(opts.trust.default)))

  health.start('lsp-agent: running servers')
  local clients = require('lsp_agent.server').clients()
  if #clients == 0 then
    health.info('no lsp-agent server is running')
  end
  for _, client in ipairs(clients) do
    local info = require('lsp_agent.server').info(client.id) or {}
    local server_info = client.server_info or (info.init_result and info.init_result.serverInfo)
      or {}
    health.ok(('%s %s for %s (trusted: %s, encoding: %s)'):format(server_info.name or '?',
      server_info.version or '?', tostring(client.config.root_dir), tostring(info.trusted),
      tostring(client.offset_encoding)))
  end

  health.start('lsp-agent: MCP servers')
  local mcp = require('lsp_agent.mcp')
  local any = false
  for _, client in ipairs(clients) do
    local entry = mcp.known(client.id)
    for _, server in ipairs(entry and entry.servers or {}) do
      any = true
      local line = mcp.format(server)
      if server.state == 'ready' then
        health.ok(line)
      elseif server.state == 'failed' or server.state == 'invalid' then
        health.error(line, { 'See :AgentMcp and the lsp-agent log (:AgentLog); :AgentMcp reconnect '
          .. server.name })
      elseif server.state == 'needs_approval' then
        health.warn(line, { ':AgentMcp approve ' .. server.name })
      elseif server.state == 'needs_login' then
        health.warn(line, { ':AgentMcp login ' .. server.name .. ' (your browser opens)' })
      elseif server.state == 'disabled' then
        local err = type(server.error) == 'string' and server.error or ''
        health.info(line .. (err:find('~/.claude.json', 1, true)
          and ('  (turn it on: :AgentMcp enable ' .. server.name .. ')') or ''))
      else
        health.info(line)
      end
    end
  end
  if not any then
    health.info('no MCP server reported (none configured, or no server is running)')
  end
end

return M
