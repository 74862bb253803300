"""Neovim answers a background run's approval question: ``lsp-agent run -p --bg`` started in
the project (a real daemon, its own scripted model) asks about a Bash call; the plugin shows
the server's question as sent (naming the run and its folder, no ": " appended) with
vim.ui.select, and "Allow once" lets that call run. Spec:
editor-clients/neovim/tests/integration/bg_approval_spec.lua."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import reply, scenario, tool_use
from lsp_agent.testing.scripted import scripted_env
from lsp_agent.testing.thread import ScriptedServerThread

from .conftest import RunIntegration

pytestmark = pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED"), reason="the daemon needs Linux peer credentials"
)

CLI_TIMEOUT_S = 60


def test_neovim_allows_a_background_runs_call(
    run_integration: RunIntegration, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700)
    shared = {
        "XDG_RUNTIME_DIR": str(runtime),
        "LSP_AGENT_DATA_DIR": str(tmp_path / "xdg" / "data" / "lsp-agent"),
    }
    steps = scenario(
        reply(tool_use("Bash", {"command": "touch allowed.txt"}, id="toolu_allowed")),
        reply("One file made."),
    )
    with ScriptedServerThread(scenario=steps, variables={}) as model:
        env = {
            **scripted_env(model.base_url),
            **shared,
            "LSP_AGENT_MAX_RETRIES": "0",
            "LSP_AGENT_BG_APPROVAL_TIMEOUT_S": "120",
        }

        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "lsp_agent", *args],
                env=env,
                cwd=root,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=CLI_TIMEOUT_S,
                check=False,
            )

        started = cli("run", "-p", "--bg", "make a file")
        assert started.returncode == 0, started.stderr
        run_id = started.stdout.strip().split("\t")[0]
        try:
            run_integration(
                "bg_approval",
                scenario(),
                files={"notes.txt": "a\n"},
                env={**shared, "LSP_AGENT_TEST_BG_RUN": run_id},
            )
            deadline = time.monotonic() + CLI_TIMEOUT_S
            record: dict[str, object] = {"state": "running"}
            while record["state"] == "running" and time.monotonic() < deadline:
                time.sleep(0.2)
                (record,) = json.loads(cli("ps", "--json").stdout)
            assert record["state"] == "done", record
        finally:
            cli("kill", run_id)
            cli("daemon", "stop")
    assert (root / "allowed.txt").exists()
