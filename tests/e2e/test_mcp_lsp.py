"""MCP servers through the LSP door, with both client presets: a project server waits for
trust and approval, runs once approved, its tools go through permission prompts; status is
listed and notified; configuration errors are diagnostics in .mcp.json; a changed definition
needs approval again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from lsprotocol import types

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use
from tests.e2e_mcp.conftest import stdio_entry

from .conftest import VSCODE_ONLY, Editor, Launch

MCP_WAIT_S = 60.0
"""Bound for an MCP server to start under load (never a timing assertion)."""


def _root(tmp_path: Path) -> Path:
    return tmp_path / "my ws é"


def _write_mcp_json(root: Path, servers: dict[str, Any] | str) -> Path:
    path = root / ".mcp.json"
    text = servers if isinstance(servers, str) else json.dumps({"mcpServers": servers}, indent=2)
    path.write_text(text)
    return path


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


async def test_a_project_server_runs_after_approval_and_asks_before_its_tools(
    launch: Launch, tmp_path: Path
) -> None:
    _write_mcp_json(_root(tmp_path), {"fx": stdio_entry("--name", "fx")})
    editor = await launch(
        scenario(
            reply(
                tool_use("mcp__fx__echo", {"text": "from the editor"}, id="toolu_mcp"),
                expect=expecting(tools_include=["Read", "mcp__fx__echo"]),
            ),
            reply(
                "done",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=False, contains="echo: from the")]
                ),
            ),
        ),
        init_options={"trusted": True},
    )
    before = await _servers(editor)
    assert before["fx"]["state"] == "needs_approval"
    assert before["fx"]["scope"] == "project"
    result = await editor.request(methods.MCP_APPROVE, {"name": "fx", "approved": True})
    assert {s["name"] for s in result["servers"]} == {"fx"}
    ready = await _until_state(editor, "fx", "ready")
    assert ready["tools"] > 0
    assert any(
        s["name"] == "fx" and s["state"] == "ready"
        for change in editor.mcp_changes
        for s in change["servers"]
    )
    session_id = await editor.new_session()
    answer = await editor.prompt(session_id, "echo something")
    assert answer["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    (request,) = editor.permission_requests
    assert request["toolCall"]["title"] == "fx: echo"
    assert "mcp__fx" in request.get("suggestedRules", [])[0]


async def test_an_untrusted_workspace_starts_nothing_and_cannot_approve(
    launch: Launch, tmp_path: Path
) -> None:
    _write_mcp_json(_root(tmp_path), {"fx": stdio_entry()})
    editor = await launch(scenario(), init_options={"trusted": False})
    assert (await _servers(editor))["fx"]["state"] == "untrusted"
    try:
        await editor.request(methods.MCP_APPROVE, {"name": "fx", "approved": True})
    except Exception as exc:
        assert "not trusted" in str(exc)
    else:
        raise AssertionError("an untrusted workspace's server was approved")
    assert (await _servers(editor))["fx"]["state"] == "untrusted"


@VSCODE_ONLY
async def test_config_errors_are_diagnostics_in_the_file(launch: Launch, tmp_path: Path) -> None:
    path = _write_mcp_json(_root(tmp_path), '{"mcpServers": {\n  "x": {"command": 3}\n}}\n')
    editor = await launch(scenario(), init_options={"trusted": True})

    async def poll() -> list[types.Diagnostic]:
        while True:
            found = editor.client.diagnostics.get(path.as_uri())
            if found:
                return list(found)
            await asyncio.sleep(0.02)

    (diagnostic,) = await asyncio.wait_for(poll(), MCP_WAIT_S)
    assert diagnostic.range.start.line == 1
    assert '"command" must be' in diagnostic.message


@VSCODE_ONLY
async def test_a_changed_definition_needs_approval_again(launch: Launch, tmp_path: Path) -> None:
    root = _root(tmp_path)
    _write_mcp_json(root, {"fx": stdio_entry()})
    editor = await launch(scenario(), init_options={"trusted": True})
    await editor.request(methods.MCP_APPROVE, {"name": "fx", "approved": True})
    await _until_state(editor, "fx", "ready")
    _write_mcp_json(root, {"fx": stdio_entry("--flood-stderr", "1")})
    changed = await _until_state(editor, "fx", "needs_approval")
    assert "changed since it was approved" in changed["error"]
    try:
        await editor.request(methods.MCP_RECONNECT, {"name": "fx"})
    except Exception as exc:
        assert "not running" in str(exc)
    else:
        raise AssertionError("reconnect of a server that is not running was accepted")


@VSCODE_ONLY
async def test_resource_mentions_and_the_resource_tools(launch: Launch, tmp_path: Path) -> None:
    _write_mcp_json(_root(tmp_path), {"fx": stdio_entry("--name", "fx")})
    editor = await launch(
        scenario(
            reply(
                tool_use(
                    "ReadMcpResourceTool",
                    {"server": "fx", "uri": "test://notes/readme"},
                    id="toolu_res",
                ),
                expect=expecting(
                    tools_include=["ListMcpResourcesTool", "ReadMcpResourceTool"],
                    last_user_contains="Fixture read-me: the answer is 42.",
                ),
            ),
            reply(
                "done",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=False, contains="the answer is 42")]
                ),
            ),
        ),
        init_options={"trusted": True},
    )
    await editor.request(methods.MCP_APPROVE, {"name": "fx", "approved": True})
    await _until_state(editor, "fx", "ready")
    session_id = await editor.new_session()
    answer = await editor.prompt(session_id, "What does @fx:test://notes/readme say?")
    assert answer["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    assert editor.permission_requests == []  # read-only: the default mode does not ask


@VSCODE_ONLY
async def test_server_prompts_are_slash_commands(launch: Launch, tmp_path: Path) -> None:
    _write_mcp_json(_root(tmp_path), {"fx": stdio_entry("--name", "fx")})
    editor = await launch(
        scenario(
            reply(
                "reviewed",
                expect=expecting(last_user_contains="Please review a.py, looking for speed."),
            )
        ),
        init_options={"trusted": True},
    )
    session_id = await editor.new_session()  # before the server runs: no MCP commands yet
    await editor.request(methods.MCP_APPROVE, {"name": "fx", "approved": True})
    await _until_state(editor, "fx", "ready")

    def names(update: dict[str, Any]) -> set[str]:
        inner = update.get("update", {})
        if inner.get("sessionUpdate") != "available_commands_update":
            return set()
        return {c["name"] for c in inner["availableCommands"]}

    update = await editor.wait_for_update(lambda u: "mcp__fx__review" in names(u))
    review = next(
        c for c in update["update"]["availableCommands"] if c["name"] == "mcp__fx__review"
    )
    assert review["input"] == {"hint": "path [focus]"}
    assert review["description"].endswith("(MCP)")
    assert "compact" in names(update)  # the built-ins stay
    answer = await editor.prompt(session_id, "/mcp__fx__review a.py speed")
    assert answer["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    try:
        await editor.prompt(session_id, "/mcp__fx__review")
    except Exception as exc:  # a command error answers the request; no model request
        assert "missing path. Usage: /mcp__fx__review path [focus]" in str(exc)
    else:
        raise AssertionError("a prompt command without its required argument ran")
    editor.scripted.assert_done()


@VSCODE_ONLY
async def test_mcp_servers_from_the_editor_settings(launch: Launch, tmp_path: Path) -> None:
    # The editor's settings are the user's: no approval, and they run in an untrusted
    # workspace too (unlike the repository's .mcp.json beside them).
    _write_mcp_json(_root(tmp_path), {"repo": stdio_entry()})
    editor = await launch(
        scenario(
            reply(
                tool_use("mcp__ed__echo", {"text": "from settings"}, id="toolu_ed"),
                expect=expecting(tools_include=["mcp__ed__echo"]),
            ),
            reply(
                "done",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=False, contains="echo: from settings")]
                ),
            ),
        ),
        init_options={"trusted": False, "mcpServers": {"ed": stdio_entry("--name", "ed")}},
    )
    ready = await _until_state(editor, "ed", "ready")
    assert ready["scope"] == "lsp"
    assert (await _servers(editor))["repo"]["state"] == "untrusted"
    session_id = await editor.new_session()
    answer = await editor.prompt(session_id, "echo from settings")
    assert answer["stopReason"] == "end_turn"
    editor.scripted.assert_done()

    # didChangeConfiguration swaps the set: "ed" stops, "ed2" starts; a bad value is ignored.
    settings = {"lspAgent": {"mcpServers": {"ed2": stdio_entry("--name", "ed2")}}}
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings=settings)
    )
    await _until_state(editor, "ed2", "ready")
    assert "ed" not in await _servers(editor)
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"lspAgent": {"mcpServers": ["x"]}})
    )
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"lspAgent": {"mcpServers": None}})
    )

    async def gone() -> None:
        while "ed2" in await _servers(editor):
            await asyncio.sleep(0.1)

    await asyncio.wait_for(gone(), MCP_WAIT_S)


@VSCODE_ONLY
async def test_an_elicitation_is_asked_in_the_editor(launch: Launch, tmp_path: Path) -> None:
    editor = await launch(
        scenario(
            reply(tool_use("mcp__ed__confirm", {}, id="toolu_c1")),
            reply(
                tool_use("mcp__ed__confirm", {}, id="toolu_c2"),
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=False, contains="proceed=True")]
                ),
            ),
            reply(
                "done",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=False, contains="answer: cancel")]
                ),
            ),
        ),
        init_options={"trusted": True, "mcpServers": {"ed": stdio_entry("--name", "ed")}},
    )
    await _until_state(editor, "ed", "ready")
    editor.message_answers.append("Yes")  # the second question is dismissed
    session_id = await editor.new_session()
    answer = await editor.prompt(session_id, "confirm twice")
    assert answer["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    first, _dismissed = editor.message_requests
    assert first.message == "MCP server 'ed' asks: Delete the build folder?"
    assert [a.title for a in first.actions or []] == ["Yes", "No", "Decline"]


@VSCODE_ONLY
async def test_trusting_the_workspace_at_runtime_reaches_its_servers(
    launch: Launch, tmp_path: Path
) -> None:
    _write_mcp_json(_root(tmp_path), {"fx": stdio_entry()})
    editor = await launch(scenario(), init_options={"trusted": False})
    assert (await _servers(editor))["fx"]["state"] == "untrusted"
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"lspAgent": {"trusted": True}})
    )
    await _until_state(editor, "fx", "needs_approval")


async def test_resource_mentions_complete_after_the_server_name(
    launch: Launch, tmp_path: Path
) -> None:
    editor = await launch(
        scenario(
            reply(tool_use("mcp__ed__media", {}, id="toolu_media")),
            reply(
                "done",
                expect=expecting(
                    request_contains='"media_type": "image/png"',
                    tool_results=[
                        ToolResultExpect(is_error=False, contains="[image (png, 34 KB)]")
                    ],
                ),
            ),
        ),
        init_options={"trusted": True, "mcpServers": {"ed": stdio_entry("--name", "ed")}},
    )
    await _until_state(editor, "ed", "ready")
    found = await editor.request(methods.MCP_RESOURCES, {"query": "ed:"})
    labels = [item["label"] for item in found["items"]]
    assert labels == ["ed:test://blob", "ed:test://notes/readme"]
    readme = found["items"][1]
    assert readme["name"] == "readme" and readme["mimeType"] == "text/plain"
    narrowed = await editor.request(methods.MCP_RESOURCES, {"query": "ed:READ"})
    assert [item["label"] for item in narrowed["items"]] == ["ed:test://notes/readme"]
    by_server = await editor.request(methods.MCP_RESOURCES, {"query": "e"})
    assert len(by_server["items"]) == 2
    assert (await editor.request(methods.MCP_RESOURCES, {"query": "other:"}))["items"] == []

    # An image result: the model gets the image block, the card names it (no base64).
    session_id = await editor.new_session()
    answer = await editor.prompt(session_id, "show the chart")
    assert answer["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    cards = [
        json.dumps(u)
        for u in editor.updates
        if u.get("update", {}).get("toolCallId") == "toolu_media"
        and u["update"].get("status") == "completed"
    ]
    assert cards and "[image (png, 34 KB)]" in cards[-1]
    assert "iVBORw0KGgo" not in "".join(cards)


async def test_a_form_goes_to_a_client_that_shows_forms_and_is_checked(
    launch: Launch, tmp_path: Path
) -> None:
    editor = await launch(
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
                "done",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=False, contains="answer: decline")]
                ),
            ),
        ),
        init_options={
            "trusted": True,
            "mcpServers": {"ed": stdio_entry("--name", "ed")},
            "clientCapabilities": {"saveDocuments": True, "mcpElicitation": True},
        },
    )
    await _until_state(editor, "ed", "ready")
    editor.elicit_answers += [
        # wrong: too short a name, an age below the minimum, a colour not offered, a stray key
        {"action": "accept", "content": {"name": "A", "age": -1, "colour": "pink", "x": 1}},
        {
            "action": "accept",
            "content": {"name": "Ada", "age": 36.0, "colour": "blue", "subscribe": True},
        },
        {"action": "decline"},
    ]
    session_id = await editor.new_session()
    answer = await editor.prompt(session_id, "make my profile twice")
    assert answer["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    first, again, third = editor.elicit_requests
    assert first["server"] == "ed" and first["message"] == "Create your profile"
    schema = first["requestedSchema"]
    assert schema["required"] == ["name", "age"]
    assert schema["properties"]["colour"]["enum"] == ["red", "green", "blue"]
    # The server's field order, for clients whose decoded objects have none (Neovim).
    assert first["propertyOrder"] == ["name", "age", "colour", "subscribe"]
    assert "problems" not in first
    assert again["problems"] == [
        "x: not a field of this form",
        "name: at least 2 characters",
        "age: at least 0",
        "colour: must be one of red, green, blue",
    ]
    assert "problems" not in third
    assert editor.message_requests == []  # no button question for a client that shows forms


async def test_a_tool_that_calls_ctx_elicit_gets_the_form_answer(
    launch: Launch, tmp_path: Path
) -> None:
    """A tool written the usual way (``await ctx.elicit(...)`` and a mid-call ``roots/list``)
    reaches the editor: the client connects with the handshake, where the server has a
    back-channel for its own requests."""
    root = _root(tmp_path)
    editor = await launch(
        scenario(
            reply(tool_use("mcp__ed__pick", {}, id="toolu_pick")),
            reply(
                tool_use("mcp__ed__ctx_roots", {}, id="toolu_roots"),
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=False, contains="picked: teal")]
                ),
            ),
            reply(
                "done",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=False, contains=root.as_uri())]
                ),
            ),
        ),
        init_options={
            "trusted": True,
            "mcpServers": {"ed": stdio_entry("--name", "ed")},
            "clientCapabilities": {"mcpElicitation": True},
        },
    )
    await _until_state(editor, "ed", "ready")
    editor.elicit_answers.append({"action": "accept", "content": {"colour": "teal", "size": 2}})
    session_id = await editor.new_session()
    answer = await editor.prompt(session_id, "pick a colour")
    assert answer["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    (asked,) = editor.elicit_requests
    assert asked["server"] == "ed" and asked["message"] == "Which colour?"
    assert set(asked["requestedSchema"]["properties"]) == {"colour", "size"}


async def test_servers_get_the_workspace_folders_as_roots(launch: Launch, tmp_path: Path) -> None:
    root = _root(tmp_path)
    editor = await launch(
        scenario(
            reply(tool_use("mcp__ed__roots", {}, id="toolu_roots")),
            reply(
                "done",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=False, contains=root.as_uri())]
                ),
            ),
        ),
        init_options={"trusted": True, "mcpServers": {"ed": stdio_entry("--name", "ed")}},
    )
    await _until_state(editor, "ed", "ready")
    session_id = await editor.new_session()
    answer = await editor.prompt(session_id, "which roots?")
    assert answer["stopReason"] == "end_turn"
    editor.scripted.assert_done()
