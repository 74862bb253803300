"""How ``run -p`` opens its session: a new one, or one resumed or forked from a saved one
(``--continue``, ``--resume``, ``--fork-session``, ``--session-id``), and what it says when it
cannot.

A session's transcript is locked by the process running it (:mod:`lsp_agent.store.transcript`).
When that process is a background run (``run -p --bg``), its record in the runs folder
(:mod:`lsp_agent.store.runs`) names the session, so the error names the run, how to follow it
and the flag that continues the session under a new id.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

from lsp_agent.headless.options import HeadlessOptions
from lsp_agent.store.private import runs_dir
from lsp_agent.store.runs import RUN_ENV, running_sessions

if TYPE_CHECKING:
    from lsp_agent.protocol.permissions import PermissionMode
    from lsp_agent.sessions.manager import Session, SessionManager


def held_by_background_run(session_id: str, environ: Mapping[str, str]) -> str | None:
    """The error for a session a live background run of this user holds, else ``None`` (no
    such run, or the runs folder cannot be read). A background run never names itself."""
    try:
        run = running_sessions(runs_dir(environ)).get(session_id)
    except OSError:
        return None
    if run is None or run.id == environ.get(RUN_ENV):
        return None
    return (
        f"session {session_id} is in use by background run {run.id}: follow it with "
        f"`lsp-agent attach {run.id}` (or stop it with `lsp-agent kill {run.id}`), or add "
        "--fork-session to continue the session under a new id now"
    )


def new_session(options: HeadlessOptions) -> bool:
    """Whether the run started a session of its own (not ``--continue``/``--resume``; a fork
    is new too)."""
    return options.fork_session or (not options.continue_session and options.resume is None)


def discard_transcript(session: Session) -> None:
    """Delete the transcript of a new session whose run failed before any model answer (no
    key, endpoint down), so ``-p --continue`` never continues an empty session."""
    if session.recorder is None:
        return
    with contextlib.suppress(OSError):
        session.recorder.transcript.path.unlink(missing_ok=True)


def open_session(
    manager: SessionManager,
    options: HeadlessOptions,
    mode: PermissionMode | None,
    *,
    err: TextIO,
    environ: Mapping[str, str],
) -> Session:
    """The run's session: new, or resumed/forked from a saved one (``--continue``,
    ``--resume``, ``--fork-session``). Raises ``SessionError`` for a session that cannot be
    resumed (unknown, none in the directory, open elsewhere)."""
    from lsp_agent.sessions.manager import SessionError
    from lsp_agent.sessions.restore import collector_paused
    from lsp_agent.sessions.resume import fork, resume, saved_sessions

    if not options.continue_session and options.resume is None:
        taken = options.session_id is not None and any(
            s.session_id == options.session_id for s in saved_sessions(manager)
        )
        if taken:
            raise SessionError(f"session id {options.session_id!r} is already in use")
        return manager.new(
            cwd=options.cwd,
            mode=mode,
            session_id=options.session_id,
            additional_directories=options.add_dirs,
        )
    target = options.resume or ""
    if target and manager.config.persist:
        target = saved_id(manager, target)
    if not target:
        saved = saved_sessions(manager, cwd=options.cwd)
        if not saved:
            raise SessionError(f"no saved session in {options.cwd} to continue")
        target = saved[0].session_id
    if options.fork_session:
        resumed = fork(manager, target, cwd=options.cwd, new_id=options.session_id, stream=True)
    else:
        try:
            resumed = resume(manager, target, cwd=options.cwd, stream=True)
        except SessionError as exc:
            # Asked only once the transcript is found locked: the registry names the holder.
            held = held_by_background_run(target, environ)
            raise SessionError(held or str(exc)) from None
    with collector_paused():
        for _ in resumed.updates:
            pass  # a headless run prints only the new turn (iterating restores the history)
    for warning in resumed.warnings:
        err.write(f"lsp-agent: {warning}\n")
    if mode is not None:
        resumed.session.set_mode(mode)
    return resumed.session


def saved_id(manager: SessionManager, wanted: str) -> str:
    """The saved session ``--resume`` names (its id in either form, or a unique prefix).
    Raises ``SessionError`` when none or several match."""
    from lsp_agent.sessions.manager import SessionError
    from lsp_agent.sessions.resume import saved_sessions
    from lsp_agent.store.ids import IdLookupError, resolve_id

    try:
        ids = [s.session_id for s in saved_sessions(manager)]
        return resolve_id(ids, wanted, what="saved session")
    except IdLookupError as exc:
        raise SessionError(str(exc)) from None
