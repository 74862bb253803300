"""A real MCP server (the SDK's ``MCPServer``, stdio) whose one tool asks the user to visit a
page with a URL-mode elicitation (MCP 2025-11-25) and says what the client answered. On a
connection made with the ``initialize`` handshake (what lsp-agent opens first) the request
goes to the client with ``ctx.elicit_url``; on the stateless protocol (2026-07-28) it travels
in an ``InputRequiredResult`` and the answer comes back in the retried call's
``input_responses``.

Run as ``python url_elicit_server.py [URL]`` (default ``https://accounts.example.com/connect
?session=s1``): the page is never fetched by anyone; the test checks where the client sent
the user."""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import NoBackChannelError
from mcp_types import ElicitRequest, ElicitRequestURLParams, InputRequiredResult

DEFAULT_URL = "https://accounts.example.com/connect?session=s1"


def build(url: str) -> MCPServer:
    server = MCPServer("pages")

    @server.tool()
    async def connect_account(ctx: Context) -> str | InputRequiredResult:
        """Ask the user to connect their account on the provider's page."""
        answer = (ctx.input_responses or {}).get("connect")
        if answer is not None:
            return f"answer: {getattr(answer, 'action', answer)}"
        message = "Connect your account to continue"
        try:
            result = await ctx.elicit_url(message=message, url=url, elicitation_id="elicit-1")
        except NoBackChannelError:
            pass  # the stateless protocol: ask through the result instead
        else:
            return f"answer: {result.action}"
        params = ElicitRequestURLParams(message=message, url=url, elicitation_id="elicit-1")
        return InputRequiredResult(
            input_requests={"connect": ElicitRequest(params=params)}, request_state="asked"
        )

    return server


if __name__ == "__main__":
    build(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_URL).run("stdio")
