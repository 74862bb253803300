"""Where a session keeps its files, and the glue between a session and its transcript: the
recorder a new session gets, and the end of each turn (sync, ``turn_end``, fsync, and telling
the user once when persistence went off).
"""

from __future__ import annotations

from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.agent.env import AgentConfig
from lsp_agent.agent.loop import TurnResult
from lsp_agent.model.types import Usage
from lsp_agent.protocol.events import (
    AgentMessageChunk,
    CurrentModeUpdate,
    SessionUpdate,
    TextContent,
)
from lsp_agent.sessions.recording import Recorder
from lsp_agent.sessions.rewind import record_checkpoint
from lsp_agent.store.paths import data_dir, transcript_path
from lsp_agent.store.transcript import Transcript

if TYPE_CHECKING:
    from lsp_agent.sessions.manager import Session


def session_folder(state_dir: Path | None, session_id: str) -> Path:
    """The folder of session ``session_id``: ``<state_dir>/sessions/<id>``, ``state_dir``
    defaulting to the user state directory (``~/.local/state/lsp-agent`` on Linux)."""
    if state_dir is None:
        import platformdirs

        state_dir = platformdirs.user_state_path("lsp-agent")
    return state_dir.resolve() / "sessions" / session_id


def new_recorder(
    config: AgentConfig,
    *,
    session_id: str,
    cwd: Path,
    roots: tuple[Path, ...],
    mode: str,
    leaf: str | None = None,
) -> Recorder | None:
    """The recorder of a new session (``None`` when ``config.persist`` is off). Nothing is
    written until the session's first message; ``leaf`` continues an existing transcript."""
    if not config.persist:
        return None
    path = transcript_path(data_dir(config.data_dir), cwd, session_id)
    transcript = Transcript(path=path, session_id=session_id, leaf=leaf)
    meta = {
        "cwd": str(cwd),
        "roots": [str(r) for r in roots],
        "model": config.model,
        "mode": mode,
    }
    return Recorder(transcript=transcript, meta=meta)


def record_history(session: Session) -> None:
    """Record the session's history as the loop just committed it."""
    if session.recorder is not None:
        session.recorder.sync(
            session.history,
            boundaries=session.context.boundaries,
            summary=session.context.last_summary,
        )


def record_update(session: Session, update: SessionUpdate) -> None:
    """Record what an update the session sends changes in its state (the mode)."""
    if session.recorder is not None and isinstance(update, CurrentModeUpdate):
        session.recorder.mode(update.current_mode_id)


async def record_turn(session: Session, runner: Awaitable[TurnResult]) -> TurnResult:
    """Run a prompt (or slash command) and record its end, also when it is cancelled."""
    stop = "cancelled"
    usage: Usage | None = None
    try:
        result = await runner
        stop, usage = result.stop_reason, result.usage
        return result
    finally:
        recorder = session.recorder
        if recorder is not None:
            record_history(session)
            record_checkpoint(session)
            recorder.end_turn(stop, usage)
            notice = recorder.notice()
            if notice is not None:
                session.host.emit(session.id, AgentMessageChunk(content=TextContent(text=notice)))
