"""The session manager with real parts: ids, roots, modes, lookup and closing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from lsp_agent.agent.env import AgentConfig
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.protocol.events import CurrentModeUpdate, SessionUpdate
from lsp_agent.sessions.compose import build_sessions
from lsp_agent.sessions.manager import SessionError, SessionManager
from lsp_agent.workspace.disk_host import DiskHost


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[tuple[SessionManager, list[SessionUpdate]]]:
    updates: list[SessionUpdate] = []
    made = build_sessions(
        host=DiskHost(on_update=lambda _sid, update: updates.append(update)),
        # Never contacted: these tests send no prompt.
        model_factory=lambda: AnthropicModel(api_key="k", base_url="http://127.0.0.1:9"),
        config=AgentConfig(model="claude-test", permission_mode="plan"),
    )
    yield made, updates
    await made.aclose()


async def test_roots_are_the_resolved_cwd_then_extra_folders_without_repeats(
    tmp_path: Path, manager: tuple[SessionManager, list[SessionUpdate]]
) -> None:
    sessions, _ = manager
    (tmp_path / "lib").mkdir()
    session = sessions.new(
        cwd=tmp_path / "." / "lib" / "..",
        additional_directories=[tmp_path / "lib", tmp_path, tmp_path / "lib" / ".."],
    )
    assert session.cwd == tmp_path.resolve()
    assert session.roots == (tmp_path.resolve(), (tmp_path / "lib").resolve())


async def test_the_mode_asked_for_beats_the_configured_one(
    tmp_path: Path, manager: tuple[SessionManager, list[SessionUpdate]]
) -> None:
    sessions, _ = manager
    assert sessions.new(cwd=tmp_path).mode == "plan"
    assert sessions.new(cwd=tmp_path, mode="acceptEdits").mode == "acceptEdits"


async def test_switching_mode_tells_the_client(
    tmp_path: Path, manager: tuple[SessionManager, list[SessionUpdate]]
) -> None:
    sessions, updates = manager
    session = sessions.new(cwd=tmp_path)
    session.set_mode("default")
    assert session.permissions.mode == "default"
    assert updates[-1] == CurrentModeUpdate(current_mode_id="default")


async def test_unknown_and_closed_sessions_are_errors_naming_the_id(
    tmp_path: Path, manager: tuple[SessionManager, list[SessionUpdate]]
) -> None:
    sessions, _ = manager
    session = sessions.new(cwd=tmp_path)
    assert sessions.get(session.id) is session
    with pytest.raises(SessionError, match="nope"):
        sessions.get("nope")
    closed = await sessions.close(session.id)
    assert closed is session and session.id not in sessions.sessions
    with pytest.raises(SessionError, match=session.id):
        await sessions.close(session.id)
