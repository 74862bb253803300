"""The session's view of files: editor buffers first, the disk second.

Tools read through :meth:`Workspace.read` so they see the user's unsaved text, and change files
only through :meth:`Workspace.apply` (the change-set pipeline: the door applies open buffers
through the editor and writes closed files atomically). A change computed from text that has
moved on since (the user typed while the proposal waited for approval) is first rebased onto
the current text by a three-way merge (:mod:`.rebase`); only overlapping changes are refused.
While a journal is open (:attr:`Workspace.journal`, opened by verification for one turn) every
applied change is recorded in it.
While a checkpoint recorder is attached (:attr:`Workspace.checkpoints`, the session's), it is
told before and after every change, so rewind can put files back.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from lsp_agent.protocol.documents import ApplyResult, FileChange, TextSnapshot
from lsp_agent.protocol.host import Host
from lsp_agent.workspace.journal import AppliedChange, ChangeJournal
from lsp_agent.workspace.rebase import describe_conflicts, rebase_change
from lsp_agent.workspace.textfile import NotTextError, read_text_file


class ChangeObserver(Protocol):
    """Told about every change the agent makes to files (the session's checkpoints):
    ``before_apply``/``after_apply`` around edits applied through :meth:`Workspace.apply`,
    ``before_shell``/``after_shell`` around a tool that may write anywhere on disk. Must not
    raise: a failure to observe never stops a change."""

    async def before_apply(self, changes: Sequence[FileChange]) -> None: ...

    async def after_apply(
        self, paths: Sequence[Path], snapshots: Sequence[TextSnapshot] = ()
    ) -> None: ...

    async def before_shell(self) -> None: ...

    async def after_shell(self) -> None: ...


class Workspace:
    """Reads and changes documents on behalf of one session.

    ``edited`` collects every path the agent changed, so that disk-reading tools can ask the
    door to save exactly those buffers first. ``journal``, when set, records every change
    applied (see the module docstring).
    """

    def __init__(self, *, host: Host, roots: Sequence[Path]) -> None:
        self.host = host
        self.roots = tuple(roots)
        self.edited: set[Path] = set()
        self.journal: ChangeJournal | None = None
        self.checkpoints: ChangeObserver | None = None

    def read(self, path: Path) -> TextSnapshot:
        """The current text of ``path``: the open buffer, else the file on disk.

        Raises ``FileNotFoundError``, ``IsADirectoryError``, and
        :class:`~lsp_agent.workspace.textfile.NotTextError` for binary or oversized files.
        """
        buffered = self.host.buffer(path)
        if buffered is not None:
            return buffered
        return read_text_file(path)

    async def apply(self, changes: Sequence[FileChange], *, label: str) -> ApplyResult:
        """Apply ``changes`` through the door (see :meth:`Host.apply_changes`) and record what
        was applied in the open journal (even a partly applied batch: its snapshots say which
        documents did change).

        Each change is first rebased onto the document's current text (:func:`rebase_change`):
        lines the user changed elsewhere are kept, the result's ``merged`` names those files.
        A change that overlaps the user's newer text is refused before anything is applied.
        """
        rebased: list[FileChange] = []
        merged: list[Path] = []
        for change in changes:
            current = self._current(change)
            if current is None:
                rebased.append(change)
                continue
            outcome = rebase_change(change, current)
            if outcome.change is None:
                where = describe_conflicts(outcome.conflicts)
                return ApplyResult(
                    applied=False,
                    failure=f"{change.path} changed at {where} while this change waited, and "
                    "that overlaps the change; read the file again and redo it",
                )
            if outcome.status == "rebased":
                merged.append(change.path)
            rebased.append(outcome.change)
        changes = rebased
        if self.checkpoints is not None:
            await self.checkpoints.before_apply(changes)
        result = await self.host.apply_changes(changes, label=label)
        if self.checkpoints is not None:
            await self.checkpoints.after_apply(
                [change.path for change in changes], result.snapshots
            )
        if result.applied:
            self.edited.update(change.path for change in changes)
            if merged:
                result = dataclasses.replace(result, merged=tuple(merged))
        if self.journal is not None:
            for applied in applied_changes(changes, result, at=time.monotonic()):
                self.journal.record(applied)
        return result

    def _current(self, change: FileChange) -> TextSnapshot | None:
        """The document's text now, when it can be read and ``change`` has a base to compare
        it with (else the door decides)."""
        if change.base is None:
            return None
        try:
            return self.read(change.path)
        except (OSError, NotTextError, UnicodeDecodeError):
            return None

    async def before_disk_read(self) -> dict[Path, str]:
        """Save the buffers the agent edited since the last save, so the disk holds what the
        agent wrote. Once saved they are forgotten: text the user types into them later is
        theirs to save, never written behind their back by a later command. Returns the
        buffers that could not be saved, with the reason; they stay on the list, so the next
        disk-reading tool tries again."""
        if not self.edited:
            return {}
        failed = await self.host.save_documents(sorted(self.edited))
        self.edited.clear()
        self.edited.update(failed)
        return dict(failed)

    async def after_disk_write(self, paths: Sequence[Path] = ()) -> None:
        """Tell the door the disk may have changed (refresh clean buffers)."""
        await self.host.files_changed_on_disk(paths)


def applied_changes(
    changes: Sequence[FileChange], result: ApplyResult, *, at: float
) -> list[AppliedChange]:
    """What applying ``changes`` did, per document: the snapshots the door returned, and for
    an applied batch the requested text of documents the door gave no snapshot for."""
    by_path = {change.path: change for change in changes}
    applied = [
        AppliedChange(path=s.path, base=by_path[s.path].base, new=s, at=at)
        for s in result.snapshots
        if s.path in by_path
    ]
    if result.applied:
        # Doors may leave out snapshots; the text is then what the change asked for.
        recorded = {s.path for s in result.snapshots}
        applied += [
            AppliedChange(
                path=c.path,
                base=c.base,
                new=TextSnapshot(path=c.path, text=c.new_text),
                at=at,
            )
            for c in changes
            if c.path not in recorded
        ]
    return applied
