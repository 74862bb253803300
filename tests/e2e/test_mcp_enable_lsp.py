"""Turning MCP servers of any scope off and on from the editor (``lspAgent/mcp/setEnabled``),
with both client presets and a real SDK server: a call in flight is cancelled, the tools leave
the very next request (of the same turn) and come back, the switch survives a server restart
(it lives in the user's ~/.claude.json), and a workspace cannot flip it back."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use
from tests.e2e_mcp.conftest import stdio_entry

from .conftest import VSCODE_ONLY, Editor, Launch

MCP_WAIT_S = 60.0
"""Bound for an MCP server to start under load (never a timing assertion)."""


def _home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _user_server(tmp_path: Path) -> None:
    """``fx`` as a user-scope server in ~/.claude.json (no trust or approval needed)."""
    home = _home(tmp_path)
    home.mkdir(exist_ok=True)
    (home / ".claude.json").write_text(
        json.dumps({"numStartups": 3, "mcpServers": {"fx": stdio_entry("--name", "fx")}})
    )


def _tools(editor: Editor, index: int) -> list[str]:
    """The tool names of the ``index``-th request the model server received."""
    return [t["name"] for t in editor.scripted.requests[index].get("tools", [])]


async def _servers(editor: Editor) -> dict[str, dict[str, Any]]:
    result = await editor.request(methods.MCP_LIST, {})
    return {s["name"]: s for s in result["servers"]}


async def _until_state(editor: Editor, name: str, state: str) -> dict[str, Any]:
    async def poll() -> dict[str, Any]:
        while True:
            server = (await _servers(editor)).get(name)
            if server is not None and server["state"] == state:
                return server
            await asyncio.sleep(0.1)

    return await asyncio.wait_for(poll(), MCP_WAIT_S)


async def test_turning_a_server_off_mid_call_and_on_again(launch: Launch, tmp_path: Path) -> None:
    _user_server(tmp_path)
    editor = await launch(
        scenario(
            reply(
                tool_use("mcp__fx__sleep", {"seconds": 30}, id="toolu_slow"),
                expect=expecting(tools_include=["mcp__fx__echo", "mcp__fx__sleep"]),
            ),
            reply(
                "the server went away",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=True, contains="was turned off")]
                ),
            ),
            reply("no MCP tools now"),
            reply("they are back", expect=expecting(tools_include=["mcp__fx__echo"])),
        ),
        init_options={"trusted": True},
    )
    await _until_state(editor, "fx", "ready")
    session = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "sleep a while"))
    await editor.wait_for_update(
        lambda u: (
            u["update"].get("status") == "in_progress"
            and u["update"].get("toolCallId") == "toolu_slow"
        )
    )
    result = await editor.request(methods.MCP_SET_ENABLED, {"name": "fx", "enabled": False})
    (listed,) = result["servers"]
    assert listed["state"] == "disabled"
    assert "disabledMcpServers" in listed["error"]
    answer = await asyncio.wait_for(turn, MCP_WAIT_S)
    assert answer["stopReason"] == "end_turn"
    # The same turn's next request no longer offers the server's tools.
    assert "mcp__fx__sleep" in _tools(editor, 0)
    assert not [t for t in _tools(editor, 1) if t.startswith("mcp__fx__")]
    assert "Read" in _tools(editor, 1)
    assert any(
        s["name"] == "fx" and s["state"] == "disabled"
        for change in editor.mcp_changes
        for s in change["servers"]
    )
    # The switch is Claude Code's, in the user's own file, the rest of it kept.
    saved = json.loads((_home(tmp_path) / ".claude.json").read_text())
    assert saved["numStartups"] == 3
    assert saved["projects"][str(editor.root.resolve())]["disabledMcpServers"] == ["fx"]
    await editor.prompt(session, "anything from fx?")
    assert not [t for t in _tools(editor, -1) if t.startswith("mcp__fx__")]
    assert "Read" in _tools(editor, -1)
    await editor.request(methods.MCP_SET_ENABLED, {"name": "fx", "enabled": True})
    await _until_state(editor, "fx", "ready")
    await editor.prompt(session, "and now?")
    editor.scripted.assert_done()


@VSCODE_ONLY
async def test_the_switch_survives_a_restart_and_the_workspace_cannot_flip_it(
    launch: Launch, tmp_path: Path
) -> None:
    _user_server(tmp_path)
    first = await launch(scenario(), init_options={"trusted": True})
    await first.request(methods.MCP_SET_ENABLED, {"name": "fx", "enabled": False})
    root = first.root
    # The repository redefines the name, approves every server and lists none as off.
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"fx": stdio_entry()}}))
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(
        json.dumps({"enableAllProjectMcpServers": True, "disabledMcpServers": []})
    )
    second = await launch(
        scenario(reply("none")),
        init_options={"trusted": True},
    )
    server = (await _servers(second))["fx"]
    assert server["state"] == "disabled"
    assert server["scope"] == "project"  # the repository's definition, still off
    session = await second.new_session()
    await second.prompt(session, "hello")
    second.scripted.assert_done()
    assert not [t for t in _tools(second, -1) if t.startswith("mcp__")]
    try:
        await second.request(methods.MCP_SET_ENABLED, {"name": "nope", "enabled": True})
    except Exception as exc:
        assert "no MCP server named 'nope'" in str(exc)
    else:
        raise AssertionError("an unknown server was turned on")


@VSCODE_ONLY
async def test_the_mcp_slash_command_lists_and_switches(launch: Launch, tmp_path: Path) -> None:
    _user_server(tmp_path)
    editor = await launch(scenario(), init_options={"trusted": True})
    await _until_state(editor, "fx", "ready")
    session = await editor.new_session()

    async def command(args: str) -> dict[str, Any]:
        params = {"sessionId": session, "command": "mcp", "args": args}
        result: dict[str, Any] = await editor.request(methods.SESSION_COMMAND, params)
        return result

    listed = await command("")
    assert listed["isError"] is False
    assert "**fx** (user, stdio): ready ·" in listed["text"]
    off = await command("disable fx")
    assert off["isError"] is False and "turned off for this project" in off["text"]
    assert (await _servers(editor))["fx"]["state"] == "disabled"
    assert "**fx** (user, stdio): disabled — turned off" in (await command("list"))["text"]
    bad = await command("enable")
    assert bad["isError"] is True and "Usage: `/mcp`" in bad["text"]
    unknown = await command("enable nope")
    assert unknown["isError"] is True and "no MCP server named 'nope'" in unknown["text"]
    on = await command("enable fx")
    assert on["isError"] is False and "turned on" in on["text"]
    await _until_state(editor, "fx", "ready")
