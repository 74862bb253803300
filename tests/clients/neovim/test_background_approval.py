"""Neovim answers a background run's approval question: ``lsp-agent run -p --bg`` started in
the project (a real daemon, its own scripted model) asks about a Bash call; the plugin shows
the server's question as sent (naming the run and its folder, no ": " appended) with
vim.ui.select, and "Allow once" lets that call run. Spec:
editor-clients/neovim/tests/integration/bg_approval_spec.lua."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import reply, scenario, tool_use

from .bg import CLI_TIMEOUT_S, background_run
from .conftest import RunIntegration

pytestmark = pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED"), reason="the daemon needs Linux peer credentials"
)


def test_neovim_allows_a_background_runs_call(
    run_integration: RunIntegration, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    steps = scenario(
        reply(tool_use("Bash", {"command": "touch allowed.txt"}, id="toolu_allowed")),
        reply("One file made."),
    )
    approval_wait = {"LSP_AGENT_BG_APPROVAL_TIMEOUT_S": "120"}
    with background_run(tmp_path, root, steps, "make a file", approval_wait) as run:
        run_integration(
            "bg_approval",
            scenario(),
            files={"notes.txt": "a\n"},
            env={**run.editor_env, "LSP_AGENT_TEST_BG_RUN": run.run_id},
        )
        deadline = time.monotonic() + CLI_TIMEOUT_S
        record: dict[str, object] = {"state": "running"}
        while record["state"] == "running" and time.monotonic() < deadline:
            time.sleep(0.2)
            (record,) = json.loads(run.cli("ps", "--json").stdout)
        assert record["state"] == "done", record
    assert (root / "allowed.txt").exists()
