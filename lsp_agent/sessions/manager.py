"""Sessions: one conversation each, with its roots, mode and history; and their manager.

A door creates sessions through :class:`SessionManager` and drives them with
:meth:`Session.prompt` / :meth:`Session.cancel`. Updates flow out through ``Host.emit``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lsp_agent.agent.events import CurrentModeUpdate, SessionUpdate
from lsp_agent.agent.executor import ExecutorEnv
from lsp_agent.agent.loop import (
    AgentConfig,
    LoopEnv,
    LoopState,
    TurnFinished,
    TurnResult,
    agent_loop,
    start_messages,
)
from lsp_agent.agent.prompt import system_prompt
from lsp_agent.host import Host
from lsp_agent.model.base import Model
from lsp_agent.model.types import Message, Usage
from lsp_agent.permissions.engine import PermissionEngine
from lsp_agent.permissions.types import PermissionMode
from lsp_agent.tools.base import ReadState, ToolContext
from lsp_agent.tools.registry import ToolRegistry, default_tools
from lsp_agent.workspace.workspace import Workspace

MODES: tuple[tuple[PermissionMode, str, str], ...] = (
    ("default", "Default", "Ask before edits and commands"),
    ("acceptEdits", "Accept edits", "Edit files in the workspace without asking"),
    ("plan", "Plan", "Read-only: explore and plan, change nothing"),
    ("bypassPermissions", "Bypass permissions", "Run every tool without asking"),
)
"""The permission modes a session offers (id, name, description)."""


class SessionError(Exception):
    """A request names an unknown session or one that is busy; the message says which."""


@dataclass(frozen=True, kw_only=True)
class PromptText:
    """A text part of a user prompt."""

    text: str


@dataclass(frozen=True, kw_only=True)
class PromptResource:
    """An embedded resource (an @-mention or selection): ``path`` is absolute, ``text`` is the
    buffer text (possibly unsaved), ``start_line``/``end_line`` are 1-based when a range was
    selected."""

    path: Path
    text: str
    start_line: int | None = None
    end_line: int | None = None


PromptPart = PromptText | PromptResource


@dataclass(kw_only=True)
class Session:
    """One agent conversation. Only the event loop touches it (single writer)."""

    id: str
    cwd: Path
    roots: tuple[Path, ...]
    host: Host
    model: Model
    config: AgentConfig
    permissions: PermissionEngine
    workspace: Workspace
    tools: ToolRegistry
    system: tuple[str, ...]
    history: tuple[Message, ...] = ()
    read_state: ReadState = field(default_factory=ReadState)
    usage: Usage = field(default_factory=Usage)
    _task: asyncio.Task[TurnResult] | None = None

    @property
    def mode(self) -> PermissionMode:
        """The current permission mode."""
        return self.permissions.mode

    def set_mode(self, mode: PermissionMode) -> None:
        """Switch the permission mode and tell the client."""
        self.permissions.mode = mode
        self.host.emit(self.id, CurrentModeUpdate(current_mode_id=mode))

    @property
    def busy(self) -> bool:
        """Whether a prompt is running."""
        return self._task is not None and not self._task.done()

    async def prompt(self, parts: Sequence[PromptPart]) -> TurnResult:
        """Run one user turn to its end. Raises :class:`SessionError` if one is running.

        Cancellation (:meth:`cancel` or cancelling the awaiting task) ends the turn with
        ``stop_reason="cancelled"``; the history stays consistent.
        """
        if self.busy:
            raise SessionError(f"session {self.id} is already running a prompt; cancel it first")
        task = asyncio.ensure_future(self._run(_user_message(parts)))
        self._task = task
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            # The caller was cancelled ($/cancelRequest): unwind the turn so the history is
            # repaired, then let the cancellation through.
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise

    async def _run(self, user: Message) -> TurnResult:
        state = LoopState(
            messages=start_messages(self.history, user), max_tokens=self.config.max_tokens
        )
        env = LoopEnv(
            model=self.model,
            config=self.config,
            system=self.system,
            executor=ExecutorEnv(
                session_id=self.id,
                tools=self.tools,
                permissions=self.permissions,
                host=self.host,
                context=ToolContext(
                    session_id=self.id,
                    cwd=self.cwd,
                    roots=self.roots,
                    workspace=self.workspace,
                    read_state=self.read_state,
                    progress=lambda _text: None,
                ),
                emit=self._emit,
                headless=self.config.headless,
            ),
            commit=self._commit,
        )
        result: TurnFinished | None = None
        try:
            async for event in agent_loop(state, env):
                if isinstance(event, TurnFinished):
                    result = event
                else:
                    self._emit(event)
        except asyncio.CancelledError:
            result = TurnFinished(
                stop_reason="cancelled", terminal="aborted", usage=self.usage, requests=0
            )
        assert result is not None  # the loop always ends with TurnFinished
        self.usage = self.usage + result.usage
        return result

    def _commit(self, messages: tuple[Message, ...]) -> None:
        self.history = messages

    def _emit(self, update: SessionUpdate) -> None:
        self.host.emit(self.id, update)

    def cancel(self) -> None:
        """Cancel the running prompt, if any (idempotent)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()


def _user_message(parts: Sequence[PromptPart]) -> Message:
    chunks: list[str] = []
    for part in parts:
        if isinstance(part, PromptText):
            chunks.append(part.text)
        else:
            where = str(part.path)
            if part.start_line is not None:
                where += f" (lines {part.start_line}-{part.end_line or part.start_line})"
            chunks.append(f'<resource path="{where}">\n{part.text}\n</resource>')
    return Message.user_text("\n\n".join(chunks))


class SessionManager:
    """Creates and finds sessions. ``model_factory`` is called once per session (lazily
    importing the SDK); ``config`` holds model name, limits and the default mode."""

    def __init__(
        self,
        *,
        host: Host,
        model_factory: Callable[[], Model],
        config: AgentConfig,
        tools_factory: Callable[[], ToolRegistry] = default_tools,
    ) -> None:
        self.host = host
        self.model_factory = model_factory
        self.config = config
        self.tools_factory = tools_factory
        self.sessions: dict[str, Session] = {}

    def new(
        self,
        *,
        cwd: Path,
        additional_directories: Sequence[Path] = (),
        mode: PermissionMode | None = None,
    ) -> Session:
        """Create a session rooted at ``cwd`` (absolute) plus ``additional_directories``."""
        roots = tuple(
            dict.fromkeys([cwd.resolve(), *(d.resolve() for d in additional_directories)])
        )
        session_id = uuid.uuid4().hex
        cwd = cwd.resolve()
        session = Session(
            id=session_id,
            cwd=cwd,
            roots=roots,
            host=self.host,
            model=self.model_factory(),
            config=self.config,
            permissions=PermissionEngine(
                mode=mode or self.config.permission_mode,
                roots=roots,
                allowed_tools=self.config.allowed_tools,
                disallowed_tools=self.config.disallowed_tools,
                headless=self.config.headless,
            ),
            workspace=Workspace(host=self.host, roots=roots),
            tools=self.tools_factory(),
            system=system_prompt(cwd=cwd, roots=roots, append=self.config.append_system_prompt),
        )
        self.sessions[session_id] = session
        return session

    async def aclose(self) -> None:
        """Cancel running prompts and close every session's model client (server shutdown)."""
        for session in self.sessions.values():
            session.cancel()
        for session in self.sessions.values():
            if session._task is not None:
                await asyncio.gather(session._task, return_exceptions=True)
            await session.model.aclose()

    def get(self, session_id: str) -> Session:
        """The session with that id; raises :class:`SessionError` if there is none."""
        try:
            return self.sessions[session_id]
        except KeyError:
            raise SessionError(f"unknown session id: {session_id!r}") from None
