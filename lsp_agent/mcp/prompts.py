"""MCP prompts as slash commands: ``/mcp__<server>__<prompt> args`` (Claude Code's form).

Every prompt a ready server lists becomes a :class:`PromptCommand`; names follow the tool
naming rules (:func:`~lsp_agent.mcp.names.tool_names`), so they are valid command names and
match what a Claude Code user types. The arguments typed after the name are split like a
shell line (quotes group words) and given to the prompt's arguments in their declared order;
words beyond the last argument join it. A missing required argument is an error naming the
usage. The server's answer (its messages) becomes the text of the user's prompt: text
contents as they are, embedded text resources in ``<resource>`` blocks, other contents
described.

Imports the SDK's types (through :mod:`.connection`): reached only once a server runs.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from lsp_agent.mcp.connection import CallFailedError, ServerConnection
from lsp_agent.mcp.limits import McpLimits
from lsp_agent.mcp.names import tool_names
from lsp_agent.mcp.results import cap_text

MAX_DESCRIPTION_CHARS = 300
"""Longest prompt description shown in a client's command list (characters)."""


class PromptArgumentsError(ValueError):
    """The typed arguments do not fit the prompt; the message shows its usage."""


@dataclass(frozen=True, kw_only=True)
class PromptCommand:
    """One server prompt as a slash command: ``name`` (without ``/``), the ``server`` and
    ``prompt`` it gets, ``arguments`` as ``(name, required)`` pairs in declared order."""

    name: str
    server: str
    prompt: str
    description: str
    arguments: tuple[tuple[str, bool], ...]

    @property
    def hint(self) -> str:
        """The arguments for a client's input hint: ``path [focus]`` (``""``: none)."""
        return " ".join(n if required else f"[{n}]" for n, required in self.arguments)


def prompt_commands(connections: Mapping[str, ServerConnection]) -> list[PromptCommand]:
    """The commands of the prompts of every ready server, sorted by name."""
    out: list[PromptCommand] = []
    for server, connection in sorted(connections.items()):
        if connection.state != "ready" or not connection.prompts:
            continue
        listed = {p.name: p for p in connection.prompts}
        for remote, name in tool_names(server, listed).items():
            prompt = listed[remote]
            text = prompt.description or prompt.title or remote
            out.append(
                PromptCommand(
                    name=name,
                    server=server,
                    prompt=remote,
                    description=f"{text[:MAX_DESCRIPTION_CHARS]} (MCP)",
                    arguments=tuple((a.name, bool(a.required)) for a in prompt.arguments or ()),
                )
            )
    return sorted(out, key=lambda c: c.name)


def bind_arguments(command: PromptCommand, text: str) -> dict[str, str]:
    """``text`` (what follows the command name) as the prompt's arguments. Raises
    :class:`PromptArgumentsError` when a required argument is missing or the quotes do not
    close."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise PromptArgumentsError(f"cannot split the arguments: {exc}") from None
    names = [n for n, _ in command.arguments]
    if names and len(words) > len(names):
        words = [*words[: len(names) - 1], " ".join(words[len(names) - 1 :])]
    elif not names and words:
        raise PromptArgumentsError(f"/{command.name} takes no arguments")
    values = dict(zip(names, words, strict=False))
    missing = [n for n, required in command.arguments if required and n not in values]
    if missing:
        usage = f"/{command.name} {command.hint}".rstrip()
        raise PromptArgumentsError(f"missing {', '.join(missing)}. Usage: {usage}")
    return values


def _content_text(content: Any) -> str:
    kind = getattr(content, "type", None)
    if kind == "text":
        return str(content.text)
    if kind == "resource":
        resource = content.resource
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return f'<resource uri="{resource.uri}">\n{text}\n</resource>'
        return f"[binary resource {resource.uri}, not shown]"
    if kind == "resource_link":
        return f"[resource link {content.name}: {content.uri}]"
    return f"[{kind} content, not shown]"


def prompt_text(result: types.GetPromptResult) -> str:
    """The messages of a ``prompts/get`` answer as one prompt text (assistant messages are
    marked as such)."""
    parts = []
    for message in result.messages:
        text = _content_text(message.content)
        parts.append(text if message.role == "user" else f"[assistant]\n{text}")
    return "\n\n".join(parts)


async def get_prompt(
    connection: ServerConnection, command: PromptCommand, args: str, *, limits: McpLimits
) -> str:
    """The text of ``command``'s prompt with ``args`` bound, capped like a tool result.
    Raises :class:`PromptArgumentsError` or :class:`CallFailedError`."""
    arguments = bind_arguments(command, args)
    result = await connection.request(
        f"prompt {command.prompt}",
        lambda client: client.get_prompt(command.prompt, arguments or None),
    )
    text = prompt_text(result)
    if not text.strip():
        raise CallFailedError(f"MCP server {command.server!r}: prompt {command.prompt} is empty")
    return cap_text(text, limits=limits, tool=command.name)
