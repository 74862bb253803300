"""Bringing a saved session back while its history is replayed (``session/load``, ``--resume``).

The transcript is scanned once (:func:`~lsp_agent.store.lazy.scan_transcript`: each line's
envelope, nothing decoded), which gives the active branch, the session's folder, mode and model;
the session is created at once. Its history is then built record by record as the replay goes:
each record is decoded and its message validated once, its updates are handed out, and its
message joins the history. The first update therefore leaves after the scan and one record,
whatever the session's length; the history is complete when the replay has been iterated to
its end (or closed early: the rest is then read without updates).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.model.types import Message, Usage
from lsp_agent.protocol.events import SessionInfoUpdate, SessionUpdate
from lsp_agent.protocol.permissions import PermissionMode
from lsp_agent.sessions.replay import replay_pairs
from lsp_agent.sessions.rewind import restore_marks
from lsp_agent.sessions.session import MODES, Session, SessionError
from lsp_agent.store.history import RESTART_KINDS, chain_positions, history_from, message_of
from lsp_agent.store.history import prompt_text as prompt_of
from lsp_agent.store.index import written_title
from lsp_agent.store.lazy import LazyTranscript
from lsp_agent.store.records import Record
from lsp_agent.store.transcript import Transcript
from lsp_agent.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from lsp_agent.sessions.manager import SessionManager

NOT_RESTORED: frozenset[str] = frozenset({"bypassPermissions", "plan"})
"""Modes a resumed session never comes back in."""

Pairs = Iterator[tuple[Record, Message | None]]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a saved session is replayed (iterate
    the updates inside it, synchronously). A load allocates tens of thousands of objects that
    all live on (records, messages); with the collector on, its passes over them cost as much
    as the load itself (measured with tools/bench_sessions.py: the last update 2x later).
    Nothing is leaked: the next pass after it collects as usual."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def replay_saved(
    scanned: LazyTranscript, tools: ToolRegistry | None = None
) -> Iterator[SessionUpdate]:
    """The replay of a scanned transcript's active branch, decoded as it goes (an open
    session's history is already there), then the title the model wrote."""
    chain = chain_positions(scanned.heads)
    start = _after_last(scanned, chain, ("clear",))
    yield from replay_pairs(_decoded(scanned, chain[start:]), tools)
    title = saved_title(scanned)
    if title is not None:
        yield SessionInfoUpdate(title=title)


def saved_title(scanned: LazyTranscript) -> str | None:
    """The title the model wrote for the session: the newest ``title`` record anywhere in the
    file (side records, off the chain; :func:`~lsp_agent.store.index.written_title`)."""
    for i in range(len(scanned.heads) - 1, -1, -1):
        if scanned.heads[i].type != "title":
            continue
        record = scanned.record(i)
        title = written_title([record]) if record is not None else None
        if title is not None:
            return title
    return None


def restore(
    manager: SessionManager,
    session_id: str,
    scanned: LazyTranscript,
    writer: Transcript,
    *,
    cwd: Path | None,
) -> tuple[Session, Iterator[SessionUpdate]]:
    """Create session ``session_id`` from ``scanned`` (folder, roots, mode, model; appending
    to ``writer``) and the replay that fills its history as it is iterated. Raises
    :class:`SessionError` when the session's folder and ``cwd`` are both gone."""
    heads = scanned.heads
    chain = chain_positions(heads)
    meta_at = next((i for i, h in enumerate(heads) if h.type == "meta"), None)
    meta = scanned.record(meta_at) if meta_at is not None else None
    saved_cwd = Path(str(meta.get("cwd"))) if meta is not None and meta.get("cwd") else None
    where = saved_cwd if saved_cwd is not None and saved_cwd.is_dir() else cwd
    if where is None or not where.is_dir():
        raise SessionError(f"the directory of session {session_id} ({saved_cwd}) is gone")
    extra = [r for r in _saved_roots(meta) if r != where and r.is_dir()]
    mode, model = _settings(meta, scanned, chain)
    session = manager.new(
        cwd=where,
        additional_directories=extra,
        mode=None if mode is None or mode in NOT_RESTORED else mode,
        session_id=session_id,
        source="resume",
    )
    if model and model != session.config.model:
        session.config = dataclasses.replace(session.config, model=model)
    session.title = saved_title(scanned)
    session.usage = _spent(scanned, chain)
    recorder = session.recorder
    if recorder is not None:
        recorder.transcript.close()
        recorder.transcript = writer
        writer.leaf = heads[chain[-1]].uuid if chain else None
        recorder.started = meta_at is not None
        base = _after_last(scanned, chain, ("meta", *RESTART_KINDS))
        recorder.base = heads[chain[base - 1]].uuid if base else None
        if session.hooks is not None:
            session.hooks.transcript_path = str(writer.path)
    else:
        writer.close()
    return session, _fill(session, scanned, chain)


def _saved_roots(meta: Record | None) -> list[Path]:
    """The workspace folders ``meta`` names: a list of absolute paths, anything else
    ignored (a string would otherwise give one root per character, ``/`` among them)."""
    raw = meta.get("roots") if meta is not None else None
    if not isinstance(raw, list):
        return []
    return [Path(r) for r in raw if isinstance(r, str) and Path(r).is_absolute()]


def _fill(session: Session, scanned: LazyTranscript, chain: list[int]) -> Iterator[SessionUpdate]:
    replay_from = _after_last(scanned, chain, ("clear",))
    history_from_at = _after_last(scanned, chain, tuple(RESTART_KINDS))
    kept: list[tuple[Record, Message | None]] = []

    def pairs() -> Pairs:
        for offset, pair in enumerate(_decoded(scanned, chain[replay_from:])):
            if replay_from + offset >= history_from_at:
                kept.append(pair)
            yield pair

    source = pairs()
    try:
        yield from replay_pairs(source, session.tools)
        if session.title is not None:
            # Last, so a client that titles a chat by its first prompt ends with this one.
            yield SessionInfoUpdate(title=session.title)
    finally:
        for _ in source:  # closed early: the rest joins the history without updates
            pass
        ids = _install(session, kept)
        # Every prompt of the branch, from before a /clear too (decoded now: only user records).
        prompts = [
            r
            for k, i in enumerate(chain)
            if (k >= replay_from or scanned.heads[i].type == "user")
            and (r := scanned.record(i)) is not None
        ]
        restore_marks(session, prompts, ids)


def _install(session: Session, pairs: list[tuple[Record, Message | None]]) -> tuple[str, ...]:
    """Give ``session`` the history of ``pairs``; the record uuid of each message."""
    history, ids = history_from(pairs)
    session.history = history
    session.context.prompts = [t for t in (prompt_of(r) for r, _ in pairs) if t is not None]
    if session.recorder is not None:
        session.recorder.recorded = list(history)
        session.recorder.ids = list(ids)
    return ids


def _decoded(scanned: LazyTranscript, positions: list[int]) -> Pairs:
    for i in positions:
        record = scanned.record(i)
        if record is not None:
            yield record, message_of(record)


def _spent(scanned: LazyTranscript, chain: list[int]) -> Usage:
    """The tokens the branch's turns used, from their ``turn_end`` records (older transcripts
    and malformed counts add nothing), so ``/cost`` goes on from them after a resume."""
    total = Usage()
    for i in chain:
        if scanned.heads[i].type != "turn_end":
            continue
        record = scanned.record(i)
        raw = record.get("usage") if record is not None else None
        if isinstance(raw, dict):
            try:
                total = total + Usage.model_validate(raw)
            except ValueError:
                continue
    return total


def _after_last(scanned: LazyTranscript, chain: list[int], kinds: tuple[str, ...]) -> int:
    """The index in ``chain`` just after its last record of one of ``kinds`` (0: none)."""
    for k in range(len(chain) - 1, -1, -1):
        if scanned.heads[chain[k]].type in kinds:
            return k + 1
    return 0


def _settings(
    meta: Record | None, scanned: LazyTranscript, chain: list[int]
) -> tuple[PermissionMode | None, str]:
    """The permission mode and model the branch ended with."""
    known = {m for m, _, _ in MODES}
    mode = meta.get("mode") if meta is not None else None
    model = meta.get("model") if meta is not None else None
    for i in chain:
        kind = scanned.heads[i].type
        if kind not in ("mode", "model"):
            continue
        record = scanned.record(i)
        if record is None:
            continue
        if kind == "mode":
            mode = record.get("mode")
        else:
            model = record.get("model")
    found: PermissionMode | None = mode if isinstance(mode, str) and mode in known else None
    return found, model if isinstance(model, str) else ""
