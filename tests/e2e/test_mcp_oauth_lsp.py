"""OAuth for an HTTP MCP server through the LSP door, with both client presets: the server
shows ``needs_login``; ``lspAgent/mcp/login`` opens the authorisation URL with
``window/showDocument {external: true}``; the test plays the browser (GETs that URL, follows
its redirect to the loopback callback); the server becomes ready and its tool runs in a turn;
``lspAgent/mcp/logout`` forgets the token. The authorisation server is real (the SDK's, in
``tests/mcp_servers/oauth_server.py``)."""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use
from tests.e2e_mcp.conftest import free_port, stop
from tests.e2e_mcp.test_oauth import start_oauth

from .conftest import Editor, Launch
from .test_mcp_lsp import MCP_WAIT_S, _servers, _until_state


@pytest.fixture
def oauth_url() -> Iterator[str]:
    port = free_port()
    proc = start_oauth(port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)


async def _shown_url(editor: Editor) -> str:
    async def poll() -> str:
        while True:
            for doc in editor.client.shown_documents:
                if doc.external and doc.uri.startswith("http://127.0.0.1"):
                    return str(doc.uri)
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(poll(), MCP_WAIT_S)


async def _browse(url: str) -> int:
    async with httpx2.AsyncClient(timeout=30) as client:
        response = await client.get(url)
        assert response.status_code == 302
        return (await client.get(response.headers["location"])).status_code


async def test_login_from_the_editor_opens_the_browser_and_the_tool_runs(
    launch: Launch, tmp_path: Path, oauth_url: str
) -> None:
    editor = await launch(
        scenario(
            reply(
                tool_use("mcp__secure__whoami", {}, id="toolu_who"),
                expect=expecting(tools_include=["mcp__secure__whoami"]),
            ),
            reply(
                "done",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=False, contains="authorised")]
                ),
            ),
        ),
        init_options={
            "trusted": True,
            "mcpServers": {"secure": {"type": "http", "url": oauth_url}},
            "settings": {"permissions": {"allow": ["mcp__secure"]}},
        },
    )
    server = await _until_state(editor, "secure", "needs_login")
    assert "log in" in server["error"]
    assert server["loggedIn"] is False
    assert any(
        s["state"] == "needs_login" for change in editor.mcp_changes for s in change["servers"]
    )

    login = asyncio.ensure_future(editor.request(methods.MCP_LOGIN, {"name": "secure"}))
    url = await _shown_url(editor)
    assert "code_challenge=" in url and "state=" in url
    assert await _browse(url) == 200
    result = await asyncio.wait_for(login, MCP_WAIT_S)
    assert {s["name"] for s in result["servers"]} == {"secure"}
    assert (await _until_state(editor, "secure", "ready"))["loggedIn"] is True  # Log out shown

    (path,) = (tmp_path / "home").rglob("mcp-oauth.json")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    token = next(iter(json.loads(path.read_text())["servers"].values()))["tokens"]["access_token"]

    session_id = await editor.new_session()
    answer = await editor.prompt(session_id, "who am I?")
    assert answer["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    # The token never reaches the model.
    assert token not in json.dumps(editor.scripted.requests)

    await editor.request(methods.MCP_LOGOUT, {"name": "secure"})
    assert (await _until_state(editor, "secure", "needs_login"))["loggedIn"] is False
    assert "tokens" not in next(iter(json.loads(path.read_text())["servers"].values()), {})


async def test_a_failed_login_is_an_error_and_the_server_stays_up(
    launch: Launch, oauth_url: str
) -> None:
    editor = await launch(
        scenario(),
        init_options={
            "trusted": True,
            "mcpServers": {"secure": {"type": "http", "url": oauth_url}},
        },
    )
    await _until_state(editor, "secure", "needs_login")
    login = asyncio.ensure_future(editor.request(methods.MCP_LOGIN, {"name": "secure"}))
    url = await _shown_url(editor)
    forged = url.replace("state=", "state=forged")
    async with httpx2.AsyncClient(timeout=30) as client:
        redirect = (await client.get(forged)).headers["location"]
        assert (await client.get(redirect)).status_code == 400
    with pytest.raises(Exception, match="wrong state"):
        await asyncio.wait_for(login, MCP_WAIT_S)
    assert (await _servers(editor))["secure"]["state"] == "needs_login"
    # The language server goes on answering.
    assert (await editor.request(methods.MCP_LIST, {}))["servers"]
