"""MCP resources: list a server's resources, read one as text for the model.

Used by the ``ListMcpResourcesTool`` / ``ReadMcpResourceTool`` tools (:mod:`.resource_tools`)
and by ``@server:uri`` mentions in prompts (:mod:`.mentions`). Text contents are passed on;
binary contents (blobs) are described with their MIME type and size, never decoded into the
prompt. Everything read is capped like a tool result (``MAX_MCP_OUTPUT_TOKENS``).

Imports the SDK's types (through :mod:`.connection`): reached only once a server runs.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import mcp_types as types
from mcp import Client

from lsp_agent.mcp.connection import CallFailedError, ServerConnection
from lsp_agent.mcp.limits import McpLimits
from lsp_agent.mcp.results import cap_text

MAX_RESOURCE_PAGES = 20
"""Pages of ``resources/list`` read at most per server."""

MAX_RESOURCES = 500
"""Resources listed per server at most (the rest are left out with a note)."""


async def _page(client: Client, *, cursor: str | None) -> types.ListResourcesResult:
    return await client.list_resources(cursor=cursor)


async def list_resources(connection: ServerConnection) -> list[types.Resource]:
    """The resources ``connection``'s server lists (at most :data:`MAX_RESOURCES`); none when
    it has no resources capability. Raises :class:`CallFailedError` when the server cannot
    answer."""
    if not connection.has_resources:
        return []
    out: list[types.Resource] = []
    cursor: str | None = None
    for _ in range(MAX_RESOURCE_PAGES):
        page = await connection.request("resources/list", partial(_page, cursor=cursor))
        out.extend(page.resources)
        cursor = page.next_cursor
        if cursor is None or len(out) >= MAX_RESOURCES:
            break
    return out[:MAX_RESOURCES]


def resource_entry(server: str, resource: types.Resource) -> dict[str, Any]:
    """One listed resource as plain data (Claude Code's shape: ``uri``, ``name``,
    ``mimeType``, ``description``, ``server``), ``None`` fields left out."""
    entry: dict[str, Any] = {"uri": str(resource.uri), "name": resource.name}
    if resource.mime_type:
        entry["mimeType"] = resource.mime_type
    if resource.description:
        entry["description"] = resource.description
    entry["server"] = server
    return entry


def _content_text(item: Any) -> str:
    text = getattr(item, "text", None)
    if isinstance(text, str):
        return text
    blob = getattr(item, "blob", "") or ""
    mime = getattr(item, "mime_type", None) or "application/octet-stream"
    return f"[binary content ({mime}, about {len(blob) * 3 // 4} bytes), not shown]"


async def read_resource_text(connection: ServerConnection, uri: str, *, limits: McpLimits) -> str:
    """The contents of resource ``uri`` as text (several contents are joined, binary ones
    described), capped at ``limits.max_output_tokens``. Raises :class:`CallFailedError` when
    the server is not connected, does not offer resources, or cannot read it."""
    server = connection.spec.name
    if connection.state == "ready" and not connection.has_resources:
        raise CallFailedError(f"MCP server {server!r} does not offer resources")
    result = await connection.request(
        f"reading {uri}", lambda client: client.read_resource(uri, cache_mode="bypass")
    )
    parts = [_content_text(item) for item in result.contents]
    text = "\n".join(parts) if parts else "(empty resource)"
    return cap_text(text, limits=limits, tool=f"{server}:{uri}")
