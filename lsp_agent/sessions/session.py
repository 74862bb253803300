"""A session: one conversation, with its roots, permission mode, history, memory, hooks and
checkpoints. A door drives it with :meth:`Session.prompt` / :meth:`Session.cancel`; updates
flow out through ``Host.emit``. Sessions are created by
:class:`~lsp_agent.sessions.manager.SessionManager`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.agent.env import AgentConfig, TurnEnv
from lsp_agent.agent.loop import LoopState, TurnResult, run_turn, start_messages
from lsp_agent.checkpoints.recorder import Checkpoints
from lsp_agent.config.store import SettingsStore
from lsp_agent.context.commands import CommandOutcome, CommandRegistry, parse_invocation
from lsp_agent.context.dates import SessionDate
from lsp_agent.context.engine import ContextEngine, ContextState
from lsp_agent.context.memory.changes import MEMORY_MARKERS, changes_reminder, dropped, seen
from lsp_agent.context.memory.render import render_memory, render_on_demand
from lsp_agent.context.memory.store import MemoryStore, batch_paths, hook_fields
from lsp_agent.context.memory.types import MemoryFile
from lsp_agent.context.start import with_start, without_memory
from lsp_agent.hooks.runner import HookOutcome, HookRunner
from lsp_agent.mcp.service import McpService
from lsp_agent.model.anthropic import REQUEST_LIMIT_BYTES
from lsp_agent.model.background import BackgroundRequests
from lsp_agent.model.base import Model
from lsp_agent.model.limits import ModelLimits
from lsp_agent.model.types import Message, TextBlock, Usage
from lsp_agent.permissions.engine import PermissionEngine
from lsp_agent.protocol.events import (
    AgentMessageChunk,
    AvailableCommand,
    AvailableCommandsUpdate,
    CurrentModeUpdate,
    SessionUpdate,
    TextContent,
    UsageUpdate,
)
from lsp_agent.protocol.host import Host
from lsp_agent.protocol.permissions import PermissionMode
from lsp_agent.protocol.prompt import PromptPart, PromptText
from lsp_agent.sessions import persist
from lsp_agent.sessions.context_wiring import build_engine, model_limits, turn_config
from lsp_agent.sessions.memory_note import add_memory_note, parse_memory_note
from lsp_agent.sessions.project_mode import (
    ModeApprovals,
    PendingMode,
    ask_to_confirm,
)
from lsp_agent.sessions.prompt_parts import only_text, prompt_text, user_message
from lsp_agent.sessions.recording import Recorder
from lsp_agent.sessions.rewind import PromptMark, begin_prompt, end_prompt
from lsp_agent.sessions.titles import start_title
from lsp_agent.sessions.working_set import Touched
from lsp_agent.tools.base import ReadState, ToolContext
from lsp_agent.tools.registry import ToolRegistry
from lsp_agent.workspace.workspace import Workspace

if TYPE_CHECKING:
    from lsp_agent.diagnostics.service import DiagnosticsService

log = logging.getLogger(__name__)


SESSION_START_CONTEXT = "SessionStart hook context:"
"""Heads the text SessionStart hooks added to the model's context (first prompt only)."""


MODES: tuple[tuple[PermissionMode, str, str], ...] = (
    ("default", "Default", "Ask before edits and commands"),
    ("acceptEdits", "Accept edits", "Edit files in the workspace without asking"),
    ("plan", "Plan", "Read-only: explore and plan, change nothing"),
    ("bypassPermissions", "Bypass permissions", "Run every tool without asking"),
    ("dontAsk", "Don't ask", "Deny whatever no rule allows, without asking"),
)
"""The permission modes a session offers (id, name, description)."""


class SessionError(Exception):
    """A request names an unknown session or one that is busy; the message says which."""


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
    settings: SettingsStore | None = None
    hooks: HookRunner | None = None
    diagnostics: DiagnosticsService | None = None
    """The door's diagnostics service (verification, the LSP tools), if it has one."""
    mcp: McpService | None = None
    """The project's MCP servers (shared with the other sessions of the directory): their
    tools join the built-ins at the start of every turn."""
    memory: MemoryStore | None = None
    """The session's memory files, read again for every turn (live edits, trust changes)."""
    memory_seen: dict[Path, str] | None = None
    """Each memory file's text as the conversation holds it (start block, then reminders);
    ``None``: the conversation has no start block yet (new, cleared or just resumed)."""
    dates: SessionDate | None = None
    """The date the conversation shows (``None``: never told again after the system prompt)."""
    _announced: set[Path] = field(default_factory=set)
    _drop_pending: bool = False  # the last tool batch found a shown memory file gone
    commands: CommandRegistry[Session] = field(default_factory=CommandRegistry)
    context: ContextState = field(default_factory=ContextState)
    touched: Touched | None = None
    folder: Path | None = None
    """The session's own folder (oversized tool results go under it)."""
    pending_mode: PendingMode | None = None
    """A repository's ``defaultMode`` to confirm before the first prompt (project_mode)."""
    mode_approvals: ModeApprovals = field(default_factory=lambda: ModeApprovals(path=None))
    recorder: Recorder | None = None  # the transcript's writer (None: not persisted)
    checkpoints: Checkpoints | None = None  # None: off (see sessions/rewind.py)
    prompt_marks: list[PromptMark] = field(default_factory=list)  # prompts and their ids
    title: str | None = None  # the title the model wrote (sessions/titles.py)
    background: BackgroundRequests | None = None  # built by titles.background_requests
    _engine: ContextEngine | None = None
    _task: asyncio.Task[TurnResult] | None = None
    _start: asyncio.Future[HookOutcome] | None = None
    _ended: bool = False

    @property
    def mode(self) -> PermissionMode:
        """The current permission mode."""
        return self.permissions.mode

    def available_modes(self) -> tuple[PermissionMode, ...]:
        """The modes this session may switch to (settings may disable ``bypassPermissions``)."""
        return self.permissions.available_modes()

    def set_mode(self, mode: PermissionMode) -> None:
        """Switch the permission mode and tell the client. Raises :class:`SessionError` for a
        mode the settings do not allow (``bypassPermissions`` when managed settings set
        ``permissions.disableBypassPermissionsMode: "disable"`` or a settings file is broken)."""
        available = self.available_modes()
        if mode not in available:
            raise SessionError(
                f"permission mode {mode!r} is not available in this session: it is disabled by "
                "settings (permissions.disableBypassPermissionsMode, or a broken settings file); "
                f"available modes: {', '.join(available)}"
            )
        self.permissions.mode = mode
        self._emit(CurrentModeUpdate(current_mode_id=mode))

    @property
    def ended(self) -> bool:
        """Whether :meth:`end` ran (the session is closed)."""
        return self._ended

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
        if self.pending_mode is not None and self.config.unattended is None:
            pending, self.pending_mode = self.pending_mode, None
            if (
                await ask_to_confirm(
                    self.host,
                    session_id=self.id,
                    pending=pending,
                    approvals=self.mode_approvals,
                    current=self.mode,
                )
                and pending.mode in self.available_modes()
            ):
                self.set_mode(pending.mode)
        invocation = parse_invocation(parts[0].text) if only_text(parts) else None
        note = parse_memory_note(parts[0].text) if only_text(parts) else None
        too_large = _oversized(parts)
        if too_large is not None:
            # Refused before it touches the history: a prompt the endpoint must reject (HTTP
            # 413) would otherwise fail every later request of the session too.
            runner: Awaitable[TurnResult] = _refused(too_large)
        elif invocation is not None:
            runner = self._command(self.commands.dispatch(self, invocation))
        elif note is not None:
            runner = self._command(add_memory_note(self, note))
        else:
            self.context.prompts.append(prompt_text(parts))
            if len(self.context.prompts) == 1:
                start_title(self, prompt_text(parts))
            mark = await begin_prompt(self, prompt_text(parts))
            runner = self._run(user_message(parts))
            if self.recorder is not None:
                self.recorder.begin_turn(prompt_text(parts), message_id=mark.message_id)
        task = asyncio.ensure_future(persist.record_turn(self, runner))
        task.add_done_callback(lambda _: end_prompt(self))
        self._task = task
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            # The caller was cancelled ($/cancelRequest): unwind the turn so the history is
            # repaired, then let the cancellation through.
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise

    async def _command(self, outcome: Awaitable[CommandOutcome]) -> TurnResult:
        """Run a slash command; its text is shown as the answer, or its prompt runs a turn."""
        done = await outcome
        if done.prompt is not None:
            parts = [PromptText(text=done.prompt)]
            self.context.prompts.append(done.prompt)
            if self.recorder is not None:
                self.recorder.begin_turn(done.prompt)
            return await self._run(user_message(parts))
        self._emit(AgentMessageChunk(content=TextContent(text=done.text)))
        return TurnResult(
            stop_reason="end_turn",
            terminal="completed",
            usage=Usage(),
            requests=0,
            final_text=done.text,
            error=done.text if done.is_error else None,
        )

    @property
    def limits(self) -> ModelLimits:
        """The model's window and output limits (``config.context_window`` overrides)."""
        return model_limits(self.config)

    @property
    def max_tokens(self) -> int:
        """Output cap of a request: ``config.max_tokens``, at most the model's output limit."""
        return min(self.config.max_tokens, self.limits.max_output_tokens)

    def engine(self) -> ContextEngine:
        """The session's context engine (built once)."""
        if self._engine is None:
            self._engine = build_engine(self)
        return self._engine

    async def clear(self) -> None:
        """``/clear``: forget the conversation (SessionEnd ``clear``, then SessionStart
        ``clear`` whose context reaches the next prompt)."""
        self.history = ()
        if self.background is not None:
            self.background.cancel("summary")
        self.memory_seen = None  # the next prompt opens with the memory as it is then
        if self.dates is not None:
            self.dates.restart()
        self.context.reset()
        self._emit(UsageUpdate(used=0, size=self.limits.context_window))
        self.read_state.digests.clear()
        self.read_state.versions.clear()
        self.read_state.calls.clear()
        self.touched = None
        if self.hooks is not None:
            try:
                await self.hooks.session_end(reason="clear")
            except Exception:
                log.exception("SessionEnd hooks of %s failed", self.id)
            if self._start is None:
                self._start = asyncio.ensure_future(self.hooks.session_start(source="clear"))

    async def _run(self, user: Message) -> TurnResult:
        last: list[LoopState] = []
        try:
            user = await self._with_start_context(user)
            if self.mcp is not None:
                user = await self.mcp.with_resources(user)  # @server:uri mentions
            history, user = self._with_memory(self.history, user)
            date_note = self.dates.reminder() if self.dates is not None else None
            if date_note is not None:
                user = Message(role="user", content=(TextBlock(text=date_note), *user.content))
            if self.hooks is not None and self.settings is not None:
                self.hooks.env = self.settings.env()  # settings reloads apply per turn
            state = LoopState(
                messages=start_messages(history, user),
                before=self.history,
                max_tokens=self.max_tokens,
            )
            tools, system = await self._turn_tools()
            env = TurnEnv(
                model=self.model,
                config=turn_config(self.config, self.limits),
                system=system,
                tools=tools,
                permissions=self.permissions,
                hooks=self.hooks,
                ctx=self.tool_context(),
                commit=self._commit,
                aborted=last.append,
                instructions=self._after_batch,
                rewrite=self._without_dropped,
                context=self.engine(),
                results_dir=self.folder,
            )
            result = await run_turn(state, env)
        except asyncio.CancelledError:
            # The requests that finished before the cancel were paid for: count them.
            done = last[-1] if last else None
            result = TurnResult(
                stop_reason="cancelled",
                terminal="aborted",
                usage=done.usage if done is not None else Usage(),
                requests=done.requests if done is not None else 0,
            )
        self.usage = self.usage + result.usage
        return result

    def tool_context(self) -> ToolContext:
        """The context every tool call of this session runs in (one per turn or command)."""
        return ToolContext(
            session_id=self.id,
            cwd=self.cwd,
            roots=self.roots,
            workspace=self.workspace,
            read_state=self.read_state,
            diagnostics=self.diagnostics,
            emit=self._emit,
        )

    async def _turn_tools(self) -> tuple[ToolRegistry, tuple[str, ...]]:
        """The built-ins, then the MCP tools of the servers ready now (sorted, so the cached
        prompt prefix stays stable), and the system prompt with the servers' instructions."""
        system = self.system_now()
        if self.mcp is None:
            return self.tools, system
        try:
            extra = await self.mcp.tools()
        except Exception:
            log.exception("listing MCP tools failed; this turn has none")
            return self.tools, system
        if extra:
            from lsp_agent.mcp.turn_tools import TurnTools  # the SDK is loaded: tools exist

            tools: ToolRegistry = TurnTools(tools=[*self.tools, *extra])
        else:
            tools = self.tools
        instructions = self.mcp.instructions()
        return tools, (*system, instructions) if instructions else system

    def system_now(self) -> tuple[str, ...]:
        """The system prompt: fixed for the whole session (byte-stable for the prompt cache;
        memory files open the conversation instead, see :meth:`_with_memory`)."""
        return self.system

    def start_memory(self) -> str | None:
        """The memory files as they are now, rendered for the conversation's start block; the
        conversation is taken to hold exactly these from now on. Used when the conversation
        starts again (first prompt, ``/clear``, compaction)."""
        if self.dates is not None:
            self.dates.restart()
        if self.memory is None:
            return None
        # Files loaded on demand are not in the new start: the next touch brings them back.
        self.memory.added, self.memory.triggers = (), {}
        files = self.memory.load().files
        self._announce(files)
        self.memory_seen = seen(files)
        return render_memory(files)

    def _with_memory(
        self, history: tuple[Message, ...], user: Message
    ) -> tuple[tuple[Message, ...], Message]:
        """The history and prompt of a turn with the memory files in place: a conversation that
        starts (or was resumed: its cached prefix is long gone) opens with the start block; in
        a running one, files changed since the conversation last showed them are appended to
        the prompt as a reminder, so the cached prefix stays as it was."""
        if self.memory is None:
            return history, user
        if self.memory_seen is None or not history:
            memory = self.start_memory()
            if history:
                return with_start(history, memory), user
            return history, with_start((user,), memory)[0]
        files = self.memory.load().files
        self._announce(files)
        files = self._shown_now(files)
        if dropped(self.memory_seen, files):
            # A file the conversation showed no longer applies: removed, or the workspace is
            # no longer trusted. Telling the model to ignore text it still reads is not enough
            # when the user has withdrawn trust, so every memory text leaves the conversation
            # and it opens again with what applies now (the cached prefix is rewritten, once).
            self.memory.added, self.memory.triggers = (), {}
            kept = without_memory(history, markers=MEMORY_MARKERS)
            return with_start(kept, self.start_memory()), user
        note = self._memory_changes(files)
        if note is None:
            return history, user
        return history, Message(role="user", content=(TextBlock(text=note), *user.content))

    def _memory_changes(self, files: Sequence[MemoryFile]) -> str | None:
        """The reminder for memory ``files`` (loaded now) that changed since the conversation
        showed them, which it then holds (``None``: nothing changed)."""
        if self.memory_seen is None:
            return None
        note = changes_reminder(self.memory_seen, files)
        if note is not None:
            self.memory_seen = seen(files)
        return note

    def _after_batch(self, calls: tuple[tuple[str, dict[str, Any], str | None], ...]) -> str | None:
        """The text appended after a batch of finished tool calls (name, input, result text),
        before the next request (``None``: nothing): the memory files they bring in, memory
        files changed meanwhile (the agent may have edited one), and a changed date. A file
        that no longer applies is taken out right after (:meth:`_without_dropped`)."""
        texts: list[str | None] = []
        self._drop_pending = False
        if self.memory is not None:
            added, loaded = self.memory.after_batch(batch_paths(calls))
            self._announce(added)
            texts.append(render_on_demand(added))
            files = loaded.files
            if self.memory_seen is not None:
                self.memory_seen |= seen(added)
                self._announce(files)
                files = self._shown_now(files)
                if dropped(self.memory_seen, files):
                    self._drop_pending = True  # taken out by _without_dropped, next
                else:
                    texts.append(self._memory_changes(files))
        texts.append(self.dates.reminder() if self.dates is not None else None)
        kept = [t for t in texts if t]
        return "\n\n".join(kept) if kept else None

    def _shown_now(self, files: tuple[MemoryFile, ...]) -> tuple[MemoryFile, ...]:
        """The start ``files`` (loaded now) and, as they are now, the files loaded on demand
        that the conversation shows, so an edit of either arrives as a reminder."""
        assert self.memory is not None and self.memory_seen is not None
        shown = self.memory_seen
        return (*files, *(f for f in self.memory.on_demand_now() if f.path in shown))

    def _without_dropped(self, messages: tuple[Message, ...]) -> tuple[Message, ...]:
        """``messages`` (the history after a tool batch) with every memory text taken out and
        the start block rebuilt when a file the conversation showed no longer applies (deleted,
        emptied, workspace untrusted: found by :meth:`_after_batch` just before, which checks
        the files once per batch), so the turn's next request no longer carries it;
        ``messages`` itself when none was dropped."""
        if self.memory is None or self.memory_seen is None or not self._drop_pending:
            return messages
        self._drop_pending = False
        self.memory.added, self.memory.triggers = (), {}
        kept = without_memory(messages, markers=MEMORY_MARKERS)
        return with_start(kept, self.start_memory())

    def _announce(self, files: Sequence[MemoryFile]) -> None:
        """Fire ``InstructionsLoaded`` once per file and session (in the background)."""
        if self.hooks is None or self.memory is None:
            return
        for file in files:
            if file.path in self._announced:
                continue
            self._announced.add(file.path)
            fields = hook_fields(file, trigger=self.memory.triggers.get(file.path))
            if fields is not None:
                self.hooks.instructions_loaded(fields)

    async def _with_start_context(self, user: Message) -> Message:
        """Wait for the SessionStart hooks (first prompt only; bounded by their timeouts) and
        put what they added to the context in front of the prompt."""
        start, self._start = self._start, None
        if start is None:
            return user
        try:
            outcome = await asyncio.shield(start)
        except asyncio.CancelledError:
            if not start.cancelled():
                self._start = start  # this turn was cancelled, not the hooks: keep them
                raise
            return user
        except Exception:
            log.exception("SessionStart hooks failed")
            return user
        if not outcome.context:
            return user
        note = TextBlock(text="\n".join([SESSION_START_CONTEXT, *outcome.context]))
        return Message(role="user", content=(note, *user.content))

    def available_commands(self) -> tuple[AvailableCommand, ...]:
        """The slash commands this session accepts (ACP ``AvailableCommand``)."""
        return tuple(AvailableCommand.model_validate(c) for c in self.commands.advertised())

    def advertise_commands(self) -> None:
        """Send ``available_commands_update`` once the current request has been answered (the
        client learns the session id from that answer). Needs a running event loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        update = AvailableCommandsUpdate(available_commands=self.available_commands())
        loop.call_soon(self._emit, update)

    def start_hooks(self, source: str = "startup") -> None:
        """Run the ``SessionStart`` hooks (``source``: startup, resume...) in the background;
        their context reaches the model with the first prompt. Needs a running event loop."""
        if self.hooks is None or self._start is not None:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            log.debug("no running event loop: SessionStart hooks of %s skipped", self.id)
            return
        self._start = asyncio.ensure_future(self.hooks.session_start(source=source))

    async def end(self, *, reason: str = "other") -> None:
        """Run the ``SessionEnd`` hooks once (bounded by their timeouts) and wait for
        background hooks. ``reason`` is Claude Code's: clear, logout, prompt_input_exit, other."""
        if self._ended:
            return
        self._ended = True
        if self.background is not None:
            await self.background.aclose()
        if self._start is not None and not self._start.done():
            self._start.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._start
        if self.recorder is not None:
            self.recorder.close()
        if self.hooks is None:
            return
        try:
            await self.hooks.session_end(reason=reason)
        except Exception:
            log.exception("SessionEnd hooks of %s failed", self.id)
        await self.hooks.aclose()

    def _commit(self, messages: tuple[Message, ...]) -> None:
        self.history = messages
        persist.record_history(self)

    def _emit(self, update: SessionUpdate) -> None:
        if isinstance(update, CurrentModeUpdate):  # the only update the transcript records
            persist.record_update(self, update)
        self.host.emit(self.id, update)

    def cancel(self) -> None:
        """Cancel the running prompt, if any (idempotent)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()


def _oversized(parts: Sequence[PromptPart]) -> str | None:
    """Why the prompt is too large to send (``None``: it is not): its text alone is over the
    Messages API's request size limit (bytes)."""
    size = sum(len(part.text.encode("utf-8", "surrogatepass")) for part in parts)
    if size <= REQUEST_LIMIT_BYTES:
        return None
    return (
        f"The prompt is {size:,} bytes; the model endpoint accepts at most "
        f"{REQUEST_LIMIT_BYTES:,} bytes per request. It was not sent and is not kept in the "
        "conversation: attach less, or point the agent at the files instead."
    )


async def _refused(message: str) -> TurnResult:
    return TurnResult(
        stop_reason="end_turn", terminal="completed", usage=Usage(), requests=0, error=message
    )
