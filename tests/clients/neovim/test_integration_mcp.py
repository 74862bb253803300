"""The plugin against the real server in headless Neovim (see test_integration.py): MCP servers:
their tools in a turn, OAuth login, servers from setup(), turning one off and on, and a server's
elicitation form.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lsp_agent.testing.scenario import (
    ToolResultExpect,
    expecting,
    reply,
    scenario,
    tool_use,
)

from .conftest import RunIntegration


def test_mcp(run_integration: RunIntegration, tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[2] / "mcp_servers" / "fixture_server.py"
    mcp_json = {"mcpServers": {"fx": {"command": sys.executable, "args": [str(fixture)]}}}
    home = tmp_path / "home"
    home.mkdir()
    run = run_integration(
        "mcp",
        scenario(
            reply(
                tool_use("mcp__fx__echo", {"text": "from neovim"}, id="toolu_mcp"),
                expect=expecting(tools_include=["mcp__fx__echo"]),
            ),
            reply(
                "Echoed.",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=False, contains="echo: from neovim")]
                ),
            ),
        ),
        files={"main.py": "print('hi')\n", ".mcp.json": json.dumps(mcp_json)},
        env={"HOME": str(home)},
    )
    # The approval was stored in the user's state folder (XDG_STATE_HOME), outside the project.
    assert (tmp_path / "xdg" / "state" / "lsp-agent" / "mcp-approvals.json").is_file()
    assert not (home / ".lsp-agent").exists()
    assert not (run.root / ".lsp-agent").exists()


def test_mcp_oauth_login(run_integration: RunIntegration, tmp_path: Path) -> None:
    from tests.e2e_mcp.conftest import free_port, stop
    from tests.e2e_mcp.test_oauth import start_oauth

    port = free_port()
    proc = start_oauth(port)
    try:
        run = run_integration(
            "mcp_oauth",
            scenario(
                reply(
                    tool_use("mcp__secure__whoami", {}, id="toolu_who"),
                    expect=expecting(tools_include=["mcp__secure__whoami"]),
                ),
                reply(
                    "You are authorised.",
                    expect=expecting(
                        tool_results=[ToolResultExpect(is_error=False, contains="authorised")]
                    ),
                ),
            ),
            files={"main.py": "print('hi')\n"},
            env={
                "LSP_AGENT_TEST_OAUTH_URL": f"http://127.0.0.1:{port}/mcp",
                "LSP_AGENT_TEST_PYTHON": sys.executable,
            },
        )
    finally:
        stop(proc)
    # The token was stored in the user's state folder, mode 0600, and is gone after logout.
    path = tmp_path / "xdg" / "state" / "lsp-agent" / "mcp-oauth.json"
    assert path.stat().st_mode & 0o777 == 0o600
    assert "access_token" not in path.read_text()
    assert "access_token" not in run.server_log_text()


def test_mcp_servers_from_setup(run_integration: RunIntegration) -> None:
    fixture = Path(__file__).resolve().parents[2] / "mcp_servers" / "fixture_server.py"
    run_integration(
        "mcp_servers",
        scenario(
            reply(
                "The answer is 42.",
                expect=expecting(
                    tools_include=["mcp__ed__echo"],
                    last_user_contains="Fixture read-me: the answer is 42.",
                ),
            ),
        ),
        files={"main.py": "print('hi')\n"},
        env={
            "LSP_AGENT_TEST_MCP": json.dumps(
                {"command": sys.executable, "args": [str(fixture), "--name", "ed"]}
            )
        },
    )


def test_mcp_enable_disable(run_integration: RunIntegration, tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[2] / "mcp_servers" / "fixture_server.py"
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(json.dumps({"numStartups": 5}))
    run = run_integration(
        "mcp_enable",
        scenario(reply("Nothing from ed.", expect=expecting(request_lacks="mcp__ed__"))),
        files={"main.py": "print('hi')\n"},
        env={
            "HOME": str(home),
            "LSP_AGENT_TEST_MCP": json.dumps(
                {"command": sys.executable, "args": [str(fixture), "--name", "ed"]}
            ),
        },
    )
    # Turned off and on again in the user's ~/.claude.json (Claude Code's list), nothing lost.
    saved = json.loads((home / ".claude.json").read_text())
    assert saved["numStartups"] == 5
    entry = saved["projects"][str(run.root.resolve())]
    assert entry["disabledMcpServers"] == []


def test_elicitation_form(run_integration: RunIntegration) -> None:
    fixture = Path(__file__).resolve().parents[2] / "mcp_servers" / "fixture_server.py"
    run_integration(
        "elicit",
        scenario(
            reply(tool_use("mcp__ed__profile", {}, id="toolu_p1")),
            reply(
                tool_use("mcp__ed__profile", {}, id="toolu_p2"),
                expect=expecting(
                    tool_results=[
                        ToolResultExpect(
                            is_error=False,
                            contains='profile: {"name":"Ada","age":36,"colour":"blue",'
                            '"subscribe":true}',
                        )
                    ]
                ),
            ),
            reply(
                "Done.",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=False, contains="answer: decline")]
                ),
            ),
        ),
        files={"main.py": "print('hi')\n"},
        env={
            "LSP_AGENT_TEST_MCP": json.dumps(
                {"command": sys.executable, "args": [str(fixture), "--name", "ed"]}
            )
        },
    )
