"""The composition root: what every door's sessions are made of, built from real parts (a
disk host, the real SDK against the scripted Messages-API server, a diagnostics service)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from lsp_agent.agent.env import AgentConfig
from lsp_agent.diagnostics.config import DiagnosticsSettings
from lsp_agent.diagnostics.service import DiagnosticsService
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.protocol.events import AgentMessageChunk, SessionUpdate
from lsp_agent.protocol.permissions import PermissionRequest, Refusal
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.sessions.compose import build_sessions, session_tools
from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use
from lsp_agent.testing.scripted import ScriptedServer
from lsp_agent.workspace.disk_host import DiskHost
from tests.unit.diagnostics.conftest import ruff_config

BUILT_INS = {"Bash", "Edit", "Glob", "Grep", "Read", "Write"}


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[Callable[..., DiagnosticsService]]:
    made: list[DiagnosticsService] = []

    def make(*, servers: bool) -> DiagnosticsService:
        settings = DiagnosticsSettings(servers=(ruff_config(),) if servers else ())
        made.append(DiagnosticsService(settings=settings, roots=[tmp_path]))
        return made[-1]

    yield make
    for one in made:
        await one.shutdown()


def test_without_diagnostics_a_session_gets_the_built_in_tools_only() -> None:
    names = set(session_tools(None).names())
    assert names >= BUILT_INS
    assert not {"LSP", "Rename"} & names


def test_language_server_tools_come_with_managed_servers_only(
    service: Callable[..., DiagnosticsService],
) -> None:
    assert not {"LSP", "Rename"} & set(session_tools(service(servers=False)).names())
    assert {"LSP", "Rename"} <= set(session_tools(service(servers=True)).names())


async def test_every_session_gets_the_doors_parts(
    tmp_path: Path, service: Callable[..., DiagnosticsService]
) -> None:
    diagnostics = service(servers=True)
    host = DiskHost()
    config = AgentConfig(model="claude-test", permission_mode="acceptEdits")
    manager = build_sessions(
        host=host,
        model_factory=lambda: AnthropicModel(api_key="k", base_url="http://127.0.0.1:9"),
        config=config,
        diagnostics=diagnostics,
    )
    try:
        one, two = manager.new(cwd=tmp_path), manager.new(cwd=tmp_path)
        for session in (one, two):
            assert session.host is host and session.workspace.host is host
            assert session.diagnostics is diagnostics
            assert session.config is config and session.mode == "acceptEdits"
            assert "LSP" in session.tools.names()
        assert one.id != two.id and one.tools is not two.tools and one.model is not two.model
    finally:
        await manager.aclose()


async def test_an_unattended_door_refuses_in_its_own_words_without_asking(
    tmp_path: Path,
) -> None:
    """The door's refusal replaces the prompt; the host is never asked (``DiskHost`` would
    reject, but with its own words, which must not appear)."""
    asked: list[PermissionRequest] = []

    def unattended(tool: str, request: PermissionRequest) -> Refusal:
        asked.append(request)
        return Refusal(kind="denied", reason=f"{tool} needs --allowedTools in this door")

    server = ScriptedServer(
        scenario=scenario(
            reply(tool_use("Bash", {"command": "make deploy"}, id="b1")),
            reply(
                "ok",
                expect=expecting(
                    tool_results=[
                        ToolResultExpect(is_error=True, contains="Bash needs --allowedTools")
                    ]
                ),
            ),
        )
    )
    base_url = await server.start()
    updates: list[SessionUpdate] = []
    manager = build_sessions(
        host=DiskHost(on_update=lambda _sid, update: updates.append(update)),
        model_factory=lambda: AnthropicModel(api_key="k", base_url=base_url, max_retries=0),
        config=AgentConfig(model="claude-test", unattended=unattended),
    )
    try:
        result = await manager.new(cwd=tmp_path).prompt([PromptText(text="ship it")])
        assert (result.stop_reason, result.final_text) == ("end_turn", "ok")
        assert [r.tool_call.tool_call_id for r in asked] == ["b1"]
        assert any(isinstance(u, AgentMessageChunk) for u in updates)
        server.assert_done()
    finally:
        await manager.aclose()
        await server.stop()
