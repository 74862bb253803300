"""``run -p`` cannot ask anybody: a server's URL-mode elicitation (MCP 2025-11-25) is declined,
and stderr says which server asked to open a page on which host, and why it was declined."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use
from tests.e2e_cli.conftest import run_cli

SERVER = Path(__file__).resolve().parents[1] / "mcp_servers" / "url_elicit_server.py"


def test_run_p_declines_a_url_request_with_a_line_saying_what_was_asked(
    project: Path, tmp_path: Path
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps({"mcpServers": {"pages": {"command": sys.executable, "args": [str(SERVER)]}}})
    )
    script = scenario(
        reply(tool_use("mcp__pages__connect_account", {}, id="toolu_u1")),
        reply(
            "declined",
            expect=expecting(
                tool_results=[ToolResultExpect(is_error=False, contains="answer: decline")]
            ),
        ),
        name="url",
    )
    result = run_cli(
        [
            "run",
            "-p",
            "connect",
            "--mcp-config",
            str(config),
            "--allowedTools",
            "mcp__pages",
        ],
        scenario=script,
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    assert (
        "lsp-agent: MCP server pages asked to open a page on accounts.example.com "
        "('Connect your account to continue'); declined: nobody can be asked here"
    ) in result.proc.stderr
