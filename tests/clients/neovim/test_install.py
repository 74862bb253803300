"""Installing the plugin as a plain Neovim package (``pack/*/start``) with a user init.lua."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from .conftest import PLUGIN, base_env

INIT_LUA = """
require('lsp_agent').setup({ keymaps = { global = { chat = '<leader>ac' } } })
-- Start packages join 'runtimepath' after init.lua: check once startup is done.
vim.api.nvim_create_autocmd('VimEnter', {
  callback = function()
    local ok, err = pcall(function()
      vim.cmd('silent helptags ALL')
      vim.cmd('help lsp_agent')
    end)
    local result = {
      error = ok and vim.NIL or tostring(err),
      commands = vim.tbl_filter(function(name)
        return name:match('^Agent') ~= nil
      end, vim.tbl_keys(vim.api.nvim_get_commands({}))),
      help = vim.fn.expand('%:t'),
      health = #vim.api.nvim_get_runtime_file('lua/lsp_agent/health.lua', false),
      mapping = vim.fn.maparg('<leader>ac', 'n'),
      status = require('lsp_agent').status(),
    }
    table.sort(result.commands)
    vim.fn.writefile({ vim.json.encode(result) }, vim.env.LSP_AGENT_TEST_OUT)
    vim.cmd('qall!')
  end,
})
"""


def test_plain_package_install(nvim: Path, tmp_path: Path) -> None:
    env = base_env(tmp_path)
    # A copy, not a link: :helptags writes doc/tags into the package.
    package = Path(env["XDG_DATA_HOME"]) / "nvim/site/pack/lsp-agent/start/lsp-agent.nvim"
    shutil.copytree(PLUGIN, package, ignore=shutil.ignore_patterns("tests"))
    config = Path(env["XDG_CONFIG_HOME"]) / "nvim"
    config.mkdir(parents=True)
    (config / "init.lua").write_text(INIT_LUA)
    out = tmp_path / "result.json"
    env["LSP_AGENT_TEST_OUT"] = str(out)
    proc = subprocess.run(
        [str(nvim), "--headless"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 0 and out.exists(), proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    assert result == {
        "error": None,
        "commands": [
            "AgentAsk",
            "AgentCancel",
            "AgentChat",
            "AgentClose",
            "AgentFix",
            "AgentLog",
            "AgentMcp",
            "AgentMode",
            "AgentResume",
            "AgentReview",
            "AgentRewind",
            "AgentSessions",
            "AgentTrust",
            "AgentUntrust",
        ],
        "help": "lsp_agent.txt",
        "health": 1,
        "mapping": "<Cmd>AgentChat<CR>",
        "status": "",
    }
