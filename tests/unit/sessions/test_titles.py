"""Session titles written by the model in the background, against the scripted Messages-API
server (real SDK): the title replaces the first prompt in the session list and reaches the
client; off, failing or garbage answers leave the first prompt."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from lsp_agent.agent.env import AgentConfig
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.model.background import BACKGROUND_ENV
from lsp_agent.protocol.events import SessionInfoUpdate, SessionUpdate
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.sessions.compose import build_sessions
from lsp_agent.sessions.manager import SessionManager
from lsp_agent.sessions.session import Session
from lsp_agent.sessions.titles import clean_title
from lsp_agent.store.index import list_sessions
from lsp_agent.testing.scenario import Step, error, expecting, reply, scenario
from lsp_agent.testing.scripted import ScriptedServer
from lsp_agent.workspace.disk_host import DiskHost

PROMPT = "please fix the flaky parser test in tests/test_parse.py, it fails one run in ten"


async def run(
    tmp_path: Path, title_script: Sequence[Step] | None
) -> tuple[ScriptedServer, Session, list[SessionUpdate]]:
    background = {"title": title_script} if title_script is not None else None
    server = ScriptedServer(scenario=scenario(reply("Done."), background=background))
    await server.start()
    updates: list[SessionUpdate] = []
    manager: SessionManager = build_sessions(
        host=DiskHost(on_update=lambda _sid, update: updates.append(update)),
        model_factory=lambda: AnthropicModel(api_key="k", base_url=server.base_url, max_retries=0),
        config=AgentConfig(model="scripted-20k", data_dir=tmp_path / "data"),
    )
    session = manager.new(cwd=tmp_path)
    try:
        await session.prompt([PromptText(text=PROMPT)])
        if session.background is not None and "title" in session.background.tasks:
            await asyncio.wait_for(session.background.tasks["title"], 30)
    finally:
        await manager.aclose()
        await server.stop()
    return server, session, updates


def listed_title(tmp_path: Path) -> str:
    (info,) = list_sessions(tmp_path / "data")
    return info.title


@pytest.fixture
def on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BACKGROUND_ENV, "1")


@pytest.mark.usefixtures("on")
async def test_the_model_writes_the_title(tmp_path: Path) -> None:
    asked = expecting(last_user_contains=PROMPT, stream=True)
    answer = reply('"Fix flaky parser test."', expect=asked)
    server, session, updates = await run(tmp_path, [answer])
    server.assert_done()
    assert server.background_unconsumed("title") == 0
    (title_request,) = [e.body for e in server.exchanges if e.background == "title"]
    assert "tools" not in title_request and title_request["max_tokens"] <= 64
    assert session.title == "Fix flaky parser test"
    assert SessionInfoUpdate(title="Fix flaky parser test") in updates
    assert listed_title(tmp_path) == "Fix flaky parser test"
    # The turn's own request is untouched by the background one.
    (turn,) = [e for e in server.exchanges if e.background is None]
    assert turn.body["messages"][0]["content"][-1]["text"].startswith("please fix")


@pytest.mark.usefixtures("on")
@pytest.mark.parametrize(
    "answer",
    [
        [error(500, "down")],
        [reply("")],
        [reply(" ".join(["word"] * 30))],
    ],
    ids=["error", "empty", "a speech"],
)
async def test_failures_keep_the_first_prompt(tmp_path: Path, answer: list[Step]) -> None:
    server, session, updates = await run(tmp_path, answer)
    assert server.background_unconsumed("title") == 0
    assert session.title is None
    assert not [u for u in updates if isinstance(u, SessionInfoUpdate)]
    assert listed_title(tmp_path) == PROMPT


async def test_off_by_default_in_tests_sends_nothing(tmp_path: Path) -> None:
    server, session, _ = await run(tmp_path, None)
    server.assert_done()
    assert [e for e in server.exchanges if e.background is not None] == []
    assert session.title is None
    assert listed_title(tmp_path) == PROMPT


@pytest.mark.parametrize(
    ("answer", "title"),
    [
        ("Fix flaky parser test", "Fix flaky parser test"),
        ('Title: "Refactor the cache layer."\n\nBecause...', "Refactor the cache layer"),
        ("**Add retry progress**", "Add retry progress"),
        ("# Port CLI to argparse", "Port CLI to argparse"),
        ("", None),
        ("...", None),
        (" ".join(["w"] * 13), None),
        ("x" * 100, "x" * 79 + "…"),
    ],
)
def test_clean_title(answer: str, title: str | None) -> None:
    assert clean_title(answer) == title
