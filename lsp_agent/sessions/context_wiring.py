"""A session's context engine and what it reads from the session: the model's limits, the
working-set block built from server state, what each ``Read`` saw, the PreCompact/PostCompact
hooks (SessionStart ``compact`` after a compaction), and ``/compact``.

Functions of a :class:`~lsp_agent.sessions.manager.Session` (passed explicitly), kept out of
the session's module so each stays small.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.agent.env import AgentConfig
from lsp_agent.agent.loop import compacted_update
from lsp_agent.context.clearing import FileState, ReadRecord
from lsp_agent.context.commands import CommandOutcome
from lsp_agent.context.compaction import CompactPolicy, Trigger
from lsp_agent.context.engine import CompactionError, ContextEngine
from lsp_agent.model.limits import ModelLimits, limits_for
from lsp_agent.protocol.events import UsageUpdate
from lsp_agent.sessions.titles import background_requests
from lsp_agent.sessions.working_set import render_working_set, touched_files

if TYPE_CHECKING:
    from lsp_agent.sessions.manager import Session

log = logging.getLogger(__name__)


def model_limits(config: AgentConfig) -> ModelLimits:
    """The model's window and output limits (tokens); ``config.context_window`` overrides
    the model table's window."""
    found = limits_for(config.model)
    if config.context_window is not None:
        return dataclasses.replace(found, context_window=config.context_window)
    return found


def turn_config(config: AgentConfig, limits: ModelLimits) -> AgentConfig:
    """``config`` for one turn: the output cap after a ``max_tokens`` stop is at most what the
    model table allows the model (``escalated_output``; a request above the model's maximum
    output would be refused)."""
    cap = min(config.escalated_max_tokens, limits.escalated_output)
    if cap == config.escalated_max_tokens:
        return config
    return dataclasses.replace(config, escalated_max_tokens=cap)


def _auto_compact(session: Session) -> bool | None:
    """The ``autoCompact`` setting: the session's config when a door set it, else the
    highest-precedence settings layer that holds a boolean (``None``: not set)."""
    if session.config.auto_compact is not None or session.settings is None:
        return session.config.auto_compact
    for layer in session.settings.loaded.applied():  # highest precedence first
        value = (layer.settings.model_extra or {}).get("autoCompact")
        if isinstance(value, bool):
            return value
    return None


def build_engine(session: Session) -> ContextEngine:
    """The context engine of ``session``: the settings' ``env`` over the process environment
    decide the compaction policy (``DISABLE_AUTO_COMPACT``, ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE``,
    ``autoCompact``)."""
    environ = session.settings.env() if session.settings is not None else {}
    env = {**os.environ, **environ}

    async def pre_compact(trigger: Trigger, focus: str) -> str | None:
        return await _pre_compact(session, trigger, focus)

    async def post_compact(trigger: Trigger, summary: str) -> None:
        await _post_compact(session, trigger, summary)

    return ContextEngine(
        model=session.model,
        model_name=session.config.model,
        limits=session.limits,
        state=session.context,
        policy=CompactPolicy.from_env(env, auto_setting=_auto_compact(session)),
        environ=env,
        working_set=lambda: _working_set(session),
        start=session.start_memory,
        reads=lambda: _reads(session),
        file_state=lambda path: _file_state(session, path),
        pre_compact=pre_compact,
        post_compact=post_compact,
        background=background_requests(session),
    )


def _working_set(session: Session) -> str:
    session.touched = touched_files(session.history, session.touched)
    # The memory files are read again for the compacted history's start block, so the
    # working set does not repeat them.
    return render_working_set(
        touched=session.touched, host=session.host, diagnostics=session.diagnostics
    )


def _reads(session: Session) -> dict[str, ReadRecord]:
    return {
        call: ReadRecord(path=str(path), seen=FileState(version=version, digest=digest))
        for call, (path, version, digest) in session.read_state.calls.items()
    }


def _file_state(session: Session, path: str) -> FileState | None:
    try:
        snapshot = session.workspace.read(Path(path))
    except Exception:
        return None
    return FileState(version=snapshot.version, digest=snapshot.digest)


async def _pre_compact(session: Session, trigger: Trigger, focus: str) -> str | None:
    if session.hooks is None:
        return None
    outcome = await session.hooks.pre_compact(
        trigger="manual" if trigger == "manual" else "auto", custom_instructions=focus
    )
    if outcome.block:
        return outcome.reason or "blocked"
    return None


async def _post_compact(session: Session, trigger: Trigger, summary: str) -> None:
    if session.hooks is None:
        return
    hook_trigger = "manual" if trigger == "manual" else "auto"
    try:
        await session.hooks.post_compact(trigger=hook_trigger, compact_summary=summary)
        await session.hooks.session_start(source="compact")
    except Exception:
        log.exception("PostCompact hooks failed")


async def compact(session: Session, focus: str = "") -> CommandOutcome:
    """``/compact [focus]``: summarise the history of ``session`` now (PreCompact
    ``manual``); the answer is the one compaction line, or why nothing changed."""
    engine = session.engine()
    if not engine.policy.manual:
        return CommandOutcome(text="Compaction is disabled (DISABLE_COMPACT).", is_error=True)
    try:
        boundary, messages = await engine.compact(
            system=session.system_now(),
            tools=tuple(t.spec() for t in session.tools),
            messages=session.history,
            trigger="manual",
            max_tokens=session.max_tokens,
            focus=focus,
        )
    except CompactionError as exc:
        return CommandOutcome(text=f"Compaction failed: {exc}. Nothing changed.", is_error=True)
    session.history = messages
    session.host.emit(session.id, compacted_update(boundary, session.context.last_summary))
    session.host.emit(session.id, UsageUpdate(used=boundary.tokens_after, size=engine.window))
    line = compaction_line(
        boundary.tokens_before, boundary.tokens_after, boundary.prompts_kept, boundary.files
    )
    dropped = engine.dropped_note()
    return CommandOutcome(text=f"{line}\n{dropped}" if dropped else line)


def compaction_line(before: int, after: int, prompts: int, files: int) -> str:
    """The one line shown for a compaction: "Compacted: 182k → 31k tokens; kept 4 instructions,
    7 files"."""

    def k(n: int) -> str:
        return f"{n / 1000:.1f}k" if n >= 1000 else str(n)

    return (
        f"Compacted: {k(before)} → {k(after)} tokens; kept {prompts} "
        f"instruction{'s' if prompts != 1 else ''}, {files} file{'s' if files != 1 else ''}"
    )
