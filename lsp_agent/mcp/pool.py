"""The MCP servers of one project, shared by every session of the process.

:class:`McpPool` takes an :class:`~lsp_agent.mcp.sources.McpPlan`, starts every enabled
server at once (in parallel, in the background), and gives each turn the tools of the servers
that are ready (:meth:`McpPool.tools`): a turn waits for servers still starting at most
``first_turn_wait_s``, so a slow server delays nobody for long and its tools join at the next
turn. :meth:`McpPool.apply` adopts a new plan (configuration edited, a server approved):
unchanged servers keep running, changed ones restart, removed ones stop.

Imports the SDK (through :mod:`.connection`): create a pool only when a server is configured.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lsp_agent.mcp.call_scopes import CallScopes
from lsp_agent.mcp.connection import ServerConnection, ServerStatus
from lsp_agent.mcp.elicitation import AskFn, AskUrlFn
from lsp_agent.mcp.limits import McpLimits
from lsp_agent.mcp.login_path import LoginPath
from lsp_agent.mcp.resource_tools import resource_tools
from lsp_agent.mcp.sources import McpPlan
from lsp_agent.mcp.tool import server_tools
from lsp_agent.tools.base import Tool

log = logging.getLogger(__name__)


class McpPool:
    """See the module docstring. ``on_change`` is called with the pool after any server's
    state or tool list changed (for status notifications)."""

    def __init__(
        self,
        *,
        plan: McpPlan,
        limits: McpLimits,
        project: Path,
        environ: Mapping[str, str],
        roots: Callable[[], Sequence[Path]] = tuple,
        on_change: Callable[[McpPool], None] = lambda _p: None,
        ask: AskFn | None = None,
        ask_url: AskUrlFn | None = None,
        home: Path | None = None,
    ) -> None:
        self.ask = ask
        self.ask_url = ask_url
        self.home = home
        """The user's home directory, for HTTP servers' OAuth credentials (``None``: none)."""
        self.plan = plan
        self.limits = limits
        self.project = project
        self.environ = environ
        self.roots = roots
        self.on_change = on_change
        self.connections: dict[str, ServerConnection] = {}
        self._scopes: dict[str, CallScopes] = {}
        """The tool calls in flight per running server (:mod:`.call_scopes`)."""
        self.login_path = LoginPath(environ=environ)
        """The login shell's PATH, asked once for every server of the pool that needs it."""
        self._started = False

    def _connection(self, name: str) -> ServerConnection:
        planned = self.plan.get(name)
        assert planned is not None
        return ServerConnection(
            spec=planned.spec,
            limits=self.limits,
            project=self.project,
            environ=self.environ,
            roots=self.roots,
            on_change=lambda _c: self._changed(),
            login_path=self.login_path,
            ask=self.ask,
            ask_url=self.ask_url,
            home=self.home,
        )

    def _changed(self) -> None:
        try:
            self.on_change(self)
        except Exception:
            log.exception("MCP pool listener failed")

    def start(self) -> None:
        """Start every enabled server in the background (idempotent; needs a running loop)."""
        self._started = True
        for spec in self.plan.enabled():
            connection = self.connections.get(spec.name)
            if connection is None:
                connection = self.connections[spec.name] = self._connection(spec.name)
            connection.start()

    async def apply(self, plan: McpPlan) -> None:
        """Adopt ``plan``: stop servers no longer enabled or whose definition changed, start
        the new ones."""
        old = self.connections
        wanted = {s.name: s for s in plan.enabled()}
        self.plan = plan
        stopping = [c for name, c in old.items() if name not in wanted or wanted[name] != c.spec]
        for connection in stopping:
            del self.connections[connection.spec.name]
        for connection in stopping:  # calls in flight end first, saying why
            scopes = self._scopes.pop(connection.spec.name, None)
            if scopes is not None:
                scopes.stop(_why_stopped(plan, connection.spec.name))
        await asyncio.gather(*(c.aclose() for c in stopping), return_exceptions=True)
        if self._started:
            self.start()
        self._changed()

    async def tools(self, *, wait_s: float | None = None) -> list[Tool[Any, Any]]:
        """Tools of the ready servers, sorted by model-facing name (stable for prompt
        caching). Waits up to ``wait_s`` (default ``first_turn_wait_s``) seconds for servers
        still starting."""
        if not self._started:
            self.start()
        wait = self.limits.first_turn_wait_s if wait_s is None else wait_s
        starting = [c for c in self.connections.values() if c.state in ("idle", "starting")]
        if starting and wait > 0:
            await asyncio.gather(*(c.wait_settled(wait) for c in starting))
        out: list[Tool[Any, Any]] = []
        taken: set[str] = set()
        for name in sorted(self.connections):
            connection = self.connections[name]
            if connection.state != "ready":
                continue
            scopes = self._scopes.setdefault(name, CallScopes(server=name))
            for tool in server_tools(connection, self.limits, scopes):
                if tool.name in taken:  # two server names that normalise alike
                    log.warning("MCP tool %s of %s hidden: the name is taken", tool.name, name)
                    continue
                taken.add(tool.name)
                out.append(tool)
        out.extend(resource_tools(self.connections, self.limits))
        return sorted(out, key=lambda t: t.name)

    def instructions(self) -> dict[str, str]:
        """Instructions of the ready servers that sent any, by server name."""
        return {
            name: c.instructions
            for name, c in sorted(self.connections.items())
            if c.state == "ready" and c.instructions
        }

    def statuses(self) -> list[ServerStatus]:
        """Every configured server's status, in plan order (servers that do not start show
        why: needs approval, disabled, denied, untrusted, invalid)."""
        out = []
        for planned in self.plan.servers:
            connection = self.connections.get(planned.spec.name)
            if connection is not None:
                out.append(connection.status())
                continue
            spec = planned.spec
            out.append(
                ServerStatus(
                    name=spec.name,
                    scope=spec.scope,
                    transport=spec.transport,
                    state=planned.status if planned.status != "enabled" else "idle",
                    error=planned.reason or None,
                    description=spec.describe(),
                )
            )
        return out

    def reconnect(self, name: str) -> bool:
        """Restart server ``name`` now; ``False`` if it is not running."""
        connection = self.connections.get(name)
        if connection is None:
            return False
        connection.reconnect()
        return True

    async def aclose(self) -> None:
        """Stop every server (bounded)."""
        connections = list(self.connections.values())
        self.connections.clear()
        await asyncio.gather(*(c.aclose() for c in connections), return_exceptions=True)


def _why_stopped(plan: McpPlan, name: str) -> str:
    """How a call in flight on server ``name``, stopped to adopt ``plan``, is told it ended."""
    planned = plan.get(name)
    if planned is None:
        return "removed from the configuration"
    if planned.status == "disabled":
        return "turned off"
    if planned.status == "enabled":
        return "restarted (its definition changed)"
    return f"stopped ({planned.status.replace('_', ' ')})"
