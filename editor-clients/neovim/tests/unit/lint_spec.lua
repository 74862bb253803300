-- Static checks of the plugin's Lua with LuaJIT's bytecode listing: every file compiles,
-- assigns no global, and reads only known globals (a misspelt local shows up as a global read).
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../harness.lua')
local bc = require('jit.bc')

local ALLOWED_READS = {}
for _, name in ipairs({ 'vim', 'ipairs', 'pairs', 'pcall', 'xpcall', 'error', 'assert', 'type',
  'tostring', 'tonumber', 'table', 'string', 'math', 'os', 'io', 'select', 'setmetatable',
  'getmetatable', 'require', 'coroutine', 'debug', 'next', 'rawget', 'rawset', 'unpack' }) do
  ALLOWED_READS[name] = true
end

local function globals(path)
  local fn, err = loadfile(path)
  if not fn then
    return nil, err
  end
  local out = {}
  bc.dump(fn, {
    write = function(_, s)
      table.insert(out, s)
    end,
    flush = function() end,
  }, true)
  local reads, writes = {}, {}
  for op, name in table.concat(out):gmatch('(G[GS]ET)%s+%S+%s+%S+%s*;%s*"([^"]+)"') do
    if op == 'GSET' then
      writes[name] = true
    else
      reads[name] = true
    end
  end
  return reads, writes
end

local files = vim.fs.find(function(name)
  return name:match('%.lua$') ~= nil
end, { path = H.plugin_root, type = 'file', limit = math.huge })
files = vim.tbl_filter(function(path)
  return path:find('/lua/', 1, true) or path:find('/plugin/', 1, true)
end, files)

H.test('the check sees global writes and misspelt locals', function()
  local path = vim.fn.tempname() .. '.lua'
  vim.fn.writefile({ 'local value = 1', 'counter = vlaue', 'return value' }, path)
  local reads, writes = globals(path)
  H.eq(writes, { counter = true })
  H.eq(reads, { vlaue = true })
end)

H.test('there are plugin files to check', function()
  H.ok(#files >= 15, 'found ' .. #files)
end)

for _, path in ipairs(files) do
  local rel = path:sub(#H.plugin_root + 2)
  H.test(rel .. ': compiles, no global writes, only known global reads', function()
    local reads, writes = globals(path)
    H.ok(reads, tostring(writes))
    H.eq(vim.tbl_keys(writes), {}, 'global writes')
    local unknown = {}
    for name in pairs(reads) do
      if not ALLOWED_READS[name] then
        table.insert(unknown, name)
      end
    end
    table.sort(unknown)
    H.eq(unknown, {}, 'unknown globals read')
  end)
end

H.finish()
