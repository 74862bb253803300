"""Neovim shows a background run: ``lsp-agent run -p --bg`` started in the project (a real
daemon, its own scripted model that keeps the run going) is listed by ``:AgentSessions`` with
the run's id. Spec: editor-clients/neovim/tests/integration/bg_runs_spec.lua."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import reply, scenario

from .bg import background_run
from .conftest import RunIntegration

pytestmark = pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED"), reason="the daemon needs Linux peer credentials"
)


def test_sessions_mark_a_background_run(run_integration: RunIntegration, tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    stalled = scenario(reply("Working on it...", stall_after_events=2), name="stalled")
    with background_run(tmp_path, root, stalled, "refactor the parser") as run:
        run_integration(
            "bg_runs",
            scenario(),
            files={"notes.txt": "a\n"},
            env={
                **run.editor_env,
                "LSP_AGENT_TEST_BG_RUN": run.run_id,
                "LSP_AGENT_TEST_BG_SESSION": run.session_id,
            },
        )
