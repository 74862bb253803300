"""MCP tools as agent tools: ``mcp__<server>__<tool>``, through the same executor and
permission engine as the built-ins.

An MCP tool is never treated as read-only by the permission engine, whatever its
``readOnlyHint`` says (the hint comes from the server, which is not trusted to judge itself):
without an allow rule (``mcp__server`` or ``mcp__server__tool``) it asks, deny and ask rules
always apply, and plan mode refuses it. The hint only lets calls run concurrently. It is also
fail-closed about the disk: edited buffers are saved before it runs and refreshed after.
"""

from __future__ import annotations

from typing import Any, ClassVar

from lsp_agent.mcp.call_scopes import CallScopes
from lsp_agent.mcp.connection import CallFailedError, ServerConnection
from lsp_agent.mcp.limits import McpLimits
from lsp_agent.mcp.names import normalize_schema, tool_names
from lsp_agent.mcp.results import convert_result
from lsp_agent.model.types import ToolSpec
from lsp_agent.tools.base import Prepared, Tool, ToolContext, ToolError, ToolInput, ToolOutput

MAX_DESCRIPTION_CHARS = 2048
"""Longest tool description passed to the model (characters; longer ones are cut)."""


class McpArguments(ToolInput):
    """The arguments of an MCP call, passed to the server as given (it validates them)."""

    arguments: dict[str, Any]


class McpTool(Tool[McpArguments]):
    """One tool of one server. Instances come from :func:`server_tools`."""

    input_model: ClassVar[type[ToolInput]] = McpArguments
    kind = "other"
    server: ClassVar[str]
    remote_name: ClassVar[str]
    schema: ClassVar[dict[str, Any]]
    display_title: ClassVar[str]

    def __init__(
        self, *, connection: ServerConnection, limits: McpLimits, scopes: CallScopes
    ) -> None:
        self.connection = connection
        self.limits = limits
        self.scopes = scopes
        """The server's calls in flight (cancelled when it is turned off)."""

    def spec(self) -> ToolSpec:
        """Name, description and normalised input schema."""
        return ToolSpec(name=self.name, description=self.description, input_schema=self.schema)

    def parse(self, raw: dict[str, Any]) -> McpArguments:
        """Wrap the raw arguments; the server validates them against its schema."""
        return McpArguments(arguments=dict(raw))

    def title(self, inp: McpArguments) -> str:
        """``server: tool title``."""
        return f"{self.server}: {self.display_title}"

    async def prepare(self, inp: McpArguments, ctx: ToolContext) -> Prepared:
        """No preview: the call's effect is the server's business."""
        return Prepared(title=self.title(inp))

    async def call(self, inp: McpArguments, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        """Call the server; its progress notifications stream to the tool call card."""

        def report(progress: float, total: float | None, message: str | None) -> None:
            amount = f"{progress:g}/{total:g}" if total else f"{progress:g}"
            ctx.progress(f"[{amount}] {message}\n" if message else f"[{amount}]\n")

        try:
            with self.scopes.guard(self.remote_name):
                result = await self.connection.call(self.remote_name, inp.arguments, report=report)
        except CallFailedError as exc:
            raise ToolError(str(exc)) from None
        converted = convert_result(result, limits=self.limits, tool=self.name)
        return ToolOutput(
            text=converted.text,
            images=converted.images,
            is_error=bool(result.is_error),
            raw_output={"mcpServer": self.server, "mcpTool": self.remote_name},
        )


def server_tools(
    connection: ServerConnection, limits: McpLimits, scopes: CallScopes
) -> list[Tool[Any, Any]]:
    """Agent tools for every tool ``connection`` lists now, sorted by model-facing name; their
    calls run in ``scopes`` (:mod:`.call_scopes`)."""
    server = connection.spec.name
    listed = {t.name: t for t in connection.tools}
    names = tool_names(server, listed)
    out: list[Tool[Any, Any]] = []
    for remote, exposed in sorted(names.items(), key=lambda item: item[1]):
        tool = listed[remote]
        hint = tool.annotations.read_only_hint if tool.annotations is not None else None
        title = tool.title or (tool.annotations.title if tool.annotations else None) or remote
        description = (tool.description or title)[:MAX_DESCRIPTION_CHARS]
        cls = type(
            "McpTool",
            (McpTool,),
            {
                "name": exposed,
                "description": description,
                "server": server,
                "remote_name": remote,
                "schema": normalize_schema(tool.input_schema, where=exposed),
                "display_title": title,
                "concurrency_safe": hint is True,
                "read_only": False,
            },
        )
        out.append(cls(connection=connection, limits=limits, scopes=scopes))
    return out
