"""Resume, fork and list persisted sessions (Claude Code's ``--resume``/``--fork-session``,
ACP's ``session/load``).

A resumed session gets its id, directory, roots, model, permission mode and history back from
its transcript and goes on appending to it. The mode is restored except ``bypassPermissions``
and ``plan``, which fall back to the settings' default (Claude Code does the same). A fork
copies the branch up to a message into a new transcript under a new id and resumes that.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.checkpoints.retention import collect
from lsp_agent.protocol.events import SessionUpdate
from lsp_agent.sessions.restore import collector_paused, replay_saved, restore
from lsp_agent.sessions.session import Session, SessionError
from lsp_agent.store.history import active_chain, load_transcript
from lsp_agent.store.index import SessionInfo, list_sessions, remove_expired
from lsp_agent.store.lazy import scan_transcript
from lsp_agent.store.paths import SUFFIX, data_dir, find_transcript, projects_dir, transcript_path
from lsp_agent.store.records import Record, new_record
from lsp_agent.store.transcript import Transcript, TranscriptBusyError

if TYPE_CHECKING:
    from lsp_agent.sessions.manager import SessionManager

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class Resumed:
    """A resumed (or forked) session, the updates that replay its history, and warnings about
    the transcript (bad lines, newer format).

    ``updates`` is iterated once. When resumed with ``stream``, it must be iterated (to its
    end or until closed): the history is built as it goes, so the first update leaves before
    the rest of the transcript is decoded (:mod:`lsp_agent.sessions.restore`). ``warnings``
    grows while the transcript is decoded (a corrupt line is found then): read it after."""

    session: Session
    updates: Iterator[SessionUpdate]
    warnings: Sequence[str] = ()


def store_dir(manager: SessionManager) -> Path:
    """The data folder the manager's sessions are stored in."""
    return data_dir(manager.config.data_dir)


def saved_sessions(manager: SessionManager, *, cwd: Path | None = None) -> list[SessionInfo]:
    """The persisted sessions (of ``cwd``'s project when given), newest first."""
    if not manager.config.persist:
        return []
    return list_sessions(store_dir(manager), cwd=cwd)


def prune(manager: SessionManager) -> int:
    """Delete transcripts older than ``config.retention_days``, then the checkpoints of
    sessions without a transcript whose newest checkpoint is as old
    (:func:`lsp_agent.checkpoints.retention.collect`); how many transcripts were deleted."""
    if not manager.config.persist:
        return 0
    days = manager.config.retention_days
    try:
        removed = len(remove_expired(store_dir(manager), days=days))
        saved = {p.stem for p in projects_dir(store_dir(manager)).glob(f"*/*{SUFFIX}")}
    except OSError as exc:  # an unreadable data folder must not stop a door from starting
        log.warning("cannot prune old transcripts: %s", exc)
        return 0
    if manager.checkpoints_dir is not None:
        done = collect(manager.checkpoints_dir, saved=saved, days=days)
        if done.sessions:
            log.info(
                "removed the checkpoints of %d expired session(s): %d object(s), %d bytes",
                len(done.sessions),
                done.objects,
                done.bytes,
            )
    return removed


def resume(
    manager: SessionManager, session_id: str, *, cwd: Path | None = None, stream: bool = False
) -> Resumed:
    """Bring session ``session_id`` back (a live one just replays). With ``stream`` the
    history is restored while ``updates`` is iterated (a door that sends each update as it
    comes); without, it is complete on return and ``updates`` replays from memory. Raises
    :class:`SessionError` when it is unknown, busy, open in another process, or its directory
    is gone."""
    live = manager.sessions.get(session_id)
    if live is not None:
        if live.busy:
            raise SessionError(f"session {session_id} is running a prompt; cancel it first")
        path = live.recorder.transcript.path if live.recorder is not None else None
        if path is None or not path.is_file():
            return Resumed(session=live, updates=iter(()))
        scanned = scan_transcript(path)
        updates = replay_saved(scanned, live.tools)
        return Resumed(session=live, updates=updates, warnings=scanned.warnings)
    if not manager.config.persist:
        raise SessionError("session persistence is off: no saved sessions to resume")
    path = find_transcript(store_dir(manager), session_id, cwd)
    if path is None:
        raise SessionError(f"no saved session with id {session_id!r}")
    try:
        scanned = scan_transcript(path)
    except OSError as exc:
        raise SessionError(f"cannot read the transcript {path}: {exc}") from None
    writer = Transcript(path=path, session_id=session_id)
    try:
        writer.open()
    except TranscriptBusyError as exc:
        raise SessionError(str(exc)) from None
    except OSError as exc:
        writer.error = f"cannot write {path}: {exc.strerror or exc}"
    try:
        session, updates = restore(manager, session_id, scanned, writer, cwd=cwd)
    except BaseException:
        writer.close()
        raise
    if not stream:
        with collector_paused():
            updates = iter(list(updates))
    return Resumed(session=session, updates=updates, warnings=scanned.warnings)


def fork(
    manager: SessionManager,
    session_id: str,
    *,
    message_id: str | None = None,
    cwd: Path | None = None,
    new_id: str | None = None,
    stream: bool = False,
) -> Resumed:
    """A new session (id ``new_id``, default a fresh one) holding ``session_id``'s branch up
    to ``message_id`` (a message's ``messageId``; default: all of it), with the tool results
    that answer that message. Raises :class:`SessionError` when the session or the message is
    unknown, or ``new_id`` is taken."""
    if not manager.config.persist:
        raise SessionError("session persistence is off: sessions cannot be forked")
    live = manager.sessions.get(session_id)
    path = (
        live.recorder.transcript.path
        if live is not None and live.recorder is not None
        else find_transcript(store_dir(manager), session_id, cwd)
    )
    if path is None or not path.is_file():
        raise SessionError(f"no saved session with id {session_id!r} (nothing to fork yet)")
    loaded = load_transcript(path)
    chain = list(active_chain(loaded.records))
    if message_id is not None:
        chain = _cut(chain, message_id)
    meta = next((r for r in loaded.records if r.type == "meta"), None)
    source_cwd = Path(str(meta.get("cwd"))) if meta is not None else (cwd or Path.cwd())
    new_id = new_id or str(uuid.uuid4())  # Claude Code's session ids are UUIDs
    if new_id in manager.sessions or find_transcript(store_dir(manager), new_id) is not None:
        raise SessionError(f"session id {new_id!r} is already in use")
    target = transcript_path(store_dir(manager), source_cwd, new_id)
    writer = Transcript(path=target, session_id=new_id)
    fields: dict[str, Any] = dict(meta.fields) if meta is not None else {"cwd": str(source_cwd)}
    fields["forkedFrom"] = {"sessionId": session_id, "messageId": message_id}
    writer.write(new_record("meta", session_id=new_id, parent=None, fields=fields))
    for record in chain:
        if record.type != "meta":
            writer.write(dataclasses.replace(record.with_session(new_id), parent_uuid=writer.leaf))
    writer.close()
    if writer.error is not None:
        raise SessionError(f"cannot write the fork: {writer.error}")
    resumed = resume(manager, new_id, cwd=source_cwd, stream=stream)
    _share_checkpoints(resumed.session, session_id, chain)
    return resumed


def _share_checkpoints(fork: Session, source: str, chain: Sequence[Record]) -> None:
    """Give a fork the checkpoints of the prompts it copied, so their code can be rewound in
    the fork too (a failure only costs that: it is logged)."""
    checkpoints = fork.checkpoints
    if checkpoints is None:
        return
    prompts = [r.uuid for r in chain if r.get("prompt")]
    try:
        with checkpoints.store.lock:
            checkpoints.store.copy_checkpoints(source, fork.id, prompts)
    except Exception as exc:
        log.warning("the fork %s cannot rewind the code of its copied prompts: %s", fork.id, exc)


def _cut(chain: Sequence[Record], message_id: str) -> list[Record]:
    for i, record in enumerate(chain):
        if record.uuid != message_id:
            continue
        if record.type not in ("user", "assistant"):
            raise SessionError(f"{message_id!r} is not a message of the session")
        end = i + 1
        # Keep the results that answer the message's tool calls (they belong to it).
        while end < len(chain) and chain[end].type not in ("user", "assistant"):
            end += 1
        if end < len(chain) and chain[end].type == "user" and not chain[end].get("prompt"):
            end += 1
        return list(chain[:end])
    raise SessionError(f"no message {message_id!r} in session")
