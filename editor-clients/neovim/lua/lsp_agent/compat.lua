--- The few places where Neovim 0.10 and 0.11+ differ.
---
--- 0.11 turned client functions into methods (`client:request`) and deprecated the field form;
--- 0.10 only has the field form. `vim.diff` became `vim.text.diff`.
local M = {}

M.has_011 = vim.fn.has('nvim-0.11') == 1

M.uv = vim.uv or vim.loop

--- Line diff (`vim.text.diff` on 0.11+, `vim.diff` before).
M.diff = (vim.text and vim.text.diff) or vim.diff

--- Send a request; returns `ok, request_id` like `client:request`.
--- @param client vim.lsp.Client
--- @param method string
--- @param params table|nil
--- @param handler fun(err: table|nil, result: any, ctx: table)
--- @param bufnr integer|nil
function M.request(client, method, params, handler, bufnr)
  if M.has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- Send a notification; returns whether it was sent.
function M.notify(client, method, params)
  if M.has_011 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- Send `$/cancelRequest` for one of our requests.
function M.cancel_request(client, id)
  if M.has_011 then
    return client:cancel_request(id)
  end
  return client.cancel_request(id)
end

function M.is_stopped(client)
  if M.has_011 then
    return client:is_stopped()
  end
  return client.is_stopped()
end

function M.supports_method(client, method, bufnr)
  if M.has_011 then
    return client:supports_method(method, bufnr)
  end
  return client.supports_method(method, { bufnr = bufnr })
end

--- Start (or reuse) a client without attaching a buffer. Returns the client id or nil.
--- @param config vim.lsp.ClientConfig
function M.start_detached(config)
  for _, client in ipairs(vim.lsp.get_clients({ name = config.name })) do
    if client.config.root_dir == config.root_dir and not M.is_stopped(client) then
      return client.id
    end
  end
  if M.has_011 then
    return vim.lsp.start(config, { attach = false, silent = true })
  end
  return vim.lsp.start_client(config)
end

--- Run a command with a timeout; returns `{code, stdout, stderr}` (code -1 when it couldn't run).
--- @param cmd string[]
--- @param timeout_ms integer
function M.run(cmd, timeout_ms, env)
  local ok, obj = pcall(vim.system, cmd, { text = true, env = env })
  if not ok then
    return { code = -1, stdout = '', stderr = tostring(obj) }
  end
  local result = obj:wait(timeout_ms)
  if result.signal ~= 0 and result.code == 0 then
    return { code = -1, stdout = result.stdout or '', stderr = 'timed out' }
  end
  return { code = result.code, stdout = result.stdout or '', stderr = result.stderr or '' }
end

return M
