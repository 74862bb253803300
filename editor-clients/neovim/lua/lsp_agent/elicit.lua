--- Forms MCP servers ask the user to fill (lspAgent/mcp/elicit, sent because the plugin
--- declares the `mcpElicitation` client capability): asked field by field with vim.ui.select
--- (choices, yes/no) and vim.ui.input (text, numbers), so any vim.ui provider shows them.
--- The server checks the answer and asks again, with `problems`, when it does not fit.
local M = {}

--- Call `start(done)` and wait (yielding the handler's coroutine) until it calls done(value).
local function await(start)
  local co = coroutine.running()
  local value, finished, waiting = nil, false, false
  start(function(v)
    value, finished = v, true
    if waiting then
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end)
  if not finished then
    waiting = true
    coroutine.yield()
  end
  return value
end

local function present(v)
  return v ~= nil and v ~= vim.NIL
end

--- The label of a field: its title (or name), a "*" when required, its description.
function M.label(name, field, required)
  local text = present(field.title) and field.title or name
  if required then
    text = text .. ' *'
  end
  if present(field.description) then
    text = text .. ' (' .. field.description .. ')'
  end
  return text
end

local function ask_field(name, field, required)
  local label = M.label(name, field, required)
  if field.type == 'boolean' then
    local pick = await(function(done)
      vim.ui.select({ 'Yes', 'No' }, { prompt = label }, done)
    end)
    if pick == nil then
      return nil, true
    end
    return pick == 'Yes'
  end
  if type(field.enum) == 'table' then
    local labels = type(field.enumNames) == 'table' and field.enumNames or field.enum
    local index = await(function(done)
      vim.ui.select(labels, { prompt = label }, function(_, i)
        done(i)
      end)
    end)
    if index == nil then
      return nil, true
    end
    return field.enum[index]
  end
  local default = present(field.default) and tostring(field.default) or nil
  local hint = present(field.format) and (' [' .. field.format .. ']') or ''
  local text = await(function(done)
    vim.ui.input({ prompt = label .. hint .. ': ', default = default }, done)
  end)
  if text == nil then
    return nil, true
  end
  if text == '' then
    return nil
  end
  if field.type == 'number' or field.type == 'integer' then
    return tonumber(text) or text -- the server names a value that is not a number
  end
  return text
end

--- Handler of lspAgent/mcp/elicit (runs in the request's coroutine).
function M.handler(_, params, _)
  if type(params) ~= 'table' or type(params.requestedSchema) ~= 'table' then
    return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.InvalidParams,
      'lspAgent/mcp/elicit needs a requestedSchema')
  end
  local co, is_main = coroutine.running()
  if not co or is_main then
    return { action = 'cancel' }
  end
  local heading = ('MCP server %s asks: %s'):format(params.server or '?', params.message or '')
  if type(params.problems) == 'table' and #params.problems > 0 then
    heading = heading .. '\n(' .. table.concat(params.problems, '; ') .. ')'
  end
  local start = await(function(done)
    vim.ui.select({ 'Fill in', 'Decline' }, { prompt = heading }, done)
  end)
  if start == nil then
    return { action = 'cancel' }
  elseif start == 'Decline' then
    return { action = 'decline' }
  end
  local schema = params.requestedSchema
  local required = {}
  for _, name in ipairs(type(schema.required) == 'table' and schema.required or {}) do
    required[name] = true
  end
  local properties = type(schema.properties) == 'table' and schema.properties or {}
  -- The server's order (a decoded JSON object has none: the server sends it as
  -- propertyOrder); any field it leaves out comes after, by name.
  local names, listed = {}, {}
  for _, name in ipairs(type(params.propertyOrder) == 'table' and params.propertyOrder or {}) do
    if properties[name] ~= nil and not listed[name] then
      listed[name] = true
      table.insert(names, name)
    end
  end
  local rest = vim.tbl_filter(function(name)
    return not listed[name]
  end, vim.tbl_keys(properties))
  table.sort(rest)
  vim.list_extend(names, rest)
  local content = vim.empty_dict()
  for _, name in ipairs(names) do
    local value, cancelled = ask_field(name, schema.properties[name], required[name])
    if cancelled then
      return { action = 'cancel' }
    end
    if value ~= nil then
      content[name] = value
    end
  end
  return { action = 'accept', content = content }
end

return M
