"""Reading a connected server's tool and prompt lists, bounded (pages and entries), so a
server that paginates forever or lists thousands of tools cannot hang or swamp a turn.

Imports the SDK: only reached once a server is configured.
"""

from __future__ import annotations

import logging

import anyio
import mcp_types as types
from mcp import Client

from lsp_agent.mcp.errors import describe_error

log = logging.getLogger(__name__)

MAX_TOOLS_PAGES = 100
"""Pages of ``tools/list`` read at most (a server that paginates forever cannot hang us)."""

MAX_TOOLS = 1000
"""Tools taken from one server at most (the rest are ignored with a log line)."""


async def list_tools(client: Client, *, server: str) -> tuple[types.Tool, ...]:
    """The first :data:`MAX_TOOLS` tools of server ``server`` (at most :data:`MAX_TOOLS_PAGES`
    pages). Raises what the SDK raises (the caller keeps its old list)."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_TOOLS_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None or len(tools) >= MAX_TOOLS:
            break
    if len(tools) > MAX_TOOLS:
        log.warning(
            "MCP server %s lists %d tools; using the first %d", server, len(tools), MAX_TOOLS
        )
    return tuple(tools[:MAX_TOOLS])


async def list_prompts(
    client: Client, *, server: str, timeout_s: float
) -> tuple[types.Prompt, ...]:
    """The server's prompts (first :data:`MAX_TOOLS` of at most :data:`MAX_TOOLS_PAGES` pages,
    within ``timeout_s`` seconds); a failure is logged and reads as none."""
    prompts: list[types.Prompt] = []
    cursor: str | None = None
    try:
        with anyio.fail_after(timeout_s):
            for _ in range(MAX_TOOLS_PAGES):
                page = await client.list_prompts(cursor=cursor)
                prompts.extend(page.prompts)
                cursor = page.next_cursor
                if cursor is None or len(prompts) >= MAX_TOOLS:
                    break
    except Exception as exc:
        log.warning("MCP server %s: listing its prompts failed (%s)", server, describe_error(exc))
    return tuple(prompts[:MAX_TOOLS])
