"""Rewind records in the transcript, through real sessions (the real SDK against the scripted
Messages-API server, a real shadow git store): a "restart" is a second session manager over the
same data folder."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.agent.env import AgentConfig
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.protocol.events import AgentMessageChunk, UserMessageChunk
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.sessions.manager import SessionManager
from lsp_agent.sessions.replay import replay
from lsp_agent.sessions.resume import fork, resume
from lsp_agent.sessions.rewind import RewindError, outcome_of, rewind
from lsp_agent.store.history import active_chain, load_transcript
from lsp_agent.testing.scenario import Scenario, reply, scenario
from lsp_agent.testing.scripted import ScriptedServer
from lsp_agent.tools.registry import ToolRegistry
from tests.unit.agent.conftest import EchoTool, RecordingHost

Make = Callable[..., Any]


@pytest.fixture
async def managers(tmp_path: Path) -> AsyncIterator[Make]:
    made: list[tuple[SessionManager, ScriptedServer]] = []

    async def make(steps: Scenario) -> SessionManager:
        server = ScriptedServer(scenario=steps)
        base_url = await server.start()
        manager = SessionManager(
            host=RecordingHost(),
            model_factory=lambda: AnthropicModel(api_key="k", base_url=base_url, max_retries=0),
            config=AgentConfig(model="claude-test", data_dir=tmp_path / "data"),
            tools_factory=lambda: ToolRegistry(tools=[EchoTool()]),
            managed_memory=tmp_path / "none" / "CLAUDE.md",
            checkpoints_dir=tmp_path / "data" / "checkpoints",
        )
        made.append((manager, server))
        return manager

    yield make
    for manager, server in made:
        await manager.aclose()
        await server.stop()


async def ask(session: Any, text: str) -> Any:
    return await session.prompt([PromptText(text=text)])


async def test_a_conversation_rewind_branches_the_transcript(
    managers: Make, tmp_path: Path
) -> None:
    first = await managers(scenario(reply("One."), reply("Two."), reply("Three.")))
    session = first.new(cwd=tmp_path)
    for text in ("first", "second", "third"):
        await ask(session, text)
    second_id = session.prompt_marks[1].message_id
    await rewind(session, second_id[:8], "conversation")
    assert [m.text for m in session.prompt_marks] == ["first"]
    path = session.recorder.transcript.path
    await first.aclose()

    records = load_transcript(path).records
    checkpoints = [r.get("data")["messageId"] for r in records if r.type == "checkpoint"]
    assert checkpoints[1] == second_id and len(checkpoints) == 3
    chain = active_chain(records)
    assert chain[-1].type == "rewind" and chain[-1].get("data")["restore"] == "conversation"
    assert [r.get("promptText") for r in chain if r.get("prompt")] == ["first"]
    # The first turn's end stays on the branch: the session is not marked interrupted.
    assert chain[-2].type == "turn_end" and chain[-3].type == "checkpoint"

    again = await managers(scenario(reply("After.")))
    resumed = resume(again, session.id)
    updates = list(resumed.updates)
    assert [u.content.text for u in updates if isinstance(u, UserMessageChunk)] == ["first"]
    note = [u.content.text for u in updates if isinstance(u, AgentMessageChunk)][-1]
    assert note.startswith("Rewound to before prompt") and "'second'" in note
    assert [m.text for m in resumed.session.prompt_marks] == ["first"]
    assert [m.role for m in resumed.session.history] == ["user", "assistant"]


async def test_prompts_before_a_clear_rewind_code_only(managers: Make, tmp_path: Path) -> None:
    first = await managers(scenario(reply("One."), reply("Two.")))
    session = first.new(cwd=tmp_path)
    await ask(session, "before")
    await ask(session, "/clear")
    await ask(session, "after")
    await first.aclose()

    again = await managers(scenario())
    resumed = resume(again, session.id).session
    marks = resumed.prompt_marks
    assert [(m.text, m.history_len) for m in marks] == [("before", None), ("after", 0)]
    with pytest.raises(RewindError, match="compacted or cleared"):
        await rewind(resumed, marks[0].message_id, "both")
    done = await rewind(resumed, marks[0].message_id, "code")
    assert done.code is not None and done.conversation is False
    await rewind(resumed, marks[1].message_id, "conversation")
    assert resumed.history == ()


async def test_a_fork_rewinds_the_code_of_the_prompts_it_copied(
    managers: Make, tmp_path: Path
) -> None:
    manager = await managers(scenario(reply("One."), reply("Two.")))
    session = manager.new(cwd=tmp_path)
    await ask(session, "first")
    await ask(session, "second")
    first = session.prompt_marks[0].message_id
    forked = fork(manager, session.id).session
    assert forked.prompt_marks[0].message_id == first
    done = await rewind(forked, first, "both")
    assert done.code is not None and forked.history == ()
    # The source keeps its own checkpoints and history.
    assert len(session.prompt_marks) == 2 and len(session.history) == 4


def test_a_rewind_record_this_version_cannot_read_replays_nothing() -> None:
    from lsp_agent.store.records import new_record

    odd = new_record("rewind", session_id="s", parent=None, fields={"data": {"restored": 3}})
    assert outcome_of({"restored": 3}) is None
    assert list(replay([odd])) == []
