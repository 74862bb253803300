"""Fixtures for loop tests: an in-memory Host, small test tools, and a session factory that
talks to the scripted Messages-API server through the real SDK."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.agent.env import AgentConfig
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.protocol.documents import ApplyResult, FileChange, TextSnapshot
from lsp_agent.protocol.events import SessionUpdate
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse
from lsp_agent.sessions.manager import Session, SessionManager, SettingsFactory
from lsp_agent.testing.scenario import Scenario
from lsp_agent.testing.scripted import ScriptedServer
from lsp_agent.tools.base import Prepared, Tool, ToolContext, ToolError, ToolInput, ToolOutput
from lsp_agent.tools.registry import ToolRegistry


@dataclass(kw_only=True)
class RecordingHost:
    """A Host that records updates and answers permission prompts with ``answer``."""

    updates: list[SessionUpdate] = field(default_factory=list)
    permission_requests: list[PermissionRequest] = field(default_factory=list)
    answer: Callable[[PermissionRequest], Awaitable[PermissionResponse]] | None = None

    def buffer(self, path: Path) -> TextSnapshot | None:
        return None

    async def apply_changes(self, changes: Sequence[FileChange], *, label: str) -> ApplyResult:
        return ApplyResult(applied=False, failure="not supported in this test host")

    async def request_permission(self, request: PermissionRequest) -> PermissionResponse:
        self.permission_requests.append(request)
        if self.answer is None:
            return PermissionResponse(outcome="selected", option_id="reject_once")
        return await self.answer(request)

    async def save_documents(self, paths: Sequence[Path]) -> dict[Path, str]:
        return {}

    async def files_changed_on_disk(self, paths: Sequence[Path]) -> None:
        return None

    def emit(self, session_id: str, update: SessionUpdate) -> None:
        self.updates.append(update)


class EchoInput(ToolInput):
    text: str


class EchoTool(Tool[EchoInput]):
    """Read-only, concurrency-safe: returns its input."""

    name = "Echo"
    description = "Echo the text back."
    input_model = EchoInput
    kind = "read"
    read_only = True
    concurrency_safe = True
    reads_disk = False
    writes_disk = False

    async def call(self, inp: EchoInput, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(text=f"echo: {inp.text}")


class MeetInput(ToolInput):
    name: str


class MeetTool(Tool[MeetInput]):
    """Waits until ``parties`` calls are running at once: proves calls run in parallel."""

    name = "Meet"
    description = "Wait for the other party."
    input_model = MeetInput
    read_only = True
    concurrency_safe = True
    reads_disk = False
    writes_disk = False

    def __init__(self, parties: int) -> None:
        self.barrier = asyncio.Barrier(parties)

    async def call(self, inp: MeetInput, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        try:
            async with asyncio.timeout(5):
                await self.barrier.wait()
        except TimeoutError:
            raise ToolError("the other calls never ran alongside this one") from None
        return ToolOutput(text=f"met {inp.name}")


class HangInput(ToolInput):
    pass


class HangTool(Tool[HangInput]):
    """Runs until cancelled; records that it started and that it was cancelled."""

    name = "Hang"
    description = "Never finishes."
    input_model = HangInput
    read_only = True
    reads_disk = False
    writes_disk = False

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = False

    async def call(self, inp: HangInput, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        raise AssertionError("unreachable")


class BoomTool(Tool[HangInput]):
    """Raises an unexpected exception (a tool bug)."""

    name = "Boom"
    description = "Crashes."
    input_model = HangInput
    read_only = True
    reads_disk = False
    writes_disk = False

    async def call(self, inp: HangInput, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        raise RuntimeError("kaboom")


class CrashPrepareTool(EchoTool):
    """Its prepare step raises an unexpected exception (like a path with a NUL byte)."""

    name = "Crashprep"

    async def prepare(self, inp: EchoInput, ctx: ToolContext) -> Prepared:
        raise ValueError("prepare exploded")


class CmdInput(ToolInput):
    command: str


class FakeBashTool(Tool[CmdInput]):
    """Named Bash (so the permission engine's Bash rules apply) and, like Bash, its failure
    cancels the calls after it; fails when the command says "fail"."""

    name = "Bash"
    failure_cancels_siblings = True
    description = "Pretend to run a command."
    input_model = CmdInput
    kind = "execute"

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def call(self, inp: CmdInput, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        self.ran.append(inp.command)
        ctx.progress(f"running {inp.command}\n")
        return ToolOutput(text=f"ran {inp.command}", is_error="fail" in inp.command)


@dataclass(kw_only=True)
class Harness:
    server: ScriptedServer
    host: RecordingHost
    session: Session
    tools: dict[str, Tool[Any, Any]]


HarnessFactory = Callable[..., Awaitable[Harness]]


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[HarnessFactory]:
    servers: list[ScriptedServer] = []
    managers: list[SessionManager] = []

    async def make(
        scenario: Scenario, *, settings: SettingsFactory | None = None, **config: Any
    ) -> Harness:
        server = ScriptedServer(scenario=scenario, variables={"cwd": str(tmp_path)})
        base_url = await server.start()
        servers.append(server)
        host = RecordingHost()
        tools: dict[str, Tool[Any, Any]] = {
            "Echo": EchoTool(),
            "Meet": MeetTool(2),
            "Hang": HangTool(),
            "Boom": BoomTool(),
            "Bash": FakeBashTool(),
            "Crashprep": CrashPrepareTool(),
        }
        manager = SessionManager(
            host=host,
            model_factory=lambda: AnthropicModel(
                api_key="test-key", base_url=base_url, max_retries=2
            ),
            config=AgentConfig(model="claude-test", **config),
            tools_factory=lambda: ToolRegistry(tools=tools.values()),
            settings=settings,
            managed_memory=tmp_path / "no-managed" / "CLAUDE.md",
        )
        managers.append(manager)
        session = manager.new(cwd=tmp_path)
        return Harness(server=server, host=host, session=session, tools=tools)

    yield make
    for manager in managers:
        await manager.aclose()
    for server in servers:
        await server.stop()
