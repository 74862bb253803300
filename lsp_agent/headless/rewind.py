"""``lsp-agent rewind``: rewind a session from the command line, without an editor.

The prompts come from the session's transcript under the user data folder (its active branch;
the ids are the ``messageId`` of each prompt) and, for a session that was not persisted, from
the checkpoints. ``--restore code`` undoes the files exactly as the editor's rewind does
(:mod:`lsp_agent.checkpoints.rewind`: newest first, three-way merge with changes made since,
conflict markers where they overlap), on the disk only; ``--restore conversation`` branches the
transcript before the prompt (a ``rewind`` record), so the session resumes without it;
``both`` does the two. Every rewind is recorded in the transcript when there is one. A session
open in a running lsp-agent (its transcript is locked) is refused for the conversation: it is
rewound there.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from lsp_agent.checkpoints.objects import ShadowStore, store_path
from lsp_agent.checkpoints.records import Checkpoint
from lsp_agent.checkpoints.rewind import CodeRewind, apply_rewind, checkpoints_from, plan_rewind
from lsp_agent.sessions.rewind import (
    PromptMark,
    RewindError,
    RewindOutcome,
    cut_index,
    describe,
    find_mark,
    marks_of,
    rewind_data,
)
from lsp_agent.store.history import active_chain, history_of, load_transcript
from lsp_agent.store.ids import AmbiguousIdError, IdLookupError, resolve_id
from lsp_agent.store.index import list_sessions
from lsp_agent.store.paths import data_dir, find_transcript
from lsp_agent.store.records import Record
from lsp_agent.store.transcript import Transcript, TranscriptBusyError
from lsp_agent.workspace.disk_host import DiskHost

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFLICTS = 3
"""Exit status when files were restored but some hold conflict markers to resolve."""


@dataclass(frozen=True, kw_only=True)
class RewindOptions:
    """``--session`` (``None``: the project's newest saved session, as ``-c`` picks it),
    ``--to`` (a prompt's message id or a unique prefix of 6+ characters), ``--restore``
    (``code``, ``conversation`` or ``both``) and the project folder."""

    session_id: str | None
    message_id: str | None
    restore: str
    cwd: Path


class _RewindFailedError(Exception):
    """The rewind cannot be done; nothing was changed. The message says why."""


@dataclass(kw_only=True)
class _Session:
    root: Path
    chain: tuple[Record, ...] = ()
    transcript: Path | None = None
    store: ShadowStore | None = None
    saved: tuple[Checkpoint, ...] = ()

    def marks(self) -> list[PromptMark]:
        if self.transcript is not None:
            return marks_of(self.chain, history_of(self.chain)[1])
        return [
            PromptMark(message_id=c.message_id, text=c.prompt, history_len=None) for c in self.saved
        ]


def run_rewind(
    options: RewindOptions, *, out: TextIO = sys.stdout, err: TextIO = sys.stderr
) -> int:
    """Rewind and print what was done (without ``message_id``: list the session's prompts,
    one line each: id, files changed, first line); returns the exit status (0 done, 1 failed
    with nothing changed or a partial failure, 3 done with conflicts)."""
    try:
        if options.session_id is None:
            options = replace(options, session_id=_newest(options.cwd.resolve()))
            print(f"session {options.session_id} (the newest in this folder)", file=err)
        options = replace(options, session_id=_saved_id(options.session_id or ""))
        found = _open(options)
        if options.message_id is None:
            _list(found, out)
            return EXIT_OK
        return _rewind(found, options, out, err)
    except _RewindFailedError as exc:
        print(f"lsp-agent: error: {exc}", file=err)
        return EXIT_FAILED


def _saved_id(wanted: str) -> str:
    """The saved session ``wanted`` names (either form of its id, or a unique prefix); as
    given when no transcript matches (a session known only by its checkpoints)."""
    try:
        ids = [info.session_id for info in list_sessions(data_dir())]
        return resolve_id(ids, wanted, what="session")
    except OSError:
        return wanted
    except AmbiguousIdError as exc:
        raise _RewindFailedError(str(exc)) from None
    except IdLookupError:
        return wanted


def _newest(root: Path) -> str:
    """The id of the newest saved session of ``root``'s project."""
    try:
        saved = list_sessions(data_dir(), cwd=root)
    except OSError as exc:
        raise _RewindFailedError(f"cannot list the saved sessions: {exc}") from None
    if not saved:
        raise _RewindFailedError(f"no saved session in {root}: give --session ID")
    return saved[0].session_id


def _open(options: RewindOptions) -> _Session:
    assert options.session_id is not None
    root = options.cwd.resolve()
    found = _Session(root=root)
    data = data_dir()
    found.transcript = find_transcript(data, options.session_id, root)
    if found.transcript is not None:
        try:
            found.chain = active_chain(load_transcript(found.transcript).records)
        except OSError as exc:
            raise _RewindFailedError(
                f"cannot read the transcript {found.transcript}: {exc}"
            ) from None
    folder = store_path(data / "checkpoints", root)
    if (folder / "HEAD").exists():
        found.store = ShadowStore(path=folder, root=root)
        found.saved = tuple(found.store.load(options.session_id))
    if found.transcript is None and not found.saved:
        raise _RewindFailedError(f"no session {options.session_id} with checkpoints in {root}")
    return found


def _list(found: _Session, out: TextIO) -> None:
    files = {c.message_id: len(c.files) for c in found.saved}
    marks = found.marks()
    if not marks:
        raise _RewindFailedError("the session has no prompt to rewind to")
    for mark in marks:
        first = mark.text.strip().splitlines()[0] if mark.text.strip() else ""
        print(f"{mark.message_id}  {files.get(mark.message_id, 0):3d} file(s)  {first}", file=out)


def _rewind(found: _Session, options: RewindOptions, out: TextIO, err: TextIO) -> int:
    assert options.message_id is not None
    marks = found.marks()
    try:
        mark = find_mark(marks, options.message_id, where=f" in session {options.session_id}")
    except RewindError as exc:
        raise _RewindFailedError(str(exc)) from None
    cut = options.restore in ("conversation", "both")
    writer = _writer(found, required=cut)
    try:
        parent = _branch_point(found, mark) if cut else None
        code = _code(found, mark) if options.restore in ("code", "both") else None
        outcome = RewindOutcome(
            message_id=mark.message_id, prompt=mark.text, code=code, conversation=cut
        )
        if writer is not None:
            writer.leaf = parent or (found.chain[-1].uuid if found.chain else None)
            writer.append("rewind", data=rewind_data(outcome))
            if writer.error is not None:
                raise _RewindFailedError(f"the rewind could not be recorded: {writer.error}")
    finally:
        if writer is not None:
            writer.close()
    print(describe(outcome), file=out)
    if writer is None and found.transcript is not None:
        print(
            "lsp-agent: the session is open in a running lsp-agent (an editor): the files were "
            "restored, but its transcript does not record this rewind",
            file=err,
        )
    if code is not None and code.failure is not None:
        return EXIT_FAILED
    return EXIT_CONFLICTS if code is not None and code.conflicts else EXIT_OK


def _writer(found: _Session, *, required: bool) -> Transcript | None:
    """The session's transcript, locked for appending (``None``: no transcript, or it is open
    in a running lsp-agent and only the files are rewound)."""
    if found.transcript is None:
        if required:
            raise _RewindFailedError(
                "the session has no transcript (it was not saved): only --restore code"
            )
        return None
    writer = Transcript(path=found.transcript, session_id=found.chain[0].session_id)
    try:
        writer.open()
    except TranscriptBusyError:
        if required:
            raise _RewindFailedError(
                "the session is open in a running lsp-agent (an editor): rewind its "
                "conversation there (/rewind, or Rewind to here)"
            ) from None
        return None
    except OSError as exc:
        raise _RewindFailedError(f"cannot write the transcript {found.transcript}: {exc}") from None
    return writer


def _branch_point(found: _Session, mark: PromptMark) -> str | None:
    """The record a conversation rewind to ``mark`` hangs from: the one before the prompt's.
    Raises :class:`_RewindFailedError` when the conversation cannot be cut there."""
    try:
        cut_index(history_of(found.chain)[0], mark.history_len)
    except RewindError as exc:
        raise _RewindFailedError(str(exc)) from None
    record = next(r for r in found.chain if r.uuid == mark.message_id)
    return record.parent_uuid


def _code(found: _Session, mark: PromptMark) -> CodeRewind:
    store = found.store
    try:
        if store is None:
            raise KeyError(mark.message_id)
        chosen = checkpoints_from(found.saved, mark.message_id)
    except KeyError:
        raise _RewindFailedError(
            f"no checkpoint was saved for prompt {mark.message_id} in {found.root}: files "
            "cannot be restored"
        ) from None
    host = DiskHost()
    targets, conflicts = plan_rewind(chosen, host=host, blobs=store.get)
    return asyncio.run(apply_rewind(targets, conflicts, host=host))
