-- Applies each case's LSP TextEdits with Neovim's own vim.lsp.util.apply_workspace_edit to a
-- real file opened in a buffer, then saves it. Usage: nvim --clean --headless -l apply_edits.lua CASES.json
-- CASES.json: [{"path": ..., "edits": [TextEdit...]}]; each file is rewritten in place.
local cases = vim.json.decode(table.concat(vim.fn.readfile(arg[1], "b"), "\n"))
for _, case in ipairs(cases) do
  vim.cmd.edit(vim.fn.fnameescape(case.path))
  local uri = vim.uri_from_fname(case.path)
  vim.lsp.util.apply_workspace_edit({ changes = { [uri] = case.edits } }, "utf-16")
  vim.cmd("silent write")
  vim.cmd("bwipeout!")
end
io.stdout:write("applied " .. #cases .. "\n")
