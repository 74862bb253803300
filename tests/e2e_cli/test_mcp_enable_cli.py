"""``lsp-agent mcp enable|disable NAME``: a server of any scope turned off and on for the
folder, in Claude Code's lists in ~/.claude.json, which ``run -p`` and ``mcp list`` follow
(real SDK server, scripted model server)."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_agent.testing.scenario import expecting, reply, scenario
from tests.e2e_cli.conftest import run_cli
from tests.e2e_cli.test_mcp_cli import mcp, statuses, write_mcp_json
from tests.e2e_mcp.conftest import stdio_entry


def _tools_of_run(project: Path) -> tuple[list[str], list[dict[str, str]], str]:
    plain = scenario(reply("Nothing to do.", expect=expecting()), name="plain")
    result = run_cli(
        ["run", "-p", "hi", "--output-format", "stream-json"], scenario=plain, cwd=project
    )
    assert result.code == 0, result.proc.stderr
    init = result.events()[0]
    return init["tools"], init["mcp_servers"], result.proc.stderr


def test_disable_and_enable_a_user_server_for_this_folder(
    project: Path, isolated_home: Path
) -> None:
    state = isolated_home / ".claude.json"
    state.write_text(
        json.dumps({"theme": "dark", "mcpServers": {"fx": stdio_entry("--name", "fx")}})
    )
    tools, servers, _ = _tools_of_run(project)
    assert "mcp__fx__echo" in tools and servers == [{"name": "fx", "status": "connected"}]

    off = mcp(project, "disable", "fx")
    assert off.returncode == 0, off.stderr
    assert "MCP server fx (user) turned off for" in off.stdout
    saved = json.loads(state.read_text())
    assert saved["theme"] == "dark"
    assert saved["projects"][str(project)]["disabledMcpServers"] == ["fx"]
    listed = mcp(project, "list")
    assert "fx (user, stdio): disabled" in listed.stdout
    assert "lsp-agent mcp enable fx" in listed.stdout
    tools, servers, stderr = _tools_of_run(project)
    assert not [t for t in tools if t.startswith("mcp__")]
    assert servers == [{"name": "fx", "status": "disabled"}]
    assert "MCP server fx" not in stderr  # the user's own choice: no warning each run
    again = mcp(project, "disable", "fx")
    assert again.returncode == 0 and "(it already was)" in again.stdout

    on = mcp(project, "enable", "fx")
    assert on.returncode == 0, on.stderr
    assert "turned on" in on.stdout
    assert statuses(project)["fx"]["state"] == "ready"


def test_a_project_server_turned_on_still_needs_approval(project: Path) -> None:
    write_mcp_json(project, fx=stdio_entry("--name", "fx"))
    assert mcp(project, "disable", "fx").returncode == 0
    assert statuses(project)["fx"]["state"] == "disabled"
    on = mcp(project, "enable", "fx")
    assert on.returncode == 0, on.stderr
    assert "it is needs-approval" in on.stdout
    assert "lsp-agent mcp approve fx" in on.stdout


def test_refusals_name_the_problem(project: Path, isolated_home: Path) -> None:
    write_mcp_json(project, fx=stdio_entry("--name", "fx"))
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"disabledMcpjsonServers": ["fx"]})
    )
    still = mcp(project, "enable", "fx")
    assert still.returncode == 1
    assert "is still off: listed in disabledMcpjsonServers of" in still.stderr
    unknown = mcp(project, "disable", "nope")
    assert unknown.returncode == 1 and "no MCP server named 'nope'" in unknown.stderr
    (isolated_home / ".claude.json").write_text("{broken")
    broken = mcp(project, "disable", "fx")
    assert broken.returncode == 1
    assert "is not valid JSON" in broken.stderr and "not changed" in broken.stderr
    assert (isolated_home / ".claude.json").read_text() == "{broken"
    usage = mcp(project, "enable")
    assert usage.returncode == 2 and "mcp enable needs NAME" in usage.stderr


def test_the_mcp_slash_command_in_run_p(project: Path, isolated_home: Path) -> None:
    (isolated_home / ".claude.json").write_text(
        json.dumps({"mcpServers": {"fx": stdio_entry("--name", "fx")}})
    )
    result = run_cli(
        ["run", "-p", "/mcp disable fx", "--output-format", "json"],
        scenario=scenario(name="none"),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    assert "turned off for this project" in result.proc.stdout
    assert statuses(project)["fx"]["state"] == "disabled"
    listed = run_cli(["run", "-p", "/mcp"], scenario=scenario(name="none"), cwd=project)
    assert listed.code == 0, listed.proc.stderr
    assert "**fx** (user, stdio): disabled" in listed.proc.stdout
