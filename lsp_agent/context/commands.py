"""Slash commands: one registry, one parser; the session dispatches before the model.

A prompt whose text starts with ``/name`` (a letter, then letters, digits, ``_``, ``-``,
``.`` or ``:``; followed by white space or the end) is a command invocation: ``/compact keep
the API notes`` runs ``compact`` with the argument text ``keep the API notes``. Text such as
``/home/me/app.py is broken`` is not a command (the name is followed by ``/``), so paths can
still start a prompt. An unknown name is an error that lists the commands that exist.

The registry is generic in what a command acts on (the session), so the core registers the
built-ins (``/compact``, ``/context``, ``/clear``, ``/cost``) and later features add theirs
without this module knowing sessions. :meth:`CommandRegistry.advertised` gives ACP's
``AvailableCommand`` list (``name``, ``description``, ``input.hint``), which the doors send as
``available_commands_update`` so clients can complete ``/``.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_INVOCATION = re.compile(r"\A\s*/([A-Za-z][A-Za-z0-9_.:-]*)(?=\s|\Z)(.*)\Z", re.DOTALL)
_NAME = re.compile(r"\A[A-Za-z][A-Za-z0-9_.:-]*\Z")


@dataclass(frozen=True, kw_only=True)
class Invocation:
    """A parsed ``/name args`` prompt: ``name`` without the slash, ``args`` stripped."""

    name: str
    args: str


def parse_invocation(text: str) -> Invocation | None:
    """The command invocation ``text`` is, or ``None`` when it is an ordinary prompt."""
    match = _INVOCATION.match(text)
    if match is None:
        return None
    return Invocation(name=match.group(1), args=match.group(2).strip())


@dataclass(frozen=True, kw_only=True)
class CommandOutcome:
    """What a command did: ``text`` to show the user (Markdown) and whether it failed.
    ``prompt``, when set, is sent to the model as the user's prompt instead (``/init``)."""

    text: str
    is_error: bool = False
    prompt: str | None = None


@dataclass(frozen=True, kw_only=True)
class SlashCommand(Generic[T]):
    """One command: ``run(target, args)`` does it. ``hint`` describes the argument (``""``:
    takes none)."""

    name: str
    description: str
    run: Callable[[T, str], Awaitable[CommandOutcome]]
    hint: str = ""


class UnknownCommandError(LookupError):
    """A prompt named a command that does not exist; the message lists those that do."""


class CommandRegistry(Generic[T]):
    """The commands a session offers, in registration order (names are case-sensitive)."""

    def __init__(self, commands: Iterable[SlashCommand[T]] = ()) -> None:
        self._commands: dict[str, SlashCommand[T]] = {}
        for command in commands:
            self.register(command)

    def register(self, command: SlashCommand[T]) -> None:
        """Add ``command``. Raises ``ValueError`` for a malformed or duplicate name."""
        if not _NAME.match(command.name):
            raise ValueError(f"invalid slash command name {command.name!r}")
        if command.name in self._commands:
            raise ValueError(f"slash command /{command.name} is already registered")
        self._commands[command.name] = command

    def unregister(self, name: str) -> bool:
        """Remove command ``name`` (commands that come and go: MCP prompts); ``False`` if
        there was none."""
        return self._commands.pop(name, None) is not None

    def names(self) -> tuple[str, ...]:
        """The registered names, in order."""
        return tuple(self._commands)

    def get(self, name: str) -> SlashCommand[T]:
        """The command called ``name``; raises :class:`UnknownCommandError` listing the
        available ones otherwise."""
        found = self._commands.get(name)
        if found is None:
            known = ", ".join(f"/{n}" for n in self._commands) or "none"
            raise UnknownCommandError(f"Unknown command /{name}. Available commands: {known}")
        return found

    async def dispatch(self, target: T, invocation: Invocation) -> CommandOutcome:
        """Run ``invocation`` on ``target``; an unknown name is an error outcome."""
        try:
            command = self.get(invocation.name)
        except UnknownCommandError as exc:
            return CommandOutcome(text=str(exc), is_error=True)
        return await command.run(target, invocation.args)

    def advertised(self) -> list[dict[str, Any]]:
        """ACP ``AvailableCommand`` objects (JSON-ready, camelCase) for every command."""
        return [
            {
                "name": c.name,
                "description": c.description,
                "input": {"hint": c.hint} if c.hint else None,
            }
            for c in self._commands.values()
        ]
