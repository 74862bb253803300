"""Neovim shows a background run: ``lsp-agent run -p --bg`` started in the project (a real
daemon, its own scripted model that keeps the run going) is listed by ``:AgentSessions`` with
the run's id. Spec: editor-clients/neovim/tests/integration/bg_runs_spec.lua."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import reply, scenario
from lsp_agent.testing.scripted import scripted_env
from lsp_agent.testing.thread import ScriptedServerThread

from .conftest import RunIntegration

pytestmark = pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED"), reason="the daemon needs Linux peer credentials"
)

CLI_TIMEOUT_S = 60


def test_sessions_mark_a_background_run(run_integration: RunIntegration, tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700)
    shared = {
        "XDG_RUNTIME_DIR": str(runtime),
        "LSP_AGENT_DATA_DIR": str(tmp_path / "xdg" / "data" / "lsp-agent"),
    }
    stalled = scenario(reply("Working on it...", stall_after_events=2), name="stalled")
    with ScriptedServerThread(scenario=stalled, variables={}) as model:
        env = {**scripted_env(model.base_url), **shared, "LSP_AGENT_MAX_RETRIES": "0"}

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

        started = cli("run", "-p", "--bg", "refactor the parser")
        assert started.returncode == 0, started.stderr
        run_id, session_id = started.stdout.strip().split("\t")
        try:
            run_integration(
                "bg_runs",
                scenario(),
                files={"notes.txt": "a\n"},
                env={
                    **shared,
                    "LSP_AGENT_TEST_BG_RUN": run_id,
                    "LSP_AGENT_TEST_BG_SESSION": session_id,
                },
            )
        finally:
            cli("kill", run_id)
            cli("daemon", "stop")
