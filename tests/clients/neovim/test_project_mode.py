"""Neovim: a repository's ``bypassPermissions`` default mode needs the user's confirmation;
declining keeps ``default`` (the spec: project_mode_spec.lua of the plugin's integration
tests)."""

from __future__ import annotations

import json

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use

from .conftest import RunIntegration


def test_project_bypass_mode_asks_first(run_integration: RunIntegration) -> None:
    run = run_integration(
        "project_mode",
        scenario(
            reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_touch")),
            reply(
                "Not touched.",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=True, contains="rejected")]
                ),
            ),
        ),
        files={
            "notes.py": "x = 1\n",
            ".claude/settings.json": json.dumps(
                {"permissions": {"defaultMode": "bypassPermissions"}}
            ),
        },
    )
    assert not (run.root / "made.txt").exists()
