--- Shared set-up of the integration specs: the real server, started by the plugin.
---
--- The pytest wrapper (tests/clients/neovim) prepares a project directory and the scripted
--- model, then runs each spec with `nvim --clean --headless -l`, passing:
---   LSP_AGENT_TEST_ROOT  the project directory (has a .git marker)
---   LSP_AGENT_TEST_CMD   JSON list: the server command
---   ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY  the scripted model
---   XDG_*_HOME           private directories (trust file, logs)
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../harness.lua')

local E = { H = H }

E.WAIT = 20000 -- ms; bounds a hung run, never a timing assertion

E.root = assert(vim.env.LSP_AGENT_TEST_ROOT, 'LSP_AGENT_TEST_ROOT is not set')
E.cmd = vim.json.decode((assert(vim.env.LSP_AGENT_TEST_CMD, 'LSP_AGENT_TEST_CMD is not set')))

vim.lsp.set_log_level(vim.env.LSP_AGENT_TEST_LSP_LOG or 'warn')

--- Load the plugin as a user would (plugin/ file + setup()).
function E.setup(opts)
  vim.cmd('runtime! plugin/lsp_agent.lua')
  local merged = vim.tbl_deep_extend('force', {
    cmd = E.cmd,
    trust = { default = true },
    diagnostics = { debounce_ms = 50 },
  }, opts or {})
  require('lsp_agent').setup(merged)
  return require('lsp_agent')
end

--- Path of a project file.
function E.path(rel)
  return E.root .. '/' .. rel
end

--- Edit a project file and wait until the server is attached and initialized.
--- @return integer bufnr, vim.lsp.Client client
function E.open(rel)
  vim.cmd.edit(vim.fn.fnameescape(E.path(rel)))
  local bufnr = vim.api.nvim_get_current_buf()
  local client
  H.wait(E.WAIT, function()
    client = vim.lsp.get_clients({ name = 'lsp_agent', bufnr = bufnr })[1]
    return client ~= nil and client.initialized
  end, 'the lsp-agent client to attach to ' .. rel)
  return bufnr, client
end

--- The current session of a client, waiting until it exists.
function E.session(client)
  local session = require('lsp_agent.session')
  local s
  H.wait(E.WAIT, function()
    s = session.current(client.id)
    return s ~= nil
  end, 'a session')
  return s
end

--- Wait until the session's turn has ended.
function E.wait_idle(s)
  H.wait(E.WAIT, function()
    return not s.running and s.last_stop ~= nil
  end, 'the turn to end')
end

--- Wait for a pending permission request and return it.
function E.permission()
  local permission = require('lsp_agent.permission')
  local p
  H.wait(E.WAIT, function()
    p = permission.list()[1]
    return p ~= nil
  end, 'a permission request')
  return p
end

--- Lines of a buffer.
function E.lines(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end

--- Text of a file on disk.
--- Open :AgentMcp, wait for its list window and go back to the previous window; returns a
--- the list's buffer and a function giving its current text (it keeps following the server).
function E.open_mcp_view()
  vim.cmd('AgentMcp')
  H.wait(E.WAIT, function()
    return vim.bo.filetype == 'lsp_agent_mcp'
  end, 'the :AgentMcp window')
  local view = vim.api.nvim_get_current_buf()
  vim.cmd('wincmd p')
  return view, function()
    return table.concat(vim.api.nvim_buf_get_lines(view, 0, -1, false), '\n')
  end
end

function E.read(rel)
  local fd = assert(io.open(E.path(rel), 'rb'))
  local text = fd:read('*a')
  fd:close()
  return text
end

--- The chat transcript lines of a client.
function E.transcript(client)
  local chat = require('lsp_agent.chat').get(client.id)
  return chat and vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false) or {}
end

--- Whether some transcript line contains `fragment` (plain text).
function E.transcript_has(client, fragment)
  for _, line in ipairs(E.transcript(client)) do
    if line:find(fragment, 1, true) then
      return true
    end
  end
  return false
end

--- Stop the servers cleanly (shutdown + exit) before the spec ends.
function E.stop_all()
  for _, client in ipairs(vim.lsp.get_clients({ name = 'lsp_agent' })) do
    if vim.fn.has('nvim-0.11') == 1 then
      client:stop()
    else
      client.stop()
    end
  end
  vim.wait(5000, function()
    return #vim.lsp.get_clients({ name = 'lsp_agent' }) == 0
  end, 20)
end

--- Stop servers, print the summary, exit. With LSP_AGENT_TEST_DUMP=1 the chat transcripts and
--- the plugin log are printed first (debugging aid).
function E.finish()
  if vim.env.LSP_AGENT_TEST_DUMP == '1' then
    for _, client in ipairs(vim.lsp.get_clients({ name = 'lsp_agent' })) do
      io.stdout:write('# --- transcript of client ' .. client.id .. ' ---\n')
      for _, line in ipairs(E.transcript(client)) do
        io.stdout:write('#   ' .. line .. '\n')
      end
    end
    for _, line in ipairs(require('lsp_agent.log').entries()) do
      io.stdout:write('# log: ' .. line .. '\n')
    end
  end
  E.stop_all()
  H.finish()
end

return E
