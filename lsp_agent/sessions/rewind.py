"""Rewinding a session to one of its prompts: the code, the conversation, or both.

Every prompt gets an id when it starts (the user message's id, sent to the client as the
``messageId`` of a ``user_message_chunk``) and a checkpoint (:mod:`lsp_agent.checkpoints`).
Rewinding to it means going back to the moment before it was sent:

- ``code``: the files the turns from that prompt on changed get their earlier content back
  (:mod:`lsp_agent.checkpoints.rewind`: user changes made since are kept, overlaps become
  conflict markers, nothing is lost);
- ``conversation``: the history is cut before that prompt (the model no longer sees it or
  anything after it); the prompt's text is returned so a client can put it back in the input;
- ``both``: the two.

The ids of a session's prompts are the uuids of their ``user`` records in the transcript, so a
session resumed after a restart or ``session/load`` gets its prompt list back from the
transcript (:func:`restore_marks`) and can be rewound to prompts from before the restart. The
transcript also records each prompt's checkpoint (a ``checkpoint`` record at the end of its
turn) and each rewind (a ``rewind`` record; a conversation rewind hangs it from the record
before the prompt, so the prompts rewound leave the active branch and do not come back on a
reload).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lsp_agent.checkpoints.objects import ShadowStore, store_path
from lsp_agent.checkpoints.recorder import Checkpoints
from lsp_agent.checkpoints.records import Checkpoint
from lsp_agent.checkpoints.rewind import (
    CodeRewind,
    FileConflict,
    Resolution,
    apply_rewind,
    checkpoints_from,
    plan_rewind,
)
from lsp_agent.context.compaction import is_compacted_start
from lsp_agent.model.types import Message, ToolResultBlock
from lsp_agent.protocol.host import Host
from lsp_agent.sessions.rewind_review import ask
from lsp_agent.store.history import prompt_text
from lsp_agent.store.records import Record

if TYPE_CHECKING:
    from lsp_agent.sessions.manager import Session

log = logging.getLogger(__name__)

Restore = Literal["code", "conversation", "both"]
RESTORES: tuple[Restore, ...] = ("code", "conversation", "both")


class RewindError(Exception):
    """The rewind cannot be done (unknown prompt id, busy session, checkpoints off); the
    message says why. Nothing was changed."""


@dataclass(frozen=True, kw_only=True)
class PromptMark:
    """A prompt of the session: its id, its text and how many history messages preceded
    it when it was sent (``None``: unknown, e.g. it is from before a compaction)."""

    message_id: str
    text: str
    history_len: int | None


@dataclass(frozen=True, kw_only=True)
class RewindOutcome:
    """What a rewind did: ``code`` (``None`` when not asked), whether the conversation was
    cut, and the text of the prompt rewound to."""

    message_id: str
    prompt: str
    code: CodeRewind | None
    conversation: bool


def open_checkpoints(
    checkpoints_dir: Path, *, root: Path, session_id: str, host: Host
) -> Checkpoints | None:
    """The checkpoints of a new session rooted at ``root``, in the shadow store of ``root``
    under ``checkpoints_dir``; ``None`` (logged) when the store cannot be opened, e.g. a
    read-only data folder: the session then works without checkpoints."""
    try:
        store = ShadowStore(path=store_path(checkpoints_dir, root), root=root)
    except Exception as exc:
        log.warning("checkpoints are off for this session: %s", exc)
        return None
    return Checkpoints(session_id=session_id, store=store, host=host)


def attach_checkpoints(session: Session, checkpoints_dir: Path | None) -> None:
    """Give a new session its checkpoints (none when ``checkpoints_dir`` is ``None`` or the
    store cannot be opened) and let its workspace report every change to them."""
    if checkpoints_dir is None:
        return
    session.checkpoints = open_checkpoints(
        checkpoints_dir, root=session.cwd, session_id=session.id, host=session.host
    )
    session.workspace.checkpoints = session.checkpoints


async def begin_prompt(session: Session, text: str) -> PromptMark:
    """A prompt (not a slash command) starts: give it an id, remember where it sits in the
    history, and start its checkpoint."""
    mark = PromptMark(message_id=str(uuid.uuid4()), text=text, history_len=len(session.history))
    session.prompt_marks.append(mark)
    if session.checkpoints is not None:
        await session.checkpoints.start_turn(message_id=mark.message_id, prompt=text)
    return mark


def end_prompt(session: Session) -> None:
    """The prompt's turn is over: later changes belong to no checkpoint."""
    if session.checkpoints is not None:
        session.checkpoints.end_turn()


def record_checkpoint(session: Session) -> None:
    """Write the running prompt's checkpoint to the transcript (a ``checkpoint`` record:
    ``data`` = ``{messageId, seq, files, complete}``, ``files`` the absolute paths its turn
    changed); nothing when checkpoints or persistence are off or no prompt runs."""
    if session.checkpoints is None or session.recorder is None:
        return
    checkpoint = session.checkpoints.current()
    if checkpoint is not None:
        session.recorder.checkpoint(
            {
                "messageId": checkpoint.message_id,
                "seq": checkpoint.seq,
                "files": sorted(checkpoint.files),
                "complete": checkpoint.complete,
            }
        )


def marks_of(chain: Sequence[Record], ids: Sequence[str]) -> list[PromptMark]:
    """The prompts of a transcript's active branch ``chain``, oldest first: every prompt
    record (its uuid is the prompt's id and its checkpoint's key), placed in the history by
    ``ids`` (the record uuid of each history message; a prompt from before a compaction or
    ``/clear`` has no place: only its code can be rewound)."""
    where = {message_id: i for i, message_id in enumerate(ids)}
    marks: list[PromptMark] = []
    for record in chain:
        text = prompt_text(record)
        if text is not None:
            marks.append(
                PromptMark(message_id=record.uuid, text=text, history_len=where.get(record.uuid))
            )
    return marks


def restore_marks(session: Session, chain: Sequence[Record], ids: Sequence[str]) -> None:
    """Give a resumed session its prompts back from its transcript's active branch (see
    :func:`marks_of`), and its recorder the parent of each prompt record (where a conversation
    rewind branches from)."""
    session.prompt_marks = marks_of(chain, ids)
    if session.recorder is not None:
        for record in chain:
            if record.get("prompt"):
                session.recorder.prompt_parents[record.uuid] = record.parent_uuid


def find_mark(marks: Sequence[PromptMark], message_id: str, *, where: str = "") -> PromptMark:
    """The prompt ``message_id`` names (:func:`lsp_agent.store.ids.resolve_id`: its id, or a
    unique prefix of at least 6 characters).
    Raises :class:`RewindError` naming the known prompts when there is no such prompt
    (``where``, e.g. " in session ID", completes the message)."""
    from lsp_agent.store.ids import IdLookupError, resolve_id

    try:
        wanted = resolve_id([m.message_id for m in marks], message_id, what="prompt", where=where)
    except IdLookupError as exc:
        known = ", ".join(m.message_id[:8] for m in marks) or "none yet"
        raise RewindError(f"{exc}; prompts: {known}") from None
    return next(m for m in marks if m.message_id == wanted)


def cut_index(history: Sequence[Message], keep: int | None) -> int:
    """``keep`` (how many history messages stay when the conversation is cut before a
    prompt), checked: raises :class:`RewindError` when the prompt is no longer in the history
    as a message of its own (``keep`` is ``None``, or the message there is not a prompt)."""
    at = history[keep] if keep is not None and keep < len(history) else None
    if keep is None or at is None or at.role != "user":
        raise RewindError(
            "the conversation was compacted or cleared since that prompt, so it cannot be cut "
            "there; rewind the code only"
        )
    if is_compacted_start(at) or any(isinstance(block, ToolResultBlock) for block in at.content):
        raise RewindError(
            "that prompt shares its message with what came before it (a compaction summary or "
            "an interrupted turn's tool results), so the conversation cannot be cut there; "
            "rewind the code only, or rewind to an earlier prompt"
        )
    return keep


def _mark(session: Session, message_id: str) -> PromptMark:
    return find_mark(session.prompt_marks, message_id, where=f" in session {session.id}")


async def command(session: Session, args: str) -> tuple[str, bool]:
    """``/rewind``: without arguments, the prompts that can be rewound to (id, files changed,
    first line); ``/rewind ID [code|conversation|both]`` rewinds (default ``both``). Returns
    Markdown and whether it failed."""
    words = args.split()
    if not words:
        saved = {c.message_id: c for c in await list_checkpoints(session)}
        if not session.prompt_marks:
            return "Nothing to rewind to yet: no prompt in this session.", False
        lines = ["Prompts you can rewind to (`/rewind ID [code|conversation|both]`):"]
        for mark in session.prompt_marks:
            checkpoint = saved.get(mark.message_id)
            files = len(checkpoint.files) if checkpoint is not None else 0
            first = mark.text.strip().splitlines()[0][:60] if mark.text.strip() else ""
            lines.append(f"- `{mark.message_id[:8]}` {first!r} ({files} file(s) changed)")
        return "\n".join(lines), False
    restore = words[1] if len(words) > 1 else "both"
    if restore not in RESTORES or len(words) > 2:
        return "Usage: `/rewind [ID [code|conversation|both]]`", True
    try:
        outcome = await rewind(session, words[0], restore)
    except RewindError as exc:
        return str(exc), True
    return describe(outcome), False


async def list_checkpoints(session: Session) -> list[Checkpoint]:
    """The session's checkpoints, oldest first (empty when checkpoints are off)."""
    if session.checkpoints is None:
        return []
    return await asyncio.to_thread(session.checkpoints.list)


async def rewind(session: Session, message_id: str, restore: Restore) -> RewindOutcome:
    """Rewind ``session`` to before prompt ``message_id`` (a unique prefix of at least 6
    characters will do). Raises :class:`RewindError` (nothing changed) when the prompt id is
    unknown, or code is asked for and checkpoints are off. The caller makes sure no prompt is
    running (``/rewind`` runs as the session's own command)."""
    mark = _mark(session, message_id)
    cut = restore in ("conversation", "both")
    keep = _cut_at(session, mark) if cut else None
    code: CodeRewind | None = None
    if restore in ("code", "both"):
        recorder = session.checkpoints
        if recorder is None:
            raise RewindError("checkpoints are off for this session: files cannot be restored")
        saved = await asyncio.to_thread(recorder.list)
        try:
            chosen = checkpoints_from(saved, mark.message_id)
        except KeyError:
            raise RewindError(
                f"no checkpoint was saved for prompt {mark.message_id} (the data folder may "
                "be read-only); files cannot be restored"
            ) from None
        targets, conflicts = await asyncio.to_thread(
            plan_rewind, chosen, host=session.host, blobs=recorder.store.get
        )
        if session.config.unattended is None and any(c.regions for c in conflicts):
            was_busy = session.busy  # /rewind runs as the session's own command
            targets, conflicts = await _reviewed(session, chosen, conflicts)
            if session.busy and not was_busy:
                raise RewindError(
                    f"a prompt started in session {session.id} while the rewind was waiting "
                    "for your choice; nothing was changed (rewind again when it ends)"
                )
        code = await apply_rewind(targets, conflicts, host=session.host)
    outcome = RewindOutcome(
        message_id=mark.message_id, prompt=mark.text, code=code, conversation=cut
    )
    if session.recorder is not None:
        session.recorder.rewind(rewind_data(outcome), prompt=mark.message_id if cut else None)
    if keep is not None:
        session.history = session.history[:keep]
        session.prompt_marks = session.prompt_marks[: session.prompt_marks.index(mark)]
        session.read_state.digests.clear()
        session.read_state.versions.clear()
    return outcome


async def _reviewed(
    session: Session, chosen: Sequence[Checkpoint], conflicts: Sequence[FileConflict]
) -> tuple[dict[Path, bytes | None], tuple[FileConflict, ...]]:
    """The plan once the user has chosen a side for each conflicted file
    (:mod:`lsp_agent.sessions.rewind_review`); files they leave get conflict markers."""
    recorder = session.checkpoints
    if recorder is None:
        return {}, tuple(conflicts)
    paths = [c.path for c in conflicts if c.regions]

    def plan(
        how: Mapping[Path, Resolution],
    ) -> tuple[dict[Path, bytes | None], tuple[FileConflict, ...]]:
        return plan_rewind(chosen, host=session.host, blobs=recorder.store.get, resolve=how)

    mine = (await asyncio.to_thread(plan, dict.fromkeys(paths, "mine")))[0]
    theirs = (await asyncio.to_thread(plan, dict.fromkeys(paths, "checkpoint")))[0]
    answers = await ask(
        session_id=session.id,
        host=session.host,
        cwd=session.cwd,
        conflicts=conflicts,
        mine=mine,
        checkpoint=theirs,
    )
    return await asyncio.to_thread(plan, answers)


def _cut_at(session: Session, mark: PromptMark) -> int:
    """How many history messages stay when the conversation is cut before ``mark``."""
    recorder = session.recorder
    keep = mark.history_len
    if recorder is not None and mark.message_id in recorder.ids:
        keep = recorder.ids.index(mark.message_id)
    return cut_index(session.history, keep)


def rewind_data(outcome: RewindOutcome) -> dict[str, Any]:
    """The ``data`` of a ``rewind`` record: ``{messageId, prompt, restore, conversation,
    restored, removed, conflicts: [{path, regions, reason}], failure?}`` (paths absolute;
    the file lists are absent when the code was not rewound)."""
    code = outcome.code
    restore = ("both" if outcome.conversation else "code") if code else "conversation"
    data: dict[str, Any] = {
        "messageId": outcome.message_id,
        "prompt": outcome.prompt,
        "restore": restore,
        "conversation": outcome.conversation,
    }
    if code is not None:
        data["restored"] = [str(p) for p in code.restored]
        data["removed"] = [str(p) for p in code.removed]
        data["conflicts"] = [
            {"path": str(c.path), "regions": c.regions, "reason": c.reason} for c in code.conflicts
        ]
        if code.failure is not None:
            data["failure"] = code.failure
    return data


def outcome_of(data: Mapping[str, Any]) -> RewindOutcome | None:
    """The outcome a ``rewind`` record's ``data`` describes (``None``: not one this version
    can read)."""
    try:
        code = None
        if "restored" in data:
            code = CodeRewind(
                restored=tuple(Path(p) for p in data["restored"]),
                removed=tuple(Path(p) for p in data.get("removed", ())),
                conflicts=tuple(
                    FileConflict(
                        path=Path(c["path"]), regions=int(c["regions"]), reason=c["reason"]
                    )
                    for c in data.get("conflicts", ())
                ),
                failure=data.get("failure"),
            )
        return RewindOutcome(
            message_id=str(data["messageId"]),
            prompt=str(data.get("prompt", "")),
            code=code,
            conversation=bool(data.get("conversation")),
        )
    except (KeyError, TypeError, ValueError):
        return None


def describe(outcome: RewindOutcome) -> str:
    """The outcome in Markdown, for the chat and the command line."""
    lines = [f"Rewound to before prompt `{outcome.message_id[:8]}` ({outcome.prompt[:60]!r})."]
    code = outcome.code
    if code is not None:
        if not (code.restored or code.removed or code.conflicts):
            lines.append("No file needed restoring.")
        for path in code.restored:
            lines.append(f"- restored `{path}`")
        for path in code.removed:
            lines.append(f"- removed `{path}` (created after the checkpoint)")
        for conflict in code.conflicts:
            lines.append(f"- **conflict** in `{conflict.path}`: {conflict.reason}")
        if code.failure:
            lines.append(f"Not everything could be restored: {code.failure}")
    if outcome.conversation:
        lines.append("The conversation now ends before that prompt.")
    return "\n".join(lines)
