--- Buffers and disk: saveDocuments, didChangeFiles, and a version-checked workspace/applyEdit.
local log = require('lsp_agent.log')

local M = {}

--- The loaded buffer showing `uri`, or nil (never creates a buffer).
--- @param uri string
--- @return integer|nil
function M.loaded_buf(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok then
    return nil
  end
  local bufnr = vim.fn.bufnr(fname)
  if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
    return bufnr
  end
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.uri_from_bufnr(b) == uri then
      return b
    end
  end
  return nil
end

--- Handler of `lspAgent/workspace/saveDocuments {uris}` → `{saved}`.
--- A buffer counts as saved when it has no unsaved changes afterwards; uris without a loaded
--- buffer are not in `saved` (the server writes those itself).
---@param params lsp_agent.protocol.SaveDocumentsParams
function M.save_documents(_, params)
  local saved = {}
  for _, uri in ipairs(type(params) == 'table' and params.uris or {}) do
    local bufnr = M.loaded_buf(uri)
    if bufnr then
      if vim.bo[bufnr].modified then
        local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
          vim.cmd('silent keepalt write')
        end)
        if not ok then
          log.warn('could not save %s: %s', uri, tostring(err))
        end
      end
      if not vim.bo[bufnr].modified then
        table.insert(saved, uri)
      end
    end
  end
  log.info('saveDocuments: %d of %d saved', #saved, #(params and params.uris or {}))
  return { saved = saved }
end

--- Handler of `lspAgent/workspace/didChangeFiles {uris}`: files changed on disk behind the
--- editor (a Bash command). Buffers without unsaved changes are reloaded; buffers with unsaved
--- changes are left alone and the user is told.
---@param params lsp_agent.protocol.DidChangeFilesParams
function M.did_change_files(_, params)
  local conflicts = {}
  for _, uri in ipairs(type(params) == 'table' and params.uris or {}) do
    local bufnr = M.loaded_buf(uri)
    if bufnr then
      if vim.bo[bufnr].modified then
        table.insert(conflicts, vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':~:.'))
      else
        -- Buffer-local 'autoread' makes :checktime reload without asking.
        local autoread = vim.bo[bufnr].autoread
        vim.bo[bufnr].autoread = true
        pcall(vim.cmd, 'checktime ' .. bufnr)
        vim.bo[bufnr].autoread = autoread
      end
    end
  end
  if #conflicts > 0 then
    vim.notify('lsp-agent: changed on disk but with unsaved changes here (not reloaded): '
      .. table.concat(conflicts, ', '), vim.log.levels.WARN)
  end
end

local function text_document_edits(edit)
  local out = {}
  for _, change in ipairs(type(edit) == 'table' and edit.documentChanges or {}) do
    if type(change) == 'table' and change.kind == nil and type(change.textDocument) == 'table' then
      table.insert(out, change)
    end
  end
  return out
end

--- Handler of `workspace/applyEdit`: Neovim's built-in handler, plus version checks.
---
--- The built-in handler skips a versioned edit for a buffer that moved on but still answers
--- `applied = true`. Here a versioned edit for a loaded buffer whose version differs is refused
--- (`applied = false` with the reason) before anything is applied, and after applying, each
--- edited buffer must have a new version — otherwise the answer is `applied = false`.
function M.apply_edit(err, params, ctx)
  if type(params) ~= 'table' or type(params.edit) ~= 'table' then
    return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.InvalidParams,
      'workspace/applyEdit needs an edit')
  end
  local versions = vim.lsp.util.buf_versions
  local checked = {}
  for _, change in ipairs(text_document_edits(params.edit)) do
    local version = change.textDocument.version
    local bufnr = M.loaded_buf(change.textDocument.uri)
    if bufnr and type(version) == 'number' then
      local current = versions[bufnr]
      if current ~= version then
        local reason = ('%s is at version %s, the edit was made for version %d'):format(
          change.textDocument.uri, tostring(current), version)
        log.warn('applyEdit refused: %s', reason)
        return { applied = false, failureReason = reason }
      end
      if #(change.edits or {}) > 0 then
        checked[bufnr] = version
      end
    end
  end
  local result = vim.lsp.handlers['workspace/applyEdit'](err, params, ctx)
  if result and result.applied then
    for bufnr, before in pairs(checked) do
      if versions[bufnr] == before then
        result = {
          applied = false,
          failureReason = ('%s was not changed by the edit'):format(vim.uri_from_bufnr(bufnr)),
        }
        break
      end
    end
  end
  log.info('applyEdit %s: applied=%s %s', params.label or '', tostring(result and result.applied),
    result and result.failureReason or '')
  return result
end

return M
