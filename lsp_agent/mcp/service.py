"""One project's MCP, door-neutral: its plan, its pool, approvals, status.

A door keeps one :class:`McpService` per project directory and hands it to that directory's
sessions (they take :meth:`McpService.tools` at the start of every turn). Building a service
reads the configuration only; the ``mcp`` SDK is imported, and servers started, only when
the plan enables at least one server — a user without MCP servers never loads it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.config.problems import SettingsProblem
from lsp_agent.mcp.approvals import approvals_path, record_approval
from lsp_agent.mcp.elicitation import AskFn, AskUrlFn
from lsp_agent.mcp.limits import McpLimits
from lsp_agent.mcp.mentions import Mention, parse_mentions, resource_block
from lsp_agent.mcp.sources import McpPlan, McpSources, plan_servers
from lsp_agent.model.types import Message, TextBlock

if TYPE_CHECKING:
    from lsp_agent.mcp.pool import McpPool
    from lsp_agent.mcp.prompts import PromptCommand
    from lsp_agent.tools.base import Tool

log = logging.getLogger(__name__)

MAX_INSTRUCTIONS_CHARS = 2048
"""Longest instructions text of one server put in the system prompt (characters)."""


class McpError(Exception):
    """A request names an unknown server or cannot be done; the message says why."""


class McpService:
    """See the module docstring. ``on_change`` is called with the service after the plan or
    any server's state changed (for status notifications); event-loop only."""

    def __init__(
        self,
        *,
        sources: McpSources,
        limits: McpLimits,
        roots: Callable[[], Sequence[Path]] = tuple,
        on_change: Callable[[McpService], None] = lambda _s: None,
        ask: AskFn | None = None,
        ask_url: AskUrlFn | None = None,
    ) -> None:
        self.ask = ask
        """Asks the user what a server's elicitation wants (``None``: declined)."""
        self.ask_url = ask_url
        """Asks the user to open a URL-mode elicitation's page (``None``: declined)."""
        self.sources = sources
        self.limits = limits
        self.roots = roots
        self.on_change = on_change
        self.plan: McpPlan = plan_servers(sources)
        self.pool: McpPool | None = None
        self.listeners: list[Callable[[], bool]] = []
        """Called after every change, like ``on_change``; one that returns ``False`` is
        dropped (a closed session's)."""
        self._seen = self._signature()

    @property
    def problems(self) -> tuple[SettingsProblem, ...]:
        """Problems of every MCP configuration source (for diagnostics)."""
        return self.plan.problems

    def _ensure_pool(self) -> McpPool | None:
        if self.pool is None and self.plan.enabled():
            from lsp_agent.mcp.pool import McpPool

            self.pool = McpPool(
                plan=self.plan,
                limits=self.limits,
                project=self.sources.cwd,
                environ=self.sources.environ,
                roots=self.roots,
                on_change=lambda _p: self._changed(),
                ask=self.ask,
                ask_url=self.ask_url,
                home=self.sources.home,
            )
        return self.pool

    def _changed(self) -> None:
        try:
            self.on_change(self)
        except Exception:
            log.exception("MCP status listener failed")
        for listener in list(self.listeners):
            try:
                keep = listener()
            except Exception:
                log.exception("MCP change listener failed")
                keep = False
            if not keep and listener in self.listeners:
                self.listeners.remove(listener)

    def prompt_commands(self) -> list[PromptCommand]:
        """The prompts of the ready servers as slash commands (:mod:`.prompts`), sorted."""
        if self.pool is None:
            return []
        from lsp_agent.mcp.prompts import prompt_commands

        return prompt_commands(self.pool.connections)

    async def run_prompt(self, command: PromptCommand, args: str) -> str:
        """The text of ``command``'s prompt with ``args`` (what the user typed after the
        name). Raises :class:`McpError` with a message for the user when the server is gone,
        the arguments do not fit, or the server fails."""
        from lsp_agent.mcp.connection import CallFailedError
        from lsp_agent.mcp.prompts import PromptArgumentsError, get_prompt

        connection = self.pool.connections.get(command.server) if self.pool else None
        if connection is None:
            raise McpError(f"MCP server {command.server!r} is not running")
        try:
            return await get_prompt(connection, command, args, limits=self.limits)
        except (CallFailedError, PromptArgumentsError) as exc:
            raise McpError(str(exc)) from None

    def start(self) -> None:
        """Start the enabled servers in the background (needs a running event loop)."""
        pool = self._ensure_pool()
        if pool is not None:
            pool.start()

    async def tools(self, *, wait_s: float | None = None) -> list[Tool[Any, Any]]:
        """Tools of the ready servers for the next turn (see :meth:`McpPool.tools`), after
        reading the configuration again (:meth:`refresh`)."""
        await self.refresh()
        pool = self._ensure_pool()
        return [] if pool is None else await pool.tools(wait_s=wait_s)

    def instructions(self) -> str | None:
        """The ready servers' instructions as one system-prompt block, each capped."""
        if self.pool is None:
            return None
        parts = [
            f"## {name}\n{text[:MAX_INSTRUCTIONS_CHARS]}"
            for name, text in self.pool.instructions().items()
        ]
        if not parts:
            return None
        return "# MCP server instructions\n\n" + "\n\n".join(parts)

    async def with_resources(self, message: Message) -> Message:
        """``message`` (a prompt) with the contents of the resources its ``@server:uri``
        mentions name appended as ``<mcp-resource>`` blocks (:mod:`.mentions`); unchanged when
        it mentions none. A resource that cannot be read becomes a block naming the error.
        Never raises."""
        mentions = parse_mentions(message.text(), {s.name for s in self.plan.enabled()})
        pool = self._ensure_pool() if mentions else None
        if pool is None:
            return message
        from lsp_agent.mcp.connection import CallFailedError
        from lsp_agent.mcp.resources import read_resource_text

        pool.start()  # idempotent: the first prompt may come before the servers started

        async def block(mention: Mention) -> str:
            connection = pool.connections.get(mention.server)
            try:
                if connection is None:
                    raise CallFailedError(f"MCP server {mention.server!r} is not running")
                if connection.state in ("idle", "starting"):
                    await connection.wait_settled(self.limits.first_turn_wait_s)
                text = await read_resource_text(connection, mention.uri, limits=self.limits)
            except CallFailedError as exc:
                return resource_block(mention, error=str(exc))
            except Exception as exc:
                log.exception("reading MCP resource %s failed", mention.uri)
                return resource_block(mention, error=f"{type(exc).__name__}: {exc}")
            return resource_block(mention, text=text)

        blocks = await asyncio.gather(*(block(m) for m in mentions))
        return message.model_copy(
            update={"content": (*message.content, TextBlock(text="\n\n".join(blocks)))}
        )

    async def complete_resources(self, query: str) -> list[dict[str, Any]]:
        """Resources of the ready servers matching ``query``, the text after ``@`` of a
        mention being typed (:func:`lsp_agent.mcp.resource_completion.complete_resources`);
        none before any server runs. Never waits for a server to start."""
        if self.pool is None:
            return []
        from lsp_agent.mcp.resource_completion import complete_resources

        return await complete_resources(self.pool.connections, query)

    def statuses(self) -> list[dict[str, Any]]:
        """Every configured server as plain data: ``name``, ``scope``, ``transport``,
        ``state`` (``idle``, ``starting``, ``ready``, ``failed``, ``needs_login``, ``stopped``,
        ``needs_approval``, ``disabled``, ``denied``, ``untrusted``, ``invalid``), ``error``,
        ``tools`` (count), ``description``, ``loggedIn`` (an OAuth token is held)."""
        if self.pool is not None:
            return [_wire(dataclasses.asdict(s)) for s in self.pool.statuses()]
        from lsp_agent.mcp.connection_status import planned_statuses

        return planned_statuses(self.plan)

    def _signature(self) -> tuple[tuple[str, int, int] | None, ...]:
        """``(path, mtime ns, size)`` of every file the plan depends on (``None``: absent)."""
        paths = [
            *self.plan.files,
            *self.sources.settings_files.values(),
            approvals_path(self.sources.home),
        ]
        out: list[tuple[str, int, int] | None] = []
        for path in paths:
            try:
                st = path.stat()
            except OSError:
                out.append(None)
            else:
                out.append((str(path), st.st_mtime_ns, st.st_size))
        return tuple(out)

    async def refresh(self) -> None:
        """Read the configuration again if a file it comes from changed, and adopt it if the
        plan changed (an edited ``.mcp.json`` takes effect at the next turn; an unchanged set
        of files costs a few ``stat`` calls)."""
        signature = self._signature()
        if signature == self._seen:
            return
        self._seen = signature
        plan = plan_servers(self.sources)
        if plan != self.plan:
            await self.reload()

    async def reload(self, sources: McpSources | None = None) -> None:
        """Read the configuration again (a file changed, trust changed) and adopt it."""
        if sources is not None:
            self.sources = sources
        self.plan = plan_servers(self.sources)
        self._seen = self._signature()
        if self.pool is not None:
            await self.pool.apply(self.plan)
        elif self.plan.enabled():
            self.start()
        self._changed()

    async def approve(self, name: str, *, approved: bool) -> None:
        """Record the user's answer for project server ``name`` (pinned to its current
        definition) and adopt it. Raises :class:`McpError` for a server that is not a project
        server needing an answer, and ``OSError`` if the answer cannot be saved."""
        planned = self.plan.get(name)
        if planned is None:
            raise McpError(f"no MCP server named {name!r} is configured")
        if planned.spec.scope != "project":
            raise McpError(f"MCP server {name!r} is not a project (.mcp.json) server")
        if not self.sources.trusted:
            raise McpError("the workspace is not trusted: trust it before approving its servers")
        record_approval(
            self.sources.home,
            self.sources.cwd,
            server=name,
            digest=planned.spec.digest,
            approved=approved,
        )
        await self.reload()

    async def set_enabled(self, name: str, *, enabled: bool) -> None:
        """Turn server ``name`` (any scope) on or off for this project, persisted in the
        user's ``~/.claude.json`` (:mod:`.enablement`, Claude Code's lists), and adopt it: a
        server turned off stops at once (calls in flight are cancelled and fail naming it;
        its tools are gone from the next model request), one turned on starts (a project
        server still needs trust and approval). Raises :class:`McpError` for an unknown
        server, one the managed settings deny (turning it on), a file that cannot be saved,
        or a server that stays off for another reason (named)."""
        from lsp_agent.mcp.enablement import EnablementError, set_server_enabled

        planned = self.plan.get(name)
        if planned is None:
            known = ", ".join(p.spec.name for p in self.plan.servers) or "none"
            raise McpError(f"no MCP server named {name!r} is configured (servers: {known})")
        if enabled and planned.status == "denied":
            raise McpError(f"MCP server {name!r} cannot be turned on: {planned.reason}")
        try:
            await asyncio.to_thread(
                set_server_enabled,
                self.sources.home,
                self.sources.cwd,
                server=name,
                project_scope=planned.spec.scope == "project",
                enabled=enabled,
            )
        except EnablementError as exc:
            raise McpError(str(exc)) from None
        await self.reload()
        after = self.plan.get(name)
        if enabled and after is not None and after.status == "disabled":
            raise McpError(f"MCP server {name!r} is still off: {after.reason}")

    def reconnect(self, name: str) -> None:
        """Restart server ``name``. Raises :class:`McpError` if it is not running."""
        if self.pool is None or not self.pool.reconnect(name):
            raise McpError(f"MCP server {name!r} is not running (see its state)")

    async def login(
        self, name: str, open_url: Callable[[str], Awaitable[None]], *, timeout_s: float
    ) -> None:
        """Log in to HTTP server ``name`` with OAuth: ``open_url`` shows the authorisation URL
        (the editor opens the browser); waits at most ``timeout_s`` seconds for the browser's
        redirect, stores the tokens (:mod:`.oauth_store`) and reconnects the server. Raises
        :class:`McpError` naming what failed (unknown or stopped server, not OAuth, refused,
        wrong ``state``, timed out)."""
        connection = self.pool.connections.get(name) if self.pool else None
        if connection is None:
            raise McpError(f"MCP server {name!r} is not running (see its state)")
        from lsp_agent.mcp.oauth import LoginError

        try:
            await connection.login(open_url, timeout_s=timeout_s)
        except LoginError as exc:
            raise McpError(f"logging in to MCP server {name!r} failed: {exc}") from None

    async def logout(self, name: str) -> bool:
        """Log out of HTTP server ``name``: its tokens are revoked where the server offers
        that (best effort, bounded) and its OAuth credentials forgotten; it reconnects and then
        needs a login. Returns whether the server revoked the tokens. Raises
        :class:`McpError` if it is not running or the credentials cannot be removed."""
        connection = self.pool.connections.get(name) if self.pool else None
        if connection is None:
            raise McpError(f"MCP server {name!r} is not running (see its state)")
        try:
            return await connection.logout()
        except OSError as exc:
            raise McpError(f"the OAuth credentials could not be removed: {exc}") from None

    async def aclose(self) -> None:
        """Stop every server (bounded)."""
        if self.pool is not None:
            await self.pool.aclose()


def _wire(status: dict[str, Any]) -> dict[str, Any]:
    """A status with the protocol's field names (``logged_in`` is sent as ``loggedIn``)."""
    status["loggedIn"] = status.pop("logged_in")
    return status
