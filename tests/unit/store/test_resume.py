"""Resume, fork and list through real sessions: the real SDK against the scripted
Messages-API server; a "restart" is a second session manager over the same data folder."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.agent.env import AgentConfig
from lsp_agent.context.compaction import is_compacted_start
from lsp_agent.context.start import split_start
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.model.types import ToolResultBlock
from lsp_agent.protocol.events import (
    AgentMessageChunk,
    ContextCompacted,
    ToolCall,
    ToolCallUpdate,
    UserMessageChunk,
)
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.sessions.manager import SessionError, SessionManager
from lsp_agent.sessions.resume import fork, resume, saved_sessions
from lsp_agent.store.history import active_chain, load_transcript
from lsp_agent.testing.scenario import Scenario, expecting, reply, scenario, tool_use
from lsp_agent.testing.scripted import ScriptedServer
from lsp_agent.tools.registry import ToolRegistry
from tests.unit.agent.conftest import EchoTool, HangTool, RecordingHost

Make = Callable[..., Any]


@pytest.fixture
async def managers(tmp_path: Path) -> AsyncIterator[Make]:
    """Builds session managers (one per simulated server process) over one data folder."""
    made: list[tuple[SessionManager, ScriptedServer]] = []

    async def make(
        steps: Scenario, **config: Any
    ) -> tuple[SessionManager, RecordingHost, ScriptedServer]:
        server = ScriptedServer(scenario=steps)
        base_url = await server.start()
        host = RecordingHost()
        tools = ToolRegistry(tools=[EchoTool(), HangTool()])
        manager = SessionManager(
            host=host,
            model_factory=lambda: AnthropicModel(api_key="k", base_url=base_url, max_retries=0),
            config=AgentConfig(model="claude-test", **({"data_dir": tmp_path / "data"} | config)),
            tools_factory=lambda: tools,
            managed_memory=tmp_path / "none" / "CLAUDE.md",
        )
        made.append((manager, server))
        return manager, host, server

    yield make
    for manager, server in made:
        await manager.aclose()
        await server.stop()


async def ask(session: Any, text: str) -> Any:
    return await session.prompt([PromptText(text=text)])


async def test_a_restarted_server_resumes_the_history_replays_it_and_goes_on(
    managers: Make, tmp_path: Path
) -> None:
    first, _, _ = await managers(
        scenario(
            reply(tool_use("Echo", {"text": "hi"}, id="toolu_a")),
            reply("Echoed hi."),
            reply("Second answer."),
        )
    )
    session = first.new(cwd=tmp_path)
    await ask(session, "echo hi please")
    await ask(session, "and again")
    session_id = session.id
    await first.aclose()

    second, _, server = await managers(
        scenario(reply("Third.", expect=expecting(last_user_contains="third prompt")))
    )
    listed = saved_sessions(second, cwd=tmp_path)
    assert [(i.session_id, i.title, i.turns) for i in listed] == [(session_id, "echo hi please", 2)]
    resumed = resume(second, session_id)
    updates = list(resumed.updates)
    users = [u.content.text for u in updates if isinstance(u, UserMessageChunk)]
    assert users == ["echo hi please", "and again"]
    assert all(u.message_id for u in updates if isinstance(u, UserMessageChunk))
    calls = [u for u in updates if isinstance(u, ToolCall)]
    assert [(c.tool_call_id, c.title, c.kind) for c in calls] == [("toolu_a", "Echo", "read")]
    done = [u for u in updates if isinstance(u, ToolCallUpdate)]
    assert done[0].status == "completed"
    answers = [u.content.text for u in updates if isinstance(u, AgentMessageChunk)]
    assert answers == ["Echoed hi.", "Second answer."]

    result = await ask(resumed.session, "third prompt")
    assert result.stop_reason == "end_turn"
    sent = server.requests[0]["messages"]
    # The whole conversation went back to the model, tool pairing intact.
    assert [m["role"] for m in sent] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert sent[2]["content"][0]["type"] == "tool_result"
    assert saved_sessions(second, cwd=tmp_path)[0].turns == 3


async def test_a_server_killed_mid_turn_resumes_with_the_turn_marked_and_calls_paired(
    managers: Make, tmp_path: Path
) -> None:
    first, _, _ = await managers(scenario(reply(tool_use("Hang", {}, id="toolu_h"))))
    session = first.new(cwd=tmp_path)
    import asyncio

    task = asyncio.ensure_future(ask(session, "start the long job"))
    hang = session.tools.get("Hang")
    assert isinstance(hang, HangTool)
    await asyncio.wait_for(hang.started.wait(), 10)
    # What kill -9 leaves: the records written so far, no turn_end, nothing closed.
    path = session.recorder.transcript.path  # type: ignore[union-attr]
    copy = path.read_bytes()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await first.aclose()
    path.write_bytes(copy)

    second, _, server = await managers(scenario(reply("Recovered.")))
    resumed = resume(second, session.id)
    updates = list(resumed.updates)
    failed = [u for u in updates if isinstance(u, ToolCallUpdate) and u.status == "failed"]
    assert [u.tool_call_id for u in failed] == ["toolu_h"]
    assert (
        "interrupted" in [u for u in updates if isinstance(u, AgentMessageChunk)][-1].content.text
    )
    history = resumed.session.history
    assert isinstance(history[-1].content[0], ToolResultBlock)
    assert history[-1].content[0].is_error
    assert saved_sessions(second)[0].interrupted
    await ask(resumed.session, "what happened?")
    sent = server.requests[0]["messages"]
    assert sent[-1]["content"][0]["tool_use_id"] == "toolu_h"
    assert not saved_sessions(second)[0].interrupted


async def test_resume_restores_mode_but_never_bypass_or_plan(
    managers: Make, tmp_path: Path
) -> None:
    first, _, _ = await managers(scenario(reply("a"), reply("b")))
    one = first.new(cwd=tmp_path)
    one.set_mode("acceptEdits")
    await ask(one, "first")
    two = first.new(cwd=tmp_path)
    two.set_mode("plan")
    await ask(two, "second")
    await first.aclose()
    second, _, _ = await managers(scenario())
    assert resume(second, one.id).session.mode == "acceptEdits"
    assert resume(second, two.id).session.mode == "default"


async def test_fork_from_a_message_gets_a_new_id_and_only_the_history_before_it(
    managers: Make, tmp_path: Path
) -> None:
    manager, _, server = await managers(
        scenario(
            reply("A1"),
            reply("A2"),
            reply("Forked.", expect=expecting(last_user_contains="other way")),
        )
    )
    session = manager.new(cwd=tmp_path)
    await ask(session, "one")
    await ask(session, "two")
    first_answer = session.recorder.ids[1]  # type: ignore[union-attr]
    forked = fork(manager, session.id, message_id=first_answer)
    assert forked.session.id != session.id
    history = split_start(forked.session.history)[1]  # without the memory start block
    assert [m.text() for m in history] == ["one", "A1"]
    await ask(forked.session, "the other way")
    assert [m["role"] for m in server.requests[-1]["messages"]] == ["user", "assistant", "user"]
    # The original is untouched.
    original = active_chain(load_transcript(session.recorder.transcript.path).records)  # type: ignore[union-attr]
    assert sum(1 for r in original if r.type == "user") == 2
    with pytest.raises(SessionError, match="no message"):
        fork(manager, session.id, message_id="nope")


async def test_two_servers_never_write_one_session(managers: Make, tmp_path: Path) -> None:
    first, _, _ = await managers(scenario(reply("a")))
    session = first.new(cwd=tmp_path)
    await ask(session, "hello")
    second, _, _ = await managers(scenario())
    with pytest.raises(SessionError, match="another lsp-agent process"):
        resume(second, session.id)
    # Forking is the way to continue it elsewhere.
    assert split_start(fork(second, session.id).session.history)[1][0].text() == "hello"


async def test_compaction_and_clear_are_recorded_and_resume_after_them(
    managers: Make, tmp_path: Path
) -> None:
    manager, _, _ = await managers(
        scenario(
            reply("Answer one."),
            reply(
                "Goal: test. Pending: none.",
                expect=expecting(last_user_contains="CONTEXT CHECKPOINT"),
            ),
            reply("after compact"),
        )
    )
    session = manager.new(cwd=tmp_path)
    await ask(session, "one " + "word " * 300)
    await ask(session, "/compact")
    await ask(session, "after")
    path = session.recorder.transcript.path  # type: ignore[union-attr]
    await manager.aclose()
    records = load_transcript(path).records
    boundary = [r for r in records if r.type == "compact_boundary"]
    assert len(boundary) == 1 and boundary[0].get("trigger") == "manual"
    assert boundary[0].get("summary") == "Goal: test. Pending: none."
    second, _, _ = await managers(scenario(reply("x")))
    resumed = resume(second, session.id)
    updates = list(resumed.updates)
    assert [type(u) for u in updates if isinstance(u, ContextCompacted)] == [ContextCompacted]
    history = resumed.session.history
    assert is_compacted_start(history[0])
    assert "after" in history[0].text()  # the next prompt merged into the summary message
    assert resumed.session.context.prompts[-1] == "after"
    await ask(resumed.session, "/clear")
    resumed.session.recorder.close()  # type: ignore[union-attr]
    chain = active_chain(load_transcript(path).records)
    assert chain[-2].type == "clear"


async def test_a_data_folder_that_cannot_be_written_keeps_the_session_working(
    managers: Make, tmp_path: Path
) -> None:
    blocker = tmp_path / "blocked"
    blocker.write_text("not a folder")
    manager, host, _ = await managers(
        scenario(reply("fine"), reply("still fine")), data_dir=blocker
    )
    session = manager.new(cwd=tmp_path)
    assert (await ask(session, "hi")).stop_reason == "end_turn"
    notes = [u.content.text for u in host.updates if isinstance(u, AgentMessageChunk)]
    assert any("Session persistence is off" in n for n in notes)
    assert (await ask(session, "again")).stop_reason == "end_turn"
    assert (
        sum(
            "persistence is off" in u.content.text
            for u in host.updates
            if isinstance(u, AgentMessageChunk)
        )
        == 1
    )


async def test_hooks_get_the_real_transcript_path(managers: Make, tmp_path: Path) -> None:
    manager, _, _ = await managers(scenario(reply("ok")), persist=True)
    session = manager.new(cwd=tmp_path)
    await ask(session, "hi")
    path = session.recorder.transcript.path  # type: ignore[union-attr]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["type"] for line in lines] == ["meta", "user", "assistant", "turn_end"]
    assert lines[1]["parentUuid"] == lines[0]["uuid"] and lines[1]["promptText"] == "hi"
