--- Diagnostics bridge: other sources' diagnostics → `lspAgent/diagnostics/didChange`.
---
--- On every DiagnosticChanged of a buffer attached to an lsp-agent client, the buffer's
--- diagnostics from all namespaces except that client's own are sent (debounced per buffer) as
--- `{uri, version, diagnostics}` — version = the buffer version Neovim last sent in didChange
--- (`vim.lsp.util.buf_versions`), positions in the client's negotiated encoding. The agent
--- uses them to check its edits against fresh results of the user's other language servers.
---
--- A completed pull (`textDocument/diagnostic`) of another client for the buffer's current
--- version is sent too, even when it changed nothing: it tells the server "no change for
--- version N", so an agent edit that neither adds nor removes a diagnostic gets its verdict at
--- once instead of "unknown" after the server's wait. And because Neovim (0.10, 0.11) re-pulls
--- after a didChange only when the changed buffer is the current one (it fires `LspNotify`
--- for the current buffer, and the pull handler listens buffer-locally), the pull is requested
--- here for a buffer changed while another window is current: the agent's edits arrive while
--- the chat or the review window has the focus.
local compat = require('lsp_agent.compat')
local config = require('lsp_agent.config')
local log = require('lsp_agent.log')
local methods = require('lsp_agent.protocol').methods
local server = require('lsp_agent.server')

local M = {}

-- bufnr -> uv timer
local timers = {}
-- client id -> bufnr -> last payload (JSON) sent, to skip repeats
local sent = {}
-- bufnr -> flush options of the pending (debounced) send
local pending_opts = {}

--- Character offset of byte column `col` on a line, in `encoding` units.
--- @param line string
--- @param col integer byte offset (0-based)
--- @param encoding 'utf-8'|'utf-16'|'utf-32'
--- @return integer
function M.character(line, col, encoding)
  col = math.max(0, math.min(col, #line))
  if encoding == 'utf-8' then
    return col
  end
  if compat.has_011 then
    return vim.str_utfindex(line, encoding, col, false)
  end
  local utf32, utf16 = vim.str_utfindex(line, col)
  return encoding == 'utf-16' and utf16 or utf32
end

--- Convert `vim.diagnostic` items of a buffer to LSP Diagnostics.
--- @param bufnr integer
--- @param items vim.Diagnostic[]
--- @param encoding string
--- @return table[] lsp.Diagnostic
function M.to_lsp(bufnr, items, encoding)
  local line_count = vim.api.nvim_buf_line_count(bufnr)
  local cache = {}
  local function text(row)
    if row >= line_count then
      return ''
    end
    if not cache[row] then
      cache[row] = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
    end
    return cache[row]
  end
  local function position(row, col)
    row = math.max(0, math.min(row or 0, line_count))
    return { line = row, character = M.character(text(row), col or 0, encoding) }
  end
  local out = {}
  for _, d in ipairs(items) do
    local item = {
      range = {
        start = position(d.lnum, d.col),
        ['end'] = position(d.end_lnum or d.lnum, d.end_col or d.col),
      },
      severity = d.severity,
      message = d.message,
      source = d.source,
      code = d.code,
    }
    table.insert(out, item)
  end
  return out
end

local function own_namespaces(client_id)
  local set = {}
  local get_namespace = vim.lsp.diagnostic.get_namespace
  set[get_namespace(client_id, false)] = true
  set[get_namespace(client_id, true)] = true
  return set
end

--- The payload for one buffer and client (nil when the buffer is gone).
function M.payload(bufnr, client)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    return nil
  end
  local own = own_namespaces(client.id)
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if not own[d.namespace] then
      table.insert(items, d)
    end
  end
  table.sort(items, function(a, b)
    if a.lnum ~= b.lnum then
      return a.lnum < b.lnum
    end
    return (a.col or 0) < (b.col or 0)
  end)
  return {
    uri = vim.uri_from_bufnr(bufnr),
    version = vim.lsp.util.buf_versions[bufnr] or vim.b[bufnr].changedtick,
    diagnostics = M.to_lsp(bufnr, items, client.offset_encoding or 'utf-16'),
  }
end

--- Send the buffer's diagnostics now to every lsp-agent client attached to it.
--- @param bufnr integer
--- @param opts { skip_empty: boolean|nil }|nil skip_empty: send nothing when the buffer has
---   no diagnostics and none were sent before (a buffer just attached: no news yet)
function M.flush(bufnr, opts)
  opts = opts or {}
  for _, client in ipairs(vim.lsp.get_clients({ name = server.NAME, bufnr = bufnr })) do
    if server.is_ready(client) then
      local payload = M.payload(bufnr, client)
      sent[client.id] = sent[client.id] or {}
      if payload and opts.skip_empty and #payload.diagnostics == 0
        and sent[client.id][bufnr] == nil then
        payload = nil
      end
      if payload then
        local key = vim.json.encode(payload)
        if sent[client.id][bufnr] ~= key then
          sent[client.id][bufnr] = key
          compat.notify(client, methods.DIAGNOSTICS_DID_CHANGE, payload)
          log.debug('diagnostics of %s v%s (%d) sent', payload.uri, tostring(payload.version),
            #payload.diagnostics)
        end
      end
    end
  end
end

--- Send after `diagnostics.debounce_ms` of quiet (one timer per buffer). Every change of any
--- namespace counts (an empty list for a new version is news too); `opts` as for `flush()`.
function M.schedule(bufnr, opts)
  if not config.get().diagnostics.enabled then
    return
  end
  -- Skip an empty list only if every change in this debounce window asked to.
  local skip = (opts and opts.skip_empty) == true
  local pending = pending_opts[bufnr]
  if pending == nil then
    pending_opts[bufnr] = { skip_empty = skip }
  else
    pending.skip_empty = pending.skip_empty and skip
  end
  local timer = timers[bufnr]
  if not timer then
    timer = compat.uv.new_timer()
    timers[bufnr] = timer
  end
  timer:stop()
  timer:start(config.get().diagnostics.debounce_ms, 0, vim.schedule_wrap(function()
    if timers[bufnr] == timer then
      timers[bufnr] = nil
      timer:close()
    end
    local flush_opts = pending_opts[bufnr]
    pending_opts[bufnr] = nil
    if vim.api.nvim_buf_is_valid(bufnr) then
      M.flush(bufnr, flush_opts)
    end
  end))
end

--- Forget what was sent to a client (it exited).
function M.forget_client(client_id)
  sent[client_id] = nil
end

-- client id -> request id -> buffer version when another client's pull was sent
local pulls = {}

--- Whether `client` is another language server of a buffer the agent is attached to.
local function other_client_of(client, bufnr)
  return client ~= nil and client.name ~= server.NAME and bufnr ~= nil
    and vim.api.nvim_buf_is_loaded(bufnr)
    and #vim.lsp.get_clients({ name = server.NAME, bufnr = bufnr }) > 0
end

--- `LspNotify`: after another client's didChange of a buffer that is not the current one,
--- ask that client for the buffer's diagnostics (what Neovim does only for the current buffer).
function M.on_notify(data)
  if data.method ~= 'textDocument/didChange' or not config.get().diagnostics.enabled then
    return
  end
  local uri = data.params and data.params.textDocument and data.params.textDocument.uri
  if type(uri) ~= 'string' then
    return
  end
  local bufnr = vim.fn.bufnr(vim.uri_to_fname(uri))
  if bufnr < 1 or bufnr == vim.api.nvim_get_current_buf() then
    return -- no such buffer, or Neovim pulls itself
  end
  local client = vim.lsp.get_client_by_id(data.client_id)
  if not other_client_of(client, bufnr)
    or not compat.supports_method(client, 'textDocument/diagnostic', bufnr) then
    return
  end
  compat.request(client, 'textDocument/diagnostic', { textDocument = { uri = uri } }, nil, bufnr)
  log.debug('asked %s for the diagnostics of %s', client.name, uri)
end

--- `LspRequest`: another client's pull of a buffer's diagnostics completed; when the buffer
--- is still at the version the pull was sent for, report that version (changed or not).
function M.on_request(bufnr, data)
  local request = data.request or {}
  if request.method ~= 'textDocument/diagnostic' then
    return
  end
  local client = vim.lsp.get_client_by_id(data.client_id)
  if not other_client_of(client, bufnr) then
    return
  end
  local by_id = pulls[data.client_id] or {}
  pulls[data.client_id] = by_id
  if request.type == 'pending' then
    by_id[data.request_id] = vim.lsp.util.buf_versions[bufnr]
  elseif request.type == 'complete' or request.type == 'cancel' then
    local version = by_id[data.request_id]
    by_id[data.request_id] = nil
    if request.type == 'complete' and version ~= nil
      and version == vim.lsp.util.buf_versions[bufnr] then
      M.schedule(bufnr)
    end
  end
end

--- Install the autocmds.
function M.setup(group)
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    group = group,
    callback = function(args)
      if #vim.lsp.get_clients({ name = server.NAME, bufnr = args.buf }) > 0 then
        M.schedule(args.buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == server.NAME then
        -- Diagnostics that existed before the agent attached (nothing when there are none).
        M.schedule(args.buf, { skip_empty = true })
      end
    end,
  })
  vim.api.nvim_create_autocmd('LspNotify', {
    group = group,
    callback = function(args)
      M.on_notify(args.data or {})
    end,
  })
  vim.api.nvim_create_autocmd('LspRequest', {
    group = group,
    callback = function(args)
      M.on_request(args.buf, args.data or {})
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    group = group,
    callback = function(args)
      for _, by_buf in pairs(sent) do
        by_buf[args.buf] = nil
      end
    end,
  })
end

return M
