-- The help file builds tags without errors and documents every command and option group.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../harness.lua')

local doc = H.plugin_root .. '/doc/lsp_agent.txt'

H.test(':helptags accepts the help file (no duplicate tags)', function()
  local dir = vim.fn.tempname() .. '/doc'
  vim.fn.mkdir(dir, 'p')
  vim.fn.writefile(vim.fn.readfile(doc), dir .. '/lsp_agent.txt')
  vim.cmd('helptags ' .. vim.fn.fnameescape(dir))
  local tags = {}
  for _, line in ipairs(vim.fn.readfile(dir .. '/tags')) do
    tags[line:match('^[^\t]+')] = true
  end
  for _, tag in ipairs({ 'lsp_agent', 'lsp-agent', 'lsp_agent-options', 'lsp_agent-review',
    'lsp_agent-trust', 'lsp_agent.status()' }) do
    H.ok(tags[tag], 'tag ' .. tag)
  end
  -- Every user command the plugin defines is documented.
  vim.cmd('runtime! plugin/lsp_agent.lua')
  for name in pairs(vim.api.nvim_get_commands({})) do
    if name:match('^Agent') then
      H.ok(tags[':' .. name], 'help for :' .. name)
    end
  end
end)

H.test('every top-level option is documented', function()
  local text = table.concat(vim.fn.readfile(doc), '\n')
  local defaults = require('lsp_agent.config').defaults()
  for _, key in ipairs(vim.tbl_keys(defaults)) do
    H.ok(text:find('\n      ' .. key .. ' = ', 1, true), 'option ' .. key)
  end
  for _, key in ipairs({ 'cmd_env', 'version_cmd', 'model', 'permission_mode', 'root_dir',
    'filetypes' }) do
    H.ok(text:find('\n      ' .. key .. ' = ', 1, true), 'option ' .. key)
  end
end)

H.test('every default key is documented', function()
  local text = table.concat(vim.fn.readfile(doc), '\n')
  local keymaps = require('lsp_agent.config').defaults().keymaps
  for group, keys in pairs(keymaps) do
    for name, value in pairs(keys) do
      for _, lhs in ipairs(type(value) == 'table' and value or { value }) do
        local pattern = '\n  ' .. group .. '%s+' .. vim.pesc(name) .. '[^\n]-' .. vim.pesc(lhs)
        H.ok(text:find(pattern), ('key %s.%s (%s)'):format(group, name, lhs))
      end
    end
  end
end)

H.finish()
