"""The built-in tool set, in the order offered to the model (byte-stable for prompt caching)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lsp_agent.tools.base import Tool


class ToolRegistry:
    """Tools by name, in a fixed order. ``allowed`` (when given) filters by name."""

    def __init__(self, *, tools: Iterable[Tool[Any]]) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"duplicate tool name: {tool.name}")
            self._tools[tool.name] = tool

    def get(self, name: str) -> Tool[Any] | None:
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
