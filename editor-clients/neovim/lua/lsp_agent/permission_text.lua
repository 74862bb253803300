--- The words of a permission question: who asked (the rule and the settings it came from),
--- and the scopes an "always" answer can be kept in (session, project, user).
local M = {}

local ALWAYS = { allow_always = true, reject_always = true }

--- The scopes an "always" answer can be kept in, in protocol order.
M.SCOPES = { 'session', 'project', 'user' }

--- What each scope means, for the prompt.
M.SCOPE_DETAIL = {
  session = 'kept for this session only; nothing is saved',
  project = 'saved to .claude/settings.local.json in this project',
  user = 'saved to ~/.claude/settings.json, for all your projects',
}

--- Readable names of the decision sources (docs/protocol.md, requestPermission).
local SOURCE_NAMES = {
  managed = 'managed settings',
  cli = 'command-line flags',
  flagSettings = 'the --settings file',
  lsp = 'editor settings',
  ['local'] = 'local project settings',
  project = 'project settings',
  user = 'user settings',
  session = 'an earlier answer in this session',
  mode = 'the permission mode',
  sandbox = 'the sandbox',
  hook = 'a hook',
  default = 'the default policy',
}

--- `value` trimmed, or nil when it is not a non-blank string.
function M.nonempty(value)
  return type(value) == 'string' and vim.trim(value) ~= '' and vim.trim(value) or nil
end

--- Who asked, in words: "Asked by rule Bash(git push:*) from project settings", "Asked by
--- the sandbox"; nil when the request names neither a rule nor a source.
--- @param params table the request params (`rule`, `source`)
--- @return string|nil
function M.describe_origin(params)
  local rule, source = M.nonempty(params.rule), M.nonempty(params.source)
  local from = source and (SOURCE_NAMES[source] or source)
  if rule then
    return 'Asked by rule ' .. rule .. (from and (' from ' .. from) or '')
  end
  return from and ('Asked by ' .. from) or nil
end

--- The offered scopes in the server's order (unknown and repeated ones dropped); the session
--- when the server offers none (an older server keeps "always" answers for the session).
function M.offered_scopes(scopes)
  local out, seen = {}, {}
  for _, scope in ipairs(type(scopes) == 'table' and scopes or {}) do
    if vim.tbl_contains(M.SCOPES, scope) and not seen[scope] then
      seen[scope] = true
      table.insert(out, scope)
    end
  end
  return #out > 0 and out or { 'session' }
end

--- Whether an option kind is an "always" answer.
function M.is_always(kind)
  return ALWAYS[kind] == true
end

return M
