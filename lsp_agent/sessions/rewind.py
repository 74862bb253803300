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

A session's checkpoints and the ids of its prompts are kept for the session's life; the
store of transcripts records rewinds when it is present.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from lsp_agent.checkpoints.objects import ShadowStore, store_path
from lsp_agent.checkpoints.recorder import Checkpoints
from lsp_agent.checkpoints.records import Checkpoint
from lsp_agent.checkpoints.rewind import CodeRewind, apply_rewind, checkpoints_from, plan_rewind
from lsp_agent.protocol.host import Host

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
    it."""

    message_id: str
    text: str
    history_len: int


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
    mark = PromptMark(message_id=uuid.uuid4().hex, text=text, history_len=len(session.history))
    session.prompt_marks.append(mark)
    if session.checkpoints is not None:
        await session.checkpoints.start_turn(message_id=mark.message_id, prompt=text)
    return mark


def end_prompt(session: Session) -> None:
    """The prompt's turn is over: later changes belong to no checkpoint."""
    if session.checkpoints is not None:
        session.checkpoints.end_turn()


def _mark(session: Session, message_id: str) -> PromptMark:
    exact = [m for m in session.prompt_marks if m.message_id == message_id]
    found = exact or (
        [m for m in session.prompt_marks if m.message_id.startswith(message_id)]
        if len(message_id) >= 6
        else []
    )
    if len(found) != 1:
        known = ", ".join(m.message_id[:8] for m in session.prompt_marks) or "none yet"
        raise RewindError(f"no prompt {message_id!r} in session {session.id} (prompts: {known})")
    return found[0]


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
    at = session.history[mark.history_len] if mark.history_len < len(session.history) else None
    if cut and (at is None or at.role != "user"):
        raise RewindError(
            "the conversation was compacted or cleared since that prompt, so it cannot be cut "
            "there; rewind the code only"
        )
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
        code = await apply_rewind(targets, conflicts, host=session.host)
    if cut:
        session.history = session.history[: mark.history_len]
        session.prompt_marks = session.prompt_marks[: session.prompt_marks.index(mark)]
        session.read_state.digests.clear()
        session.read_state.versions.clear()
    return RewindOutcome(message_id=mark.message_id, prompt=mark.text, code=code, conversation=cut)


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
