"""A :class:`Host` without an editor: files live on disk.

Used by the headless door and by tests. Changes are written with
:func:`~lsp_agent.workspace.textfile.apply_change_to_disk` (atomic, byte-exact encoding and
BOM). Tests can simulate open editor buffers with ``buffers``: those paths are read from and
changed in memory, with a version that must match the change's base, like a real editor's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from lsp_agent.protocol.documents import ApplyResult, FileChange, TextSnapshot
from lsp_agent.protocol.events import SessionUpdate
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse
from lsp_agent.workspace.textfile import (
    NotTextError,
    StaleChangeError,
    apply_change_to_disk,
    read_text_file,
    write_text_atomic,
)

PermissionHandler = Callable[[PermissionRequest], Awaitable[PermissionResponse]]
"""Answers a permission request (a CLI flag policy, a terminal prompt, a test script)."""

UpdateSink = Callable[[str, SessionUpdate], None]
"""Receives ``(session_id, update)`` for every session update."""

NO_HANDLER_FEEDBACK = (
    "Permission prompts cannot be answered here (no permission handler is configured), so "
    "the request was rejected."
)


async def reject_all(request: PermissionRequest) -> PermissionResponse:
    """The default permission handler: picks the request's ``reject_once`` option (or cancels
    when it has none), with feedback saying no one can answer."""
    for option in request.options:
        if option.kind == "reject_once":
            return PermissionResponse(
                outcome="selected", option_id=option.option_id, feedback=NO_HANDLER_FEEDBACK
            )
    return PermissionResponse(outcome="cancelled", feedback=NO_HANDLER_FEEDBACK)


def _drop(_session_id: str, _update: SessionUpdate) -> None:
    return None


class DiskHost:
    """A :class:`Host` over the local disk, with optional simulated buffers.

    ``permission_handler`` answers permission requests (default :func:`reject_all`);
    ``on_update`` receives session updates (default: dropped). ``buffers`` maps absolute
    paths to ``source="buffer"`` snapshots standing for documents open in an editor; the dict
    is used as given, so a test may replace an entry (with a higher ``version``) to simulate
    the user typing.
    """

    def __init__(
        self,
        *,
        permission_handler: PermissionHandler | None = None,
        on_update: UpdateSink | None = None,
        buffers: dict[Path, TextSnapshot] | None = None,
    ) -> None:
        self._permission_handler = permission_handler or reject_all
        self._on_update = on_update or _drop
        self.buffers: dict[Path, TextSnapshot] = buffers if buffers is not None else {}

    def buffer(self, path: Path) -> TextSnapshot | None:
        """The simulated buffer of ``path``, if any."""
        # Asked for every memory path at every tool batch; hashing a Path is not free.
        return self.buffers.get(path) if self.buffers else None

    async def apply_changes(self, changes: Sequence[FileChange], *, label: str) -> ApplyResult:
        """Check every change's base first, then apply them in order.

        Buffers: the base must be the current buffer version (or, for a disk base, hold the
        same text); the buffer then gets the new text and the next version. Files: written
        atomically after re-checking the bytes. A failure gives ``applied=False`` with the
        reason; if a write fails midway, earlier changes stay applied and the reason says so.
        """
        read: list[TextSnapshot | None] = []
        for change in changes:
            problem, on_disk = self._check(change)
            if problem is not None:
                return ApplyResult(applied=False, failure=problem)
            read.append(on_disk)
        snapshots: list[TextSnapshot] = []
        for index, change in enumerate(changes):
            try:
                current = self.buffers.get(change.path)
                if current is not None:
                    snapshot = dataclasses.replace(
                        current, text=change.new_text, version=(current.version or 0) + 1
                    )
                    self.buffers[change.path] = snapshot
                else:
                    # The first file was read by the check just now (no await since): not
                    # read again. Later ones are, since earlier writes came in between.
                    snapshot = apply_change_to_disk(change, current=read[0] if not index else None)
            except (StaleChangeError, NotTextError, OSError, UnicodeEncodeError) as exc:
                failure = str(exc)
                if index:
                    failure += f" ({index} of {len(changes)} changes were applied before this)"
                return ApplyResult(applied=False, failure=failure, snapshots=tuple(snapshots))
            snapshots.append(snapshot)
        return ApplyResult(applied=True, snapshots=tuple(snapshots))

    def _check(self, change: FileChange) -> tuple[str | None, TextSnapshot | None]:
        """Why ``change`` cannot be applied (``None``: it can), and the file as read from disk
        for the check (``None`` for a buffer, a new file or a problem)."""
        path, base = change.path, change.base
        current = self.buffers.get(path)
        if current is not None:
            if base is None:
                return f"{path} is already open in the editor; read it before overwriting it", None
            moved = (
                base.version != current.version
                if base.source == "buffer"
                else base.text != current.text
            )
            if moved:
                return (
                    f"{path} was changed in the editor since it was read "
                    f"(version {base.version} → {current.version}); read it again"
                ), None
            return None, None
        if base is None:
            exists = path.exists()
            return (
                f"{path} already exists; read it before overwriting it" if exists else None
            ), None
        try:
            on_disk = read_text_file(path)
        except FileNotFoundError:
            return f"{path} was deleted since it was read", None
        except (NotTextError, OSError, UnicodeDecodeError) as exc:
            return f"cannot check {path} before writing: {exc}", None
        if on_disk.text != base.text:
            return f"{path} changed on disk since it was read; read it again", None
        return None, on_disk

    async def request_permission(self, request: PermissionRequest) -> PermissionResponse:
        """Ask the configured handler."""
        return await self._permission_handler(request)

    async def save_documents(self, paths: Sequence[Path]) -> dict[Path, str]:
        """Write the simulated buffers among ``paths`` to disk (what an editor's save does);
        other paths have nothing unsaved. Returns the paths that could not be written."""
        failed: dict[Path, str] = {}
        for path in paths:
            snapshot = self.buffers.get(path)
            if snapshot is None:
                continue
            try:
                write_text_atomic(path, snapshot.text, encoding=snapshot.encoding, bom=snapshot.bom)
            except (OSError, UnicodeEncodeError) as exc:
                failed[path] = str(exc)
        return failed

    async def files_changed_on_disk(self, paths: Sequence[Path]) -> None:
        """Nothing to refresh: without an editor the disk is the truth."""

    def emit(self, session_id: str, update: SessionUpdate) -> None:
        """Hand the update to ``on_update``."""
        self._on_update(session_id, update)
