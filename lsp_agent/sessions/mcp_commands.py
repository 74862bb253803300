"""MCP prompts in a session's command registry, kept in step with the servers.

:func:`watch_mcp_prompts` registers the current ``/mcp__server__prompt`` commands of the
session's MCP service and listens to the service: when a server starts, stops or announces
``prompts/list_changed``, the commands are registered or removed and the client gets a new
``available_commands_update``. The listener holds the session weakly and drops itself once
the session has ended.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

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


def sync_mcp_prompts(session: Session) -> bool:
    """Register the MCP prompt commands the session's service offers now and remove those it
    no longer offers; ``True`` if anything changed."""
    wanted = {p.name: p for p in session.mcp.prompt_commands()} if session.mcp else {}
    registry = session.commands
    changed = False
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
