"""MCP in a session's command registry, kept in step with the servers.

:func:`watch_mcp_prompts` registers the current ``/mcp__server__prompt`` commands of the
session's MCP service and listens to the service: when a server starts, stops or announces
``prompts/list_changed``, the commands are registered or removed and the client gets a new
``available_commands_update``. The listener holds the session weakly and drops itself once
the session has ended.

While the project has any MCP server configured, ``/mcp`` (Claude Code's name) lists them
(state, scope, tools, why one does not run) and takes ``enable NAME``, ``disable NAME`` (for
the project, persisted: :meth:`McpService.set_enabled`) and ``reconnect NAME``.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from lsp_agent.context.commands import CommandOutcome, SlashCommand
from lsp_agent.mcp.names import PREFIX
from lsp_agent.mcp.service import McpError

if TYPE_CHECKING:
    from lsp_agent.mcp.prompts import PromptCommand
    from lsp_agent.sessions.session import Session


def _command(prompt: PromptCommand) -> SlashCommand[Session]:
    async def run(session: Session, args: str) -> CommandOutcome:
        if session.mcp is None:
            return CommandOutcome(text="No MCP servers are configured.", is_error=True)
        try:
            text = await session.mcp.run_prompt(prompt, args)
        except McpError as exc:
            return CommandOutcome(text=f"/{prompt.name}: {exc}", is_error=True)
        return CommandOutcome(text="", prompt=text)

    return SlashCommand(name=prompt.name, description=prompt.description, run=run, hint=prompt.hint)


MCP_COMMAND = "mcp"
"""The name of the command listing and switching the servers (Claude Code's ``/mcp``)."""

_USAGE = "Usage: `/mcp` (list), `/mcp enable NAME`, `/mcp disable NAME`, `/mcp reconnect NAME`"


def _listing(statuses: list[dict[str, Any]]) -> str:
    """The servers as a Markdown list: name, scope, transport, state, tools, why not."""
    lines = ["MCP servers of this project:", ""]
    for status in statuses:
        tools = (
            f" · {status['tools']} tool{'' if status['tools'] == 1 else 's'}"
            if status["state"] == "ready"
            else ""
        )
        line = (
            f"- **{status['name']}** ({status['scope']}, {status['transport']}): "
            f"{status['state'].replace('_', ' ')}{tools}"
        )
        if status.get("error"):
            line += f" — {str(status['error']).splitlines()[0]}"
        lines.append(line)
    return "\n".join(lines)


async def _mcp(session: Session, args: str) -> CommandOutcome:
    service = session.mcp
    if service is None:
        return CommandOutcome(text="No MCP servers are configured.", is_error=True)
    words = args.split()
    if not words or words == ["list"]:
        await service.refresh()
        return CommandOutcome(text=_listing(service.statuses()))
    action = words[0]
    if len(words) != 2 or action not in ("enable", "disable", "reconnect"):
        return CommandOutcome(text=_USAGE, is_error=True)
    name = words[1]
    try:
        if action == "reconnect":
            service.reconnect(name)
            return CommandOutcome(text=f"MCP server `{name}` is reconnecting.")
        await service.set_enabled(name, enabled=action == "enable")
    except McpError as exc:
        return CommandOutcome(text=f"/mcp {action}: {exc}", is_error=True)
    if action == "disable":
        return CommandOutcome(
            text=f"MCP server `{name}` is turned off for this project (its tools leave the "
            f"next turn; `/mcp enable {name}` turns it on again)."
        )
    planned = service.plan.get(name)
    state = "" if planned is None or planned.status == "enabled" else f" It is {planned.status}."
    return CommandOutcome(text=f"MCP server `{name}` is turned on for this project.{state}")


def _mcp_command() -> SlashCommand[Session]:
    return SlashCommand(
        name=MCP_COMMAND,
        description="List the MCP servers; enable, disable or reconnect one",
        run=_mcp,
        hint="[enable|disable|reconnect NAME]",
    )


def sync_mcp_prompts(session: Session) -> bool:
    """Register the MCP prompt commands the session's service offers now and remove those it
    no longer offers, and ``/mcp`` while any server is configured; ``True`` if anything
    changed."""
    wanted = {p.name: p for p in session.mcp.prompt_commands()} if session.mcp else {}
    registry = session.commands
    changed = False
    configured = session.mcp is not None and bool(session.mcp.plan.servers)
    if configured and MCP_COMMAND not in registry.names():
        registry.register(_mcp_command())
        changed = True
    elif (
        not configured
        and MCP_COMMAND in registry.names()
        and registry.get(MCP_COMMAND).run is _mcp  # ours, not a custom command of that name
    ):
        changed |= registry.unregister(MCP_COMMAND)
    for name in registry.names():
        if name.startswith(PREFIX) and name not in wanted:
            changed |= registry.unregister(name)
    for name, prompt in wanted.items():
        current = registry.names()
        if name in current:
            known = registry.get(name)
            if (known.description, known.hint) == (prompt.description, prompt.hint):
                continue
            registry.unregister(name)
        registry.register(_command(prompt))
        changed = True
    return changed


def watch_mcp_prompts(session: Session) -> None:
    """Sync now and after every change of the session's MCP service (see the module
    docstring)."""
    if session.mcp is None:
        return
    sync_mcp_prompts(session)
    ref = weakref.ref(session)

    def on_change() -> bool:
        alive = ref()
        if alive is None or alive.ended:
            return False
        if sync_mcp_prompts(alive):
            alive.advertise_commands()
        return True

    session.mcp.listeners.append(on_change)
