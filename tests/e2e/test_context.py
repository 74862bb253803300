"""Slash commands and compaction over LSP, with both client presets."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcException

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import expecting, reply, scenario

from .conftest import Launch


async def test_commands_advertised_and_compact_over_lsp(launch: Launch) -> None:
    editor = await launch(
        scenario(
            reply("Hello."),
            reply("Goal: greet.", expect=expecting(last_user_contains="CONTEXT CHECKPOINT")),
            reply("Still here.", expect=expecting(last_user_contains="and now")),
        )
    )
    created = await editor.request(methods.SESSION_NEW, {})
    session = created["sessionId"]
    names = [c["name"] for c in created["availableCommands"]]
    assert names == ["compact", "context", "clear", "cost", "memory", "rewind", "init"]

    await editor.prompt(session, "Say hello. Always answer in English.")
    result = await editor.prompt(session, "/compact greetings")
    assert result["stopReason"] == "end_turn"
    compacted = await editor.wait_for_update(
        lambda u: u["update"]["sessionUpdate"] == "context_compacted"
    )
    update = compacted["update"]
    assert update["trigger"] == "manual" and update["promptsKept"] == 1
    assert update["summary"] == "Goal: greet."
    assert update["tokensBefore"] > 0 and update["tokensAfter"] > 0
    text = "".join(
        u["update"]["content"]["text"]
        for u in editor.updates
        if u["update"]["sessionUpdate"] == "agent_message_chunk"
    )
    assert "Compacted:" in text

    result = await editor.prompt(session, "and now")
    assert result["stopReason"] == "end_turn"
    # The compacted history: the memory start block, then the summary with the prompts.
    first = "".join(b["text"] for b in editor.scripted.requests[-1]["messages"][0]["content"])
    assert "Always answer in English." in first and "<compact-summary>" in first

    with pytest.raises(JsonRpcException) as caught:
        await editor.prompt(session, "/frobnicate")
    assert "/frobnicate" in caught.value.message and "/compact" in caught.value.message
    editor.scripted.assert_done()
