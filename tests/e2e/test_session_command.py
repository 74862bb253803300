"""``lspAgent/session/command`` over LSP: a slash command as a request of its own, answered with
the command's outcome; unknown sessions and commands are invalid params."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcException

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import ScriptedUsage, expecting, reply, scenario

from .conftest import Launch


async def test_session_command_answers_with_the_outcome(launch: Launch) -> None:
    editor = await launch(
        scenario(
            reply("Hello.", usage=ScriptedUsage(input_tokens=1_000, output_tokens=20)),
            reply("Goal: greet.", expect=expecting(last_user_contains="CONTEXT CHECKPOINT")),
            reply("Fresh.", expect=expecting(last_user_contains="after clear")),
        )
    )
    session = await editor.new_session()
    await editor.prompt(session, "Say hello.")

    cost = await editor.request(methods.SESSION_COMMAND, {"sessionId": session, "command": "cost"})
    assert cost["isError"] is False and cost["stopReason"] == "end_turn"
    assert "Tokens used in this session" in cost["text"] and "1,000" in cost["text"]
    # claude-test is not in the model table: priced as the default model ($5 / $25 per MTok).
    assert "Estimated cost: $0.0055" in cost["text"]
    assert cost["usage"]["inputTokens"] == 0  # the command itself asked the model nothing

    context = await editor.request(
        methods.SESSION_COMMAND, {"sessionId": session, "command": "/context"}
    )
    assert context["isError"] is False and "**Context:**" in context["text"]

    compact = await editor.request(
        methods.SESSION_COMMAND, {"sessionId": session, "command": "compact", "args": "greetings"}
    )
    assert compact["isError"] is False and compact["text"].startswith("Compacted:")
    summary_request = editor.scripted.requests[1]
    assert "greetings" in str(summary_request["messages"][-1]["content"])

    cleared = await editor.request(
        methods.SESSION_COMMAND, {"sessionId": session, "command": "clear"}
    )
    assert "Conversation cleared" in cleared["text"]
    await editor.prompt(session, "after clear")
    assert len(editor.scripted.requests[-1]["messages"]) == 1  # nothing before the clear
    editor.scripted.assert_done()


async def test_session_command_errors(launch: Launch) -> None:
    editor = await launch(scenario())
    session = await editor.new_session()
    with pytest.raises(JsonRpcException) as unknown:
        await editor.request(methods.SESSION_COMMAND, {"sessionId": session, "command": "nope"})
    assert unknown.value.code == -32602
    assert "/nope" in unknown.value.message and "/compact" in unknown.value.message
    with pytest.raises(JsonRpcException) as nobody:
        await editor.request(methods.SESSION_COMMAND, {"sessionId": "x", "command": "cost"})
    assert nobody.value.code == -32602 and "unknown session" in nobody.value.message
    with pytest.raises(JsonRpcException) as missing:
        await editor.request(methods.SESSION_COMMAND, {"sessionId": session})
    assert missing.value.code == -32602
