"""The summary prepared ahead of time, through real sessions, the loop and the engine against
the scripted Messages-API server (real SDK, the ``scripted-20k`` model): ready (no blocking
summary request, pairing intact, every instruction verbatim), not ready, failed or garbage
(the normal path), and cancelled by ``/clear``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.agent.env import AgentConfig
from lsp_agent.context.compaction import is_compacted_start, pairing_problems
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.model.background import BACKGROUND_ENV
from lsp_agent.protocol.events import ContextCompacted, SessionUpdate
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.sessions.compose import build_sessions
from lsp_agent.sessions.session import Session
from lsp_agent.testing.scenario import (
    ScriptedResponse,
    Step,
    error,
    expecting,
    reply,
    scenario,
    text,
    tool_use,
)
from lsp_agent.testing.scripted import ScriptedServer
from lsp_agent.workspace.disk_host import DiskHost

BULK = "The answer, in detail: " + "lorem ipsum dolor sit amet " * 300  # ~2k tokens
PREPARED = "PREPARED SUMMARY: the user asked questions; instructions kept verbatim."
BLOCKING = "BLOCKING SUMMARY: written while the user waited."
ASKED = expecting(last_user_contains="CONTEXT CHECKPOINT")


def _last_user_text(body: Mapping[str, Any]) -> tuple[str, bool]:
    """The text of the request's last message and whether it carries tool results."""
    blocks = body["messages"][-1]["content"]
    if isinstance(blocks, str):
        return blocks, False
    texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
    return "\n".join(texts), any(b.get("type") == "tool_result" for b in blocks)


@dataclass
class Model:
    """Answers the user's turns: a summary request (blocking) is recorded and answered; a
    prompt with READ gets a Read call; tool results a short answer; other prompts bulk."""

    small_file: Path
    blocking: list[Mapping[str, Any]] = field(default_factory=list)

    def __call__(self, body: Mapping[str, Any]) -> ScriptedResponse:
        last, results = _last_user_text(body)
        if "CONTEXT CHECKPOINT" in last:
            self.blocking.append(body)
            answer = reply(BLOCKING)
        elif results:
            answer = reply("Read it.")
        elif "READ" in last:
            answer = reply(text("Reading."), tool_use("Read", {"file_path": str(self.small_file)}))
        else:
            answer = reply(BULK)
        assert answer.response is not None
        return answer.response


@dataclass
class Run:
    server: ScriptedServer
    session: Session
    model: Model
    updates: list[SessionUpdate]
    prompts: list[str] = field(default_factory=list)

    async def say(self, words: str) -> None:
        self.prompts.append(words)
        result = await self.session.prompt([PromptText(text=words)])
        assert result.error is None, result.error

    async def until_early(self) -> None:
        """Prompt until the summary is being prepared."""
        for i in range(30):
            await self.say(f"INSTR-{i}: keep answers short, use tabs, question {i}.")
            if self.session.context.early is not None:
                return
        raise AssertionError("the summary was never prepared ahead of time")

    async def until_compacted(self) -> None:
        for i in range(30):
            await self.say(f"LATER-{i}: one more question {i}.")
            if any(isinstance(u, ContextCompacted) for u in self.updates):
                return
        raise AssertionError("the conversation never compacted")

    def background(self, kind: str) -> list[Any]:
        return [e for e in self.server.exchanges if e.background == kind]


@pytest.fixture
async def start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    monkeypatch.setenv(BACKGROUND_ENV, "1")
    runs: list[tuple[Any, ScriptedServer]] = []
    small = tmp_path / "small.py"
    small.write_text("x = 1\n")

    async def make(summary_script: Sequence[Step]) -> Run:
        model = Model(small_file=small)
        server = ScriptedServer(
            scenario=scenario(
                background={"summary": summary_script, "title": [reply("Early summary test")]}
            ),
            responder=model,
        )
        await server.start()
        updates: list[SessionUpdate] = []
        manager = build_sessions(
            host=DiskHost(on_update=lambda _sid, update: updates.append(update)),
            model_factory=lambda: AnthropicModel(
                api_key="k", base_url=server.base_url, max_retries=0
            ),
            config=AgentConfig(model="scripted-20k", permission_mode="acceptEdits", persist=False),
        )
        runs.append((manager, server))
        return Run(server=server, session=manager.new(cwd=tmp_path), model=model, updates=updates)

    yield make
    for manager, server in runs:
        await manager.aclose()
        await server.stop()


async def test_ready_summary_compacts_without_a_blocking_request(start: Any) -> None:
    run: Run = await start([reply(PREPARED, expect=ASKED)])
    await run.until_early()
    early = run.session.context.early
    assert early is not None
    await asyncio.wait_for(early.task, 30)
    await run.say("READ small.py and tell me what it holds.")  # a tool round after the start
    await run.until_compacted()
    assert run.model.blocking == []  # the user never waited for a summary
    assert len(run.background("summary")) == 1
    assert run.session.context.early_used == 1
    history = run.session.history
    assert is_compacted_start(history[0]) and PREPARED in history[0].text()
    assert BLOCKING not in history[0].text()
    assert pairing_problems(history) == []
    assert [m.role for m in history[:2]] == ["user", "assistant"]
    everything = "\n".join(m.text() for m in history)
    for words in run.prompts:
        assert words in everything  # every instruction verbatim: in the summary or the tail
    assert any(u.tool_uses() and u.tool_uses()[0].name == "Read" for u in history)
    assert run.server.failures == []


async def test_not_ready_is_cancelled_and_the_normal_path_runs(start: Any) -> None:
    run: Run = await start([reply(PREPARED, expect=ASKED, delay_ms=60_000)])
    await run.until_early()
    early = run.session.context.early
    assert early is not None and not early.task.done()
    await run.until_compacted()
    assert early.task.cancelled()
    assert len(run.model.blocking) == 1
    assert run.session.context.early_used == 0
    assert BLOCKING in run.session.history[0].text()
    assert pairing_problems(run.session.history) == []


@pytest.mark.parametrize(
    "answer",
    [error(500, "down"), reply(""), reply(tool_use("Read", {}))],
    ids=["error", "empty", "a tool call"],
)
async def test_a_failed_or_garbage_summary_changes_nothing(start: Any, answer: Step) -> None:
    run: Run = await start([answer.model_copy(update={"expect": ASKED})])
    await run.until_early()
    early = run.session.context.early
    assert early is not None
    await asyncio.wait_for(early.task, 30)
    await run.until_compacted()
    assert len(run.model.blocking) == 1
    assert run.session.context.early_used == 0
    assert len(run.background("summary")) == 1  # one attempt, not one per request
    assert BLOCKING in run.session.history[0].text()
    assert pairing_problems(run.session.history) == []


async def test_clear_cancels_the_summary_being_prepared(start: Any) -> None:
    run: Run = await start([reply(PREPARED, expect=ASKED, delay_ms=60_000)])
    await run.until_early()
    early = run.session.context.early
    assert early is not None
    await run.session.prompt([PromptText(text="/clear")])
    await asyncio.gather(early.task, return_exceptions=True)
    assert early.task.cancelled()
    assert run.session.context.early is None
    assert run.session.history == ()
