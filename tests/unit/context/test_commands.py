"""Slash commands: parsing, registry, unknown names, advertisement."""

from __future__ import annotations

import pytest

from lsp_agent.context.commands import (
    CommandOutcome,
    CommandRegistry,
    Invocation,
    SlashCommand,
    UnknownCommandError,
    parse_invocation,
)


def test_parse() -> None:
    assert parse_invocation("/compact") == Invocation(name="compact", args="")
    assert parse_invocation("  /compact keep the API\nnotes  ") == Invocation(
        name="compact", args="keep the API\nnotes"
    )
    assert parse_invocation("/mcp__github__pr 12") == Invocation(name="mcp__github__pr", args="12")
    assert parse_invocation("/home/me/app.py is broken") is None
    assert parse_invocation("fix /compact") is None
    assert parse_invocation("/ compact") is None
    assert parse_invocation("/1abc") is None
    assert parse_invocation("") is None


async def _echo(target: list[str], args: str) -> CommandOutcome:
    target.append(args)
    return CommandOutcome(text=f"echo {args}")


def test_registry_rejects_bad_and_duplicate_names() -> None:
    reg: CommandRegistry[list[str]] = CommandRegistry()
    reg.register(SlashCommand(name="echo", description="Echo", run=_echo, hint="text"))
    with pytest.raises(ValueError):
        reg.register(SlashCommand(name="echo", description="again", run=_echo))
    with pytest.raises(ValueError):
        reg.register(SlashCommand(name="bad name", description="x", run=_echo))
    assert reg.names() == ("echo",)


async def test_dispatch_and_unknown_lists_what_exists() -> None:
    calls: list[str] = []
    reg = CommandRegistry([SlashCommand(name="echo", description="Echo", run=_echo)])
    out = await reg.dispatch(calls, Invocation(name="echo", args="hi"))
    assert out == CommandOutcome(text="echo hi") and calls == ["hi"]
    out = await reg.dispatch(calls, Invocation(name="nope", args=""))
    assert out.is_error and "/nope" in out.text and "/echo" in out.text
    with pytest.raises(UnknownCommandError):
        reg.get("nope")


def test_advertised_is_acp_available_commands() -> None:
    reg = CommandRegistry(
        [
            SlashCommand(name="compact", description="Compact", run=_echo, hint="focus"),
            SlashCommand(name="cost", description="Cost", run=_echo),
        ]
    )
    assert reg.advertised() == [
        {"name": "compact", "description": "Compact", "input": {"hint": "focus"}},
        {"name": "cost", "description": "Cost", "input": None},
    ]
