"""The built-in tool set, in the order offered to the model (byte-stable for prompt caching)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lsp_agent.model.types import ToolSpec
from lsp_agent.tools.base import Tool


class ToolRegistry:
    """Tools by name, in a fixed order. ``allowed`` (when given) filters by name.

    A registry is one tool set and never changes; a different set (other tools allowed, MCP
    tools added) is a new registry, so the specs offered to the model are built once per set.
    """

    def __init__(self, *, tools: Iterable[Tool[Any, Any]]) -> None:
        self._tools: dict[str, Tool[Any, Any]] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"duplicate tool name: {tool.name}")
            self._tools[tool.name] = tool
        self._specs: tuple[ToolSpec, ...] | None = None

    def specs(self) -> tuple[ToolSpec, ...]:
        """The tools as offered to the model, in offer order: built on first use (a JSON
        schema per tool) and reused by every later request."""
        if self._specs is None:
            self._specs = tuple(tool.spec() for tool in self._tools.values())
        return self._specs

    def get(self, name: str) -> Tool[Any, Any] | None:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def names(self) -> tuple[str, ...]:
        """Tool names in offer order."""
        return tuple(self._tools)

    def __iter__(self) -> Any:
        return iter(self._tools.values())


def default_tools() -> ToolRegistry:
    """Read, Edit, Write, Glob, Grep, Bash (Claude Code's names and input shapes)."""
    from lsp_agent.tools.bash import BashTool
    from lsp_agent.tools.edit import EditTool
    from lsp_agent.tools.glob import GlobTool
    from lsp_agent.tools.grep import GrepTool
    from lsp_agent.tools.read import ReadTool
    from lsp_agent.tools.write import WriteTool

    return ToolRegistry(
        tools=[ReadTool(), EditTool(), WriteTool(), GlobTool(), GrepTool(), BashTool()]
    )
