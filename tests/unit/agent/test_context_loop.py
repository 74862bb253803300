"""Compaction, recovery and slash commands in real sessions: the real SDK against the scripted
Messages-API server, with a 20,000-token window so a few turns fill it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lsp_agent.config.store import SettingsStore
from lsp_agent.context.compaction import SUMMARY_HEADER, pairing_problems
from lsp_agent.context.start import START_OPEN, is_start_block, split_start
from lsp_agent.model.types import TextBlock, ToolResultBlock
from lsp_agent.protocol.events import (
    AgentMessageChunk,
    AvailableCommandsUpdate,
    ContextCompacted,
    UsageUpdate,
)
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.testing.scenario import (
    ScriptedUsage,
    error,
    expecting,
    reply,
    scenario,
    tool_use,
)

from .conftest import HarnessFactory

WINDOW = 20_000
MAX_TOKENS = 2000
# threshold = 20,000 - 2,000 - 5% of 20,000 = 17,000 tokens
FULL = ScriptedUsage(input_tokens=16_950, output_tokens=100)
SMALL = ScriptedUsage(input_tokens=1000, output_tokens=20)


def summary_step(text: str = "Goal: test. Pending: nothing.", **kw: object) -> object:
    return reply(text, expect=expecting(last_user_contains="CONTEXT CHECKPOINT", **kw))  # type: ignore[arg-type]


async def ask(h: object, text: str) -> object:
    return await h.session.prompt([PromptText(text=text)])  # type: ignore[attr-defined]


def compacted(h: object) -> list[ContextCompacted]:
    return [u for u in h.host.updates if isinstance(u, ContextCompacted)]  # type: ignore[attr-defined]


async def test_threshold_compacts_before_the_request_and_keeps_instructions(
    harness: HarnessFactory,
) -> None:
    h = await harness(
        scenario(
            reply("Noted.", usage=FULL),
            summary_step(),
            reply(
                "Continuing.",
                expect=expecting(last_user_contains="Now add tests."),
                usage=SMALL,
            ),
        ),
        context_window=WINDOW,
        max_tokens=MAX_TOKENS,
    )
    first = "Always indent with tabs. Never touch migrations/."
    await ask(h, first)
    result = await ask(h, "Now add tests.")
    assert result.terminal == "completed", result.error
    h.server.assert_done()
    # The summary request reused the prefix: same system and tools as the turn's requests.
    requests = h.server.requests
    assert requests[1]["system"] == requests[0]["system"]
    assert requests[1]["tools"] == requests[0]["tools"]
    # The new history: one user message with the memory start block, then the summary and
    # both prompts verbatim.
    first_message = h.session.history[0]
    assert is_start_block(first_message.content[0])
    text = first_message.content[1].text  # type: ignore[union-attr]
    assert text.startswith(SUMMARY_HEADER)
    assert first in text and "Now add tests." in text
    assert [m.role for m in h.session.history] == ["user", "assistant"]
    (event,) = compacted(h)
    assert event.trigger == "auto" and event.prompts_kept == 2
    assert event.tokens_before > 17_000 > event.tokens_after
    assert h.session.context.boundaries[0].trigger == "auto"
    sizes = [u.size for u in h.host.updates if isinstance(u, UsageUpdate)]
    assert set(sizes) == {WINDOW}


async def test_mid_turn_compaction_keeps_pairing(harness: HarnessFactory) -> None:
    h = await harness(
        scenario(
            reply(tool_use("Echo", {"text": "one"}), usage=SMALL),
            reply(tool_use("Echo", {"text": "two"}), usage=FULL),
            summary_step(),
            reply(tool_use("Echo", {"text": "three"}), usage=SMALL),
            reply("All done.", usage=SMALL),
        ),
        context_window=WINDOW,
        max_tokens=MAX_TOKENS,
    )
    result = await ask(h, "Echo three things; keep answers short.")
    assert result.terminal == "completed", result.error
    h.server.assert_done()
    assert pairing_problems(h.session.history) == []
    assert "Continue from where the conversation left off" in h.session.history[0].text()
    # Every request the server saw was well paired too.
    for body in h.server.requests:
        ids_used: set[str] = set()
        for message in body["messages"]:
            for block in message["content"]:
                if block["type"] == "tool_use":
                    ids_used.add(block["id"])
                if block["type"] == "tool_result":
                    assert block["tool_use_id"] in ids_used


async def test_prompt_too_long_recovers_once_and_retries(harness: HarnessFactory) -> None:
    too_long = "prompt is too long: 210000 tokens > 200000 maximum"
    h = await harness(
        scenario(
            reply("First answer.", usage=SMALL),
            error(400, too_long, type="invalid_request_error"),
            summary_step(),
            reply("Recovered.", expect=expecting(last_user_contains="second")),
        ),
        context_window=WINDOW,
        max_tokens=MAX_TOKENS,
    )
    await ask(h, "first, and remember the word zebra")
    result = await ask(h, "second")
    assert result.terminal == "completed", result.error
    assert result.final_text == "Recovered."
    h.server.assert_done()
    assert compacted(h)[0].trigger == "reactive"
    assert "remember the word zebra" in h.session.history[0].text()


async def test_prompt_too_long_with_failing_summary_ends_the_turn_cleanly(
    harness: HarnessFactory,
) -> None:
    too_long = "prompt is too long: 210000 tokens > 200000 maximum"
    h = await harness(
        scenario(
            reply("First answer.", usage=SMALL),
            error(400, too_long, type="invalid_request_error"),
            reply("", expect=expecting(last_user_contains="CONTEXT CHECKPOINT")),
            reply("Still here.", expect=expecting(last_user_contains="third")),
        ),
        context_window=WINDOW,
        max_tokens=MAX_TOKENS,
    )
    await ask(h, "first")
    before = h.session.history
    result = await ask(h, "second")
    assert result.terminal == "context_window"
    assert result.error is not None and "empty summary" in result.error
    assert "prompt is too long" in result.error
    assert h.session.history[: len(before)] == before  # nothing lost
    # The session stays usable.
    result = await ask(h, "third")
    assert result.final_text == "Still here."
    h.server.assert_done()


async def test_failed_summary_leaves_history_and_says_why(harness: HarnessFactory) -> None:
    h = await harness(
        scenario(
            reply("Noted.", usage=FULL),
            error(400, "bad summary request", type="invalid_request_error"),
            reply("Answered anyway.", expect=expecting(last_user_contains="go on")),
        ),
        context_window=WINDOW,
        max_tokens=MAX_TOKENS,
    )
    await ask(h, "hello")
    result = await ask(h, "go on")
    assert result.final_text == "Answered anyway."
    text = "".join(u.content.text for u in h.host.updates if isinstance(u, AgentMessageChunk))
    assert "Automatic compaction failed" in text and "bad summary request" in text
    assert not compacted(h)
    assert split_start(h.session.history)[1][0].text() == "hello"
    h.server.assert_done()


async def test_thrash_protection_stops_after_three(
    harness: HarnessFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "2")  # threshold 400 tokens
    h = await harness(
        scenario(
            summary_step(),
            reply(tool_use("Echo", {"text": "a"})),
            summary_step(),
            reply(tool_use("Echo", {"text": "b"})),
            summary_step(),
            reply(tool_use("Echo", {"text": "c"})),
            reply("done"),
        ),
        context_window=WINDOW,
        max_tokens=MAX_TOKENS,
    )
    result = await ask(h, "go " + "on " * 200)
    assert result.terminal == "completed", result.error
    h.server.assert_done()
    assert len(compacted(h)) == 3
    assert h.session.context.auto_stopped
    text = "".join(u.content.text for u in h.host.updates if isinstance(u, AgentMessageChunk))
    assert "Automatic compaction stopped" in text


async def test_auto_compact_off_by_env(
    harness: HarnessFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISABLE_AUTO_COMPACT", "1")
    h = await harness(
        scenario(reply("Noted.", usage=FULL), reply("No compaction.")),
        context_window=WINDOW,
        max_tokens=MAX_TOKENS,
    )
    await ask(h, "a")
    result = await ask(h, "b")
    assert result.final_text == "No compaction."
    h.server.assert_done()


async def test_slash_compact_with_focus_and_memory_reread(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    (tmp_path / "CLAUDE.md").write_text("Use tabs.\n")
    h = await harness(
        scenario(
            reply("Hi.", usage=SMALL),
            # The summary request reuses the cached prefix (the memory as the conversation
            # holds it); the compacted history opens with the memory files read again.
            summary_step(),
            reply("After.", expect=expecting(last_user_contains="next")),
        ),
        settings=lambda cwd: SettingsStore(
            cwd=cwd, home=tmp_path / "home", managed_path=tmp_path / "none.json", trusted=True
        ),
        context_window=WINDOW,
        max_tokens=MAX_TOKENS,
    )
    await ask(h, "hello there")
    assert "Use tabs." not in str(h.server.requests[0]["system"])
    assert "Use tabs." in h.server.requests[0]["messages"][0]["content"][0]["text"]
    (tmp_path / "CLAUDE.md").write_text("Use spaces now.\n")
    result = await ask(h, "/compact the parser work")
    assert result.error is None, result.final_text
    assert result.final_text.startswith("Compacted:")
    assert "Focus the summary on: the parser work" in str(h.server.requests[1]["messages"][-1])
    text = h.session.history[0].text()
    assert "hello there" in text
    assert "<user-message>\n/compact" not in text  # commands are not user instructions
    assert "Use spaces now." in text and "Use tabs." not in text
    result = await ask(h, "next")
    assert result.final_text == "After."
    opening = h.server.requests[2]["messages"][0]["content"][0]["text"]
    assert is_start_block(TextBlock(text=opening)) and "Use spaces now." in opening
    # The next prompt joins the compacted start without an "interrupted" marker.
    assert "interrupted" not in h.session.history[0].text().lower()
    h.server.assert_done()


async def test_context_clear_cost_and_unknown(harness: HarnessFactory) -> None:
    h = await harness(
        scenario(reply("Hi.", usage=SMALL), reply("Fresh.")),
        context_window=WINDOW,
        max_tokens=MAX_TOKENS,
    )
    h.session.advertise_commands()
    await asyncio.sleep(0)
    (advert,) = [u for u in h.host.updates if isinstance(u, AvailableCommandsUpdate)]
    names = [c.name for c in advert.available_commands]
    assert names == ["compact", "context", "clear", "cost", "memory", "rewind", "init"]
    await ask(h, "hello")
    result = await ask(h, "/context")
    assert "Context:" in result.final_text and "exact count from the API" in result.final_text
    assert "Messages" in result.final_text
    assert any(e.outcome == "count_tokens" for e in h.server.exchanges)
    result = await ask(h, "/cost")
    assert "Output" in result.final_text and "1,000" in result.final_text
    result = await ask(h, "/nope")
    assert result.error is not None and "/compact" in result.error and "/nope" in result.error
    result = await ask(h, "/clear")
    assert h.session.history == ()
    result = await ask(h, "again")
    assert result.final_text == "Fresh."
    # /clear: the conversation starts again, opened by the memory start block.
    first = h.server.requests[-1]["messages"][0]["content"]
    assert first[0]["text"].startswith(START_OPEN) and first[-1]["text"] == "again"
    h.server.assert_done()


async def test_many_compactions_keep_every_instruction_and_pairing(
    harness: HarnessFactory,
) -> None:
    steps = []
    prompts = [f"Instruction {i}: keep rule number {i} exactly." for i in range(6)]
    for i in range(6):
        if i:
            steps.append(summary_step())
        steps.append(reply(tool_use("Echo", {"text": f"t{i}"}), usage=SMALL))
        steps.append(reply(f"done {i}", usage=FULL))
    h = await harness(scenario(*steps), context_window=WINDOW, max_tokens=MAX_TOKENS)
    for p in prompts:
        result = await ask(h, p)
        assert result.terminal == "completed", result.error
    h.server.assert_done()
    assert len(compacted(h)) == 5
    start = h.session.history[0].text()
    for p in prompts:
        assert p in start
    assert pairing_problems(h.session.history) == []
    results = [b for m in h.session.history for b in m.content if isinstance(b, ToolResultBlock)]
    assert results  # the last turn's tool call is still there, paired


async def test_oversized_result_saved_with_preview_and_readable(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    big = "HEAD " + "x" * 60_000 + " TAIL"
    h = await harness(
        scenario(
            reply(tool_use("Echo", {"text": big})),
            reply(
                "Saw the preview.",
                expect=expecting(last_user_contains="<persisted-output>"),
            ),
        ),
        state_dir=tmp_path / "state",
    )
    result = await ask(h, "echo something big")
    assert result.terminal == "completed", result.error
    h.server.assert_done()
    (res,) = [b for m in h.session.history for b in m.content if isinstance(b, ToolResultBlock)]
    assert "HEAD" in res.content and "TAIL" in res.content and len(res.content) < 45_000
    folder = h.session.folder
    assert folder is not None and folder.is_relative_to((tmp_path / "state").resolve())
    saved = folder / "tool-results" / f"{res.tool_use_id}.txt"
    assert str(saved) in res.content
    assert saved.read_text() == f"echo: {big}"
    decision = h.session.permissions.decide(
        tool="Read",
        read_only=True,
        kind="read",
        paths=(saved,),
        raw_input={"file_path": str(saved)},
    )
    assert decision.behavior == "allow", decision
    other = tmp_path.parent / "elsewhere.txt"
    decision = h.session.permissions.decide(
        tool="Read",
        read_only=True,
        kind="read",
        paths=(other,),
        raw_input={"file_path": str(other)},
    )
    assert decision.behavior != "allow"
