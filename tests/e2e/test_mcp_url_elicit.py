"""URL-mode elicitation (MCP 2025-11-25) through the LSP door: a real SDK server's tool asks
the user to visit a page; the editor is asked for consent naming the page's host
(``window/showMessageRequest``), the page opens with ``window/showDocument {external: true}``
once the user agrees, and the server hears ``accept``; Decline is ``decline``."""

from __future__ import annotations

import sys
from pathlib import Path

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use

from .conftest import VSCODE_ONLY, Launch
from .test_mcp_lsp import _until_state

SERVER = Path(__file__).resolve().parents[1] / "mcp_servers" / "url_elicit_server.py"
URL = "https://accounts.example.com/connect?session=s1"


@VSCODE_ONLY
async def test_a_url_request_asks_consent_naming_the_host_then_opens_the_page(
    launch: Launch,
) -> None:
    editor = await launch(
        scenario(
            reply(tool_use("mcp__pages__connect_account", {}, id="toolu_u1")),
            reply(
                tool_use("mcp__pages__connect_account", {}, id="toolu_u2"),
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=False, contains="answer: accept")]
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
            "mcpServers": {"pages": {"command": sys.executable, "args": [str(SERVER), URL]}},
            "settings": {"permissions": {"allow": ["mcp__pages"]}},
        },
    )
    await _until_state(editor, "pages", "ready")
    editor.message_answers += ["Open accounts.example.com", "Decline"]
    session_id = await editor.new_session()
    answer = await editor.prompt(session_id, "connect my account")
    assert answer["stopReason"] == "end_turn"
    editor.scripted.assert_done()

    first, second = editor.message_requests
    assert first.message.startswith(
        "MCP server 'pages' asks you to open a page on accounts.example.com: "
        "Connect your account to continue"
    )
    assert URL in first.message
    assert [a.title for a in first.actions or []] == ["Open accounts.example.com", "Decline"]
    assert second.message == first.message
    # Opened once (after consent), in the browser; the declined one was not.
    opened = [d for d in editor.client.shown_documents if d.uri == URL]
    assert len(opened) == 1 and opened[0].external
    # The page's address never reached the model.
    assert "accounts.example.com" not in str(editor.scripted.requests)
