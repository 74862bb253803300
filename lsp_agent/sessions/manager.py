"""The session manager: creates, finds and closes sessions (:class:`~.session.Session`, one
conversation each, with its roots, mode and history, lives in :mod:`.session`).

A door creates sessions through :class:`SessionManager` and drives them with
:meth:`Session.prompt` / :meth:`Session.cancel`. Updates flow out through ``Host.emit``.

With a settings factory, every session's permission engine reads the project's settings
store (rules, ``defaultMode``, ``additionalDirectories``; "always" answers are saved through
it) and its hooks run from the same store: ``SessionStart`` when the session is created,
``PreToolUse``/``PostToolUse``/``UserPromptSubmit``/``Stop`` during turns, ``SessionEnd`` at
:meth:`SessionManager.aclose`.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.agent.env import AgentConfig
from lsp_agent.agent.prompt import system_prompt
from lsp_agent.config.store import SettingsStore
from lsp_agent.context.dates import SessionDate
from lsp_agent.context.memory.approvals import ImportApprovals
from lsp_agent.context.memory.automemory import auto_memory_dir
from lsp_agent.context.memory.discover import managed_memory_path
from lsp_agent.context.memory.loader import MemorySpec
from lsp_agent.context.memory.options import MemoryOptions, memory_options
from lsp_agent.context.memory.store import MemoryStore
from lsp_agent.hooks.runner import HookRunner
from lsp_agent.mcp.service import McpService
from lsp_agent.model.anthropic import apply_settings_env
from lsp_agent.model.base import Model
from lsp_agent.permissions.engine import PermissionEngine
from lsp_agent.protocol.host import Host
from lsp_agent.protocol.permissions import PermissionMode
from lsp_agent.sessions import persist
from lsp_agent.sessions.commands import builtin_commands
from lsp_agent.sessions.mcp_commands import watch_mcp_prompts
from lsp_agent.sessions.project_mode import (
    ModeApprovals,
    pending_project_mode,
)
from lsp_agent.sessions.rewind import attach_checkpoints
from lsp_agent.sessions.session import (
    MODES,
    SESSION_START_CONTEXT,
    Session,
    SessionError,
)
from lsp_agent.tools.registry import ToolRegistry, default_tools
from lsp_agent.workspace.workspace import Workspace

if TYPE_CHECKING:
    from lsp_agent.diagnostics.service import DiagnosticsService

__all__ = [
    "MODES",
    "SESSION_START_CONTEXT",
    "Session",
    "SessionError",
    "SessionManager",
    "SettingsFactory",
]

log = logging.getLogger(__name__)

SettingsFactory = Callable[[Path], SettingsStore]
"""Returns the settings store of a project directory (absolute, resolved); a door keeps one
store per directory and may return the same store for several sessions."""


def _layers(store: SettingsStore | None) -> list[tuple[str, dict[str, Any]]]:
    """The applied settings layers as (source, keys the settings model does not know)."""
    if store is None:
        return []
    return [(lay.source, lay.settings.model_extra or {}) for lay in store.loaded.applied()]


class SessionManager:
    """Creates and finds sessions. ``model_factory`` is called once per session (lazily
    importing the SDK); ``config`` holds model name, limits and the default mode.

    ``settings`` returns the :class:`SettingsStore` of a session's directory: its rules,
    ``defaultMode`` and hooks then apply to the session, and "always" answers with a
    ``project``/``user`` scope are saved through it. Without it sessions use only ``config``
    (CLI-style rules) and run no hooks. ``diagnostics`` is the door's diagnostics service,
    shared by every session's verification and language-server tools. Doors build the manager
    with :func:`lsp_agent.sessions.compose.build_sessions`.
    """

    def __init__(
        self,
        *,
        host: Host,
        model_factory: Callable[[], Model],
        config: AgentConfig,
        tools_factory: Callable[[], ToolRegistry] = default_tools,
        settings: SettingsFactory | None = None,
        mcp: Callable[[Path], McpService | None] | None = None,
        diagnostics: DiagnosticsService | None = None,
        managed_memory: Path | None = None,
        import_approvals: ImportApprovals | None = None,
        mode_approvals: ModeApprovals | None = None,
        checkpoints_dir: Path | None = None,
        today: Callable[[], date] = date.today,
    ) -> None:
        self.host = host
        self.today = today
        """The local date now: the sessions' system prompts show it, and a session whose
        date changes tells the model (:mod:`lsp_agent.context.dates`)."""
        self.checkpoints_dir = checkpoints_dir  # None: sessions take no checkpoints
        self.diagnostics = diagnostics
        self.import_approvals = import_approvals or ImportApprovals(path=None)
        self.mode_approvals = mode_approvals or ModeApprovals(path=None)
        self.managed_memory = managed_memory or managed_memory_path()
        self.model_factory = model_factory
        self.config = config
        self.tools_factory = tools_factory
        self.settings = settings
        self.mcp = mcp
        """Returns the MCP service of a project directory (shared by its sessions), if any."""
        self.sessions: dict[str, Session] = {}
        self.last_used: dict[str, float] = {}
        """When each session was last named by a request (:func:`time.monotonic` seconds);
        read by :mod:`lsp_agent.sessions.idle`."""

    def new(
        self,
        *,
        cwd: Path,
        additional_directories: Sequence[Path] = (),
        mode: PermissionMode | None = None,
        session_id: str | None = None,
        source: str = "startup",
    ) -> Session:
        """Create a session rooted at ``cwd`` (absolute) plus ``additional_directories``
        (``session_id``: a resumed or forked session's id; ``source``: SessionStart's).

        The mode is ``mode``, else the settings' ``permissions.defaultMode``, else
        ``config.permission_mode``. Raises ``ValueError`` for a malformed
        ``--allowedTools``/``--disallowedTools`` rule. Starts the ``SessionStart`` hooks in the
        background when an event loop is running.
        """
        roots = tuple(
            dict.fromkeys([cwd.resolve(), *(d.resolve() for d in additional_directories)])
        )
        session_id = session_id or str(uuid.uuid4())  # Claude Code's session ids are UUIDs
        cwd = cwd.resolve()
        store = self.settings(cwd) if self.settings is not None else None
        settings_mode = store.loaded.default_mode() if store is not None else None
        pending = pending_project_mode(store.loaded, cwd=cwd) if store and not mode else None
        if pending is not None and self.mode_approvals.approved(pending):
            pending = None
        elif pending is not None:
            settings_mode = None  # the repository's mode waits for the user's confirmation
        home = store.loader.home if store is not None else Path.home()
        auto_memory = (
            auto_memory_dir(home=home, cwd=cwd)
            if memory_options(
                _layers(store), store.env() if store is not None else None
            ).auto_memory
            else None
        )
        folder = persist.session_folder(self.config.state_dir, session_id)
        # The session may always Read the tool results it saved (a path rule, so it goes
        # through the permission engine like any other allow).
        own_results = f"Read(/{folder}/**)"
        permissions = PermissionEngine(
            auto_memory=auto_memory,
            mode=mode or settings_mode or self.config.permission_mode,
            roots=roots,
            cwd=cwd,
            home=store.loader.home if store is not None else None,
            allowed_tools=(*self.config.allowed_tools, own_results),
            disallowed_tools=self.config.disallowed_tools,
            policy=store.policy if store is not None else None,
            persist=store.persist if store is not None else None,
        )
        if permissions.mode not in permissions.available_modes():
            # Doors say why to the user (run -p: a broken file or disableBypassPermissionsMode).
            log.info(
                "permission mode %s is off (disableBypassPermissionsMode or a broken settings "
                "file); session starts in default mode",
                permissions.mode,
            )
            permissions.mode = "default"
        recorder = persist.new_recorder(
            self.config, session_id=session_id, cwd=cwd, roots=roots, mode=permissions.mode
        )
        hooks = (
            HookRunner(hooks=store.hook_matchers, cwd=cwd, session_id=session_id, env=store.env())
            if store is not None
            else None
        )
        if hooks is not None and recorder is not None:
            hooks.transcript_path = str(recorder.transcript.path)
        dates = SessionDate.starting(self.today)
        session = Session(
            id=session_id,
            cwd=cwd,
            roots=roots,
            host=self.host,
            model=apply_settings_env(self.model_factory(), store.env() if store else {}),
            config=self.config,
            permissions=permissions,
            workspace=Workspace(host=self.host, roots=roots),
            tools=self.tools_factory(),
            system=system_prompt(
                cwd=cwd,
                roots=roots,
                append=self.config.append_system_prompt,
                replace=self.config.system_prompt,
                today=dates.start,
            ),
            dates=dates,
            settings=store,
            hooks=hooks,
            mcp=self.mcp(cwd) if self.mcp is not None else None,
            diagnostics=self.diagnostics,
            memory=self._memory(cwd=cwd, roots=roots, store=store, auto_memory=auto_memory),
            commands=builtin_commands(),
            folder=folder,
            pending_mode=pending,
            mode_approvals=self.mode_approvals,
            recorder=recorder,
        )
        attach_checkpoints(session, self.checkpoints_dir)
        watch_mcp_prompts(session)  # /mcp__server__prompt commands, kept in step
        self.sessions[session_id] = session
        self.last_used[session_id] = time.monotonic()
        session.start_hooks(source)
        return session

    def _memory(
        self,
        *,
        cwd: Path,
        roots: tuple[Path, ...],
        store: SettingsStore | None,
        auto_memory: Path | None,
    ) -> MemoryStore:
        """The session's memory store. Trust and settings are read from ``store`` at every
        load; without a settings store the workspace counts as untrusted (fail closed).
        ``auto_memory`` is the auto-memory folder (``None``: auto memory off)."""
        home = store.loader.home if store is not None else Path.home()
        host = self.host
        auto_file = auto_memory / "MEMORY.md" if auto_memory is not None else None
        kept: list[tuple[object, MemoryOptions]] = []  # the options of the settings load
        made: list[tuple[tuple[object, ...], MemorySpec]] = []  # the last spec, its inputs

        def spec() -> MemorySpec:
            loaded = store.loaded if store is not None else None
            if not kept or kept[0][0] is not loaded:  # a reload replaces ``store.loaded``
                env = store.env() if store is not None else None
                kept[:] = [(loaded, memory_options(_layers(store), env))]
            options = kept[0][1]
            trusted = store.trusted if store is not None else False
            imports = self.import_approvals.get(cwd)
            # The same spec object while its inputs are the same: the store compares specs
            # at every tool batch, where equal paths cost a comparison each and identity none.
            key = (trusted, imports, options, self.managed_memory)
            if made and made[0][0] == key:
                return made[0][1]
            built = MemorySpec(
                cwd=cwd,
                roots=roots,
                home=home,
                managed=self.managed_memory,
                trusted=trusted,
                excludes=options.excludes,
                instruction_files=options.instruction_files,
                external_imports=imports,
                auto_memory=auto_file if options.auto_memory else None,
            )
            made[:] = [(key, built)]
            return built

        def overlay(path: Path) -> str | None:
            snapshot = host.buffer(path)
            return snapshot.text if snapshot is not None else None

        return MemoryStore(spec=spec, overlay=overlay)

    async def aclose(self, *, reason: str = "other") -> None:
        """Cancel running prompts, run every session's ``SessionEnd`` hooks (bounded by their
        timeouts) and close the model clients (server shutdown, end of a one-prompt run)."""
        for session in self.sessions.values():
            session.cancel()
        for session in self.sessions.values():
            if session._task is not None:
                await asyncio.gather(session._task, return_exceptions=True)
        await asyncio.gather(*(s.end(reason=reason) for s in self.sessions.values()))
        for session in self.sessions.values():
            await session.model.aclose()

    async def close(self, session_id: str, *, reason: str = "other") -> Session:
        """Release session ``session_id``: cancel its turn (tool processes are killed and
        pending editor requests withdrawn as for any cancel), run its ``SessionEnd`` hooks,
        close its model client (its connection: one fd), close the documents only it had
        synced to managed language servers, and forget it. Returns the closed session; raises
        :class:`SessionError` for an unknown id. Closing twice is an unknown id."""
        session = self.get(session_id)
        del self.sessions[session_id]
        self.last_used.pop(session_id, None)
        session.cancel()
        if session._task is not None:
            await asyncio.gather(session._task, return_exceptions=True)
            session._task = None
        await session.end(reason=reason)
        await session.model.aclose()
        if self.diagnostics is not None:
            still_read = {p for s in self.sessions.values() for p in s.read_state.digests}
            self.diagnostics.release_documents(
                [p for p in session.read_state.digests if p not in still_read],
                keep=lambda path: self.host.buffer(path) is not None,
            )
        return session

    def get(self, session_id: str) -> Session:
        """The session with that id (a request names it: it counts as used now); raises
        :class:`SessionError` if there is none."""
        try:
            session = self.sessions[session_id]
        except KeyError:
            raise SessionError(f"unknown session id: {session_id!r}") from None
        self.last_used[session_id] = time.monotonic()
        return session
