"""A turn's tool set with MCP tools whose server may stop during the turn.

A turn offers the same tools to each of its model requests (byte-stable for prompt caching).
When the user turns a server off in the middle of a turn, its connection closes for good
(:attr:`.CallScopes.why`); :class:`TurnTools` then leaves that server's tools out of
the *next* request's specs, so the model is not offered tools that can only fail. The cached
prefix changes at that request and not before; until a server stops, the specs are the ones
built once for the set.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lsp_agent.mcp.tool import McpTool
from lsp_agent.model.types import ToolSpec
from lsp_agent.tools.base import Tool
from lsp_agent.tools.registry import ToolRegistry


class TurnTools(ToolRegistry):
    """See the module docstring. ``get`` still finds a stopped server's tool (a call the
    model made before it saw the change fails naming why)."""

    def __init__(self, *, tools: Iterable[Tool[Any, Any]]) -> None:
        super().__init__(tools=tools)
        self._mcp = [t for t in self if isinstance(t, McpTool)]
        self._gone: frozenset[str] = frozenset()
        self._live: tuple[ToolSpec, ...] | None = None

    def specs(self) -> tuple[ToolSpec, ...]:
        """The specs of :meth:`ToolRegistry.specs` without the tools of servers that
        stopped since the set was built (a scan of the MCP tools per request)."""
        gone = frozenset(t.name for t in self._mcp if t.scopes.why is not None)
        if not gone:
            return super().specs()
        if gone != self._gone or self._live is None:
            self._gone = gone
            self._live = tuple(s for s in super().specs() if s.name not in gone)
        return self._live
