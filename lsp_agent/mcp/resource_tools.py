"""Claude Code's two resource tools, ``ListMcpResourcesTool`` and ``ReadMcpResourceTool``.

They are offered in a turn when at least one ready server has the resources capability, and
go through the executor and the permission engine like every tool: they are read-only (as in
Claude Code: listing and reading a resource changes nothing), so the default mode runs them
without asking, while deny and ask rules naming them still apply. They touch no file, so
edited buffers are neither saved before nor refreshed after.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from lsp_agent.mcp.connection import CallFailedError, ServerConnection
from lsp_agent.mcp.limits import McpLimits
from lsp_agent.mcp.resources import list_resources, read_resource_text, resource_entry
from lsp_agent.mcp.results import cap_text
from lsp_agent.tools.base import Prepared, Tool, ToolContext, ToolError, ToolInput, ToolOutput


class ListResourcesInput(ToolInput):
    """Input of ``ListMcpResourcesTool``."""

    server: str | None = Field(
        default=None, description="Optional server name to filter resources by"
    )


class ReadResourceInput(ToolInput):
    """Input of ``ReadMcpResourceTool``."""

    server: str = Field(description="The MCP server name")
    uri: str = Field(description="The resource URI to read")


class _ResourceTool:
    """What both tools share: the ready servers with resources, by name."""

    def __init__(self, *, connections: Mapping[str, ServerConnection], limits: McpLimits) -> None:
        self.connections = dict(connections)
        self.limits = limits

    def _server(self, name: str) -> ServerConnection:
        connection = self.connections.get(name)
        if connection is None:
            known = ", ".join(sorted(self.connections)) or "none"
            raise ToolError(
                f"Server {name!r} not found or offers no resources. Servers with resources: {known}"
            )
        return connection


class ListMcpResourcesTool(_ResourceTool, Tool[ListResourcesInput]):
    """Lists the resources of every (or one) connected MCP server."""

    name = "ListMcpResourcesTool"
    description = (
        "Lists available resources from configured MCP servers. Each resource object includes "
        "a 'server' field indicating which server it's from."
    )
    input_model = ListResourcesInput
    kind = "read"
    read_only = True
    concurrency_safe = True
    reads_disk = False
    writes_disk = False

    def title(self, inp: ListResourcesInput) -> str:
        """``List MCP resources`` (of one server)."""
        return "List MCP resources" + (f" of {inp.server}" if inp.server else "")

    async def call(
        self, inp: ListResourcesInput, prepared: Prepared, ctx: ToolContext
    ) -> ToolOutput:
        """The resources as a JSON array; a server that fails is named in a note."""
        names = [inp.server] if inp.server else sorted(self.connections)
        entries: list[dict[str, Any]] = []
        notes: list[str] = []
        for name in names:
            connection = self._server(name)
            try:
                listed = await list_resources(connection)
            except CallFailedError as exc:
                if inp.server:
                    raise ToolError(str(exc)) from None
                notes.append(str(exc))
                continue
            entries.extend(resource_entry(name, r) for r in listed)
        text = (
            json.dumps(entries, ensure_ascii=False, indent=2) if entries else "No resources found."
        )
        if notes:
            text += "\n\n" + "\n".join(notes)
        return ToolOutput(text=cap_text(text, limits=self.limits, tool=self.name))


class ReadMcpResourceTool(_ResourceTool, Tool[ReadResourceInput]):
    """Reads one resource of one MCP server."""

    name = "ReadMcpResourceTool"
    description = (
        "Reads a specific resource from an MCP server, identified by server name and resource URI."
    )
    input_model = ReadResourceInput
    kind = "read"
    read_only = True
    concurrency_safe = True
    reads_disk = False
    writes_disk = False

    def title(self, inp: ReadResourceInput) -> str:
        """``server: uri``."""
        return f"{inp.server}: {inp.uri}"

    async def call(
        self, inp: ReadResourceInput, prepared: Prepared, ctx: ToolContext
    ) -> ToolOutput:
        """The resource's text (binary contents described), capped."""
        try:
            text = await read_resource_text(self._server(inp.server), inp.uri, limits=self.limits)
        except CallFailedError as exc:
            raise ToolError(str(exc)) from None
        return ToolOutput(text=text, raw_output={"mcpServer": inp.server, "uri": inp.uri})


def resource_tools(
    connections: Mapping[str, ServerConnection], limits: McpLimits
) -> list[Tool[Any, Any]]:
    """Both tools when some ready server of ``connections`` has resources, else none."""
    with_resources = {
        name: c for name, c in connections.items() if c.state == "ready" and c.has_resources
    }
    if not with_resources:
        return []
    return [
        ListMcpResourcesTool(connections=with_resources, limits=limits),
        ReadMcpResourceTool(connections=with_resources, limits=limits),
    ]
