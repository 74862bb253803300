"""Persisted sessions over LSP: ``lspAgent/session/list`` (open and saved sessions),
``lspAgent/session/load`` (ACP ``session/load``: the history is replayed as
``lspAgent/session/update`` notifications, then the request is answered and the session goes
on) and ``lspAgent/session/fork`` (docs/protocol.md §4.5, §4.7, §4.8; docs/sessions.md).

Imported on first use, like :mod:`lsp_agent.lsp.sessions_door`.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.uris import to_fs_path

from lsp_agent.lsp import methods
from lsp_agent.lsp.errors import invalid_params
from lsp_agent.lsp.params import ForkSessionParams, ListSessionsParams, LoadSessionParams, parse
from lsp_agent.lsp.prompt import path_from
from lsp_agent.lsp.sessions_door import modes_json
from lsp_agent.sessions.manager import SessionError
from lsp_agent.sessions.restore import collector_paused
from lsp_agent.sessions.resume import Resumed, fork, resume, saved_sessions
from lsp_agent.store.private import runs_dir
from lsp_agent.store.runs import running_sessions

if TYPE_CHECKING:
    from lsp_agent.lsp.server import AgentLanguageServer

logger = logging.getLogger(__name__)


def session_list(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
    """``lspAgent/session/list``: the open sessions, then the saved ones not open here, each
    newest first."""
    params = parse(ListSessionsParams, raw, method=methods.SESSION_LIST)
    cwd = path_from(params.cwd, field="cwd").resolve() if params.cwd is not None else None
    live = [s for s in ls.existing_sessions() if cwd is None or s.cwd == cwd]
    sessions: list[dict[str, Any]] = [
        {"sessionId": s.id, "cwd": str(s.cwd), "busy": s.busy, "live": True}
        | ({"title": s.title} if s.title is not None else {})
        for s in live
    ]
    open_ids = {s.id for s in live}
    by_id = {entry["sessionId"]: entry for entry in sessions}
    for info in saved_sessions(ls.sessions, cwd=cwd):
        entry = by_id.get(info.session_id)
        saved = {
            "title": info.title,
            "created": info.created,
            "updated": info.updated,
            "turns": info.turns,
            "interrupted": info.interrupted,
        }
        if entry is not None:
            entry.update(saved)
        elif info.session_id not in open_ids:
            sessions.append(
                {"sessionId": info.session_id, "cwd": info.cwd, "busy": False, "live": False}
                | saved
            )
    _mark_background_runs(sessions, cwd=cwd)
    return {"sessions": sessions}


def _mark_background_runs(sessions: list[dict[str, Any]], *, cwd: Path | None) -> None:
    """Mark the sessions a background run (``run -p --bg``) of this user is running with
    ``backgroundRun`` (its id, from the registry beside the daemon's socket), busy and not
    ``interrupted`` (its turn is under way, not cut off); one that has no transcript yet is
    added, newest first after the open ones, with the run's start as ``created``."""
    running = running_sessions(runs_dir(os.environ))
    for entry in sessions:
        record = running.pop(entry["sessionId"], None)
        if record is not None:
            entry.update({"backgroundRun": record.id, "busy": True, "interrupted": False})
    live = sum(1 for entry in sessions if entry["live"])
    for session_id, record in running.items():
        if cwd is not None and Path(record.cwd) != cwd:
            continue
        entry = {
            "sessionId": session_id,
            "cwd": record.cwd,
            "busy": True,
            "live": False,
            "title": record.prompt,
            "created": _iso(record.started),
            "backgroundRun": record.id,
        }
        sessions.insert(live, entry)


def _iso(seconds: float) -> str:
    """``seconds`` since the epoch as the transcripts' ISO 8601 UTC timestamps."""
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _held_by_background_run(session_id: str) -> str | None:
    """Why ``session_id`` cannot be resumed when a background run of this user is running
    it (naming the run and the commands that follow or stop it), else ``None``."""
    try:
        record = running_sessions(runs_dir(os.environ)).get(session_id)
    except OSError:
        return None
    if record is None:
        return None
    return (
        f"session {session_id} is in use by background run {record.id}: follow it with "
        f"`lsp-agent attach {record.id}` in a terminal (or stop it with `lsp-agent kill "
        f"{record.id}`); once it ends it can be resumed here"
    )


def session_load(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
    """``lspAgent/session/load``: replay, then ``{modes, availableCommands, warnings}``."""
    params = parse(LoadSessionParams, raw, method=methods.SESSION_LOAD)
    cwd = path_from(params.cwd, field="cwd") if params.cwd is not None else None
    try:
        resumed = resume(ls.sessions, params.session_id, cwd=cwd, stream=True)
    except SessionError as exc:
        raise invalid_params(_held_by_background_run(params.session_id) or str(exc)) from None
    _replay(ls, resumed)
    return {
        "modes": modes_json(resumed.session),
        "availableCommands": [c.to_wire() for c in resumed.session.available_commands()],
        "warnings": list(resumed.warnings),
    }


def session_fork(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
    """``lspAgent/session/fork``: replay the new session, then ``{sessionId, modes, ...}``."""
    params = parse(ForkSessionParams, raw, method=methods.SESSION_FORK)
    cwd: Path | None = path_from(params.cwd, field="cwd") if params.cwd is not None else None
    try:
        resumed = fork(
            ls.sessions, params.session_id, message_id=params.message_id, cwd=cwd, stream=True
        )
    except SessionError as exc:
        raise invalid_params(str(exc)) from None
    _replay(ls, resumed)
    return {
        "sessionId": resumed.session.id,
        "modes": modes_json(resumed.session),
        "availableCommands": [c.to_wire() for c in resumed.session.available_commands()],
        "warnings": list(resumed.warnings),
    }


async def close_removed(ls: AgentLanguageServer, uris: list[str]) -> list[str]:
    """Close the sessions whose directory is in a workspace folder the client removed
    (``workspace/didChangeWorkspaceFolders``); their transcripts stay and they can be loaded
    again. Returns the closed ids."""
    removed = [p for p in (to_fs_path(u) for u in uris) if p is not None]
    roots = [Path(p).resolve() for p in removed]
    closed: list[str] = []
    for session in list(ls.existing_sessions()):
        if any(session.cwd == root or session.cwd.is_relative_to(root) for root in roots):
            try:
                await ls.sessions.close(session.id)
            except SessionError:
                continue  # closed meanwhile
            ls.host.progress.pop(session.id, None)
            closed.append(session.id)
            logger.info("session %s closed: its workspace folder was removed", session.id)
    return closed


def _replay(ls: AgentLanguageServer, resumed: Resumed) -> None:
    # Each update is written as it comes: the first leaves before the rest is read.
    session_id = resumed.session.id
    with collector_paused():
        for update in resumed.updates:
            ls.host.emit(session_id, update)
    for warning in resumed.warnings:
        logger.warning("%s", warning)
    logger.info("session %s resumed in %s", session_id, resumed.session.cwd)
