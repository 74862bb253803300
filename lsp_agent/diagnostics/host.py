"""``VerifyingHost``: a :class:`Host` that lets sessions verify their edits.

It wraps the door's host: every call is passed through, and every change the change-set
pipeline applies is also recorded into the current turn's journal (see
:mod:`lsp_agent.diagnostics.journal`) and its editor version noted in the store. It carries
the :class:`~lsp_agent.diagnostics.service.DiagnosticsService` (``host.diagnostics``), which is
how the agent loop and the language-server tools find it; a host without one simply gets no
verification.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from lsp_agent.diagnostics.journal import CURRENT_JOURNAL, AppliedChange
from lsp_agent.diagnostics.service import DiagnosticsService
from lsp_agent.protocol.documents import ApplyResult, FileChange, TextSnapshot
from lsp_agent.protocol.events import SessionUpdate
from lsp_agent.protocol.host import Host
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse


class VerifyingHost:
    """See the module docstring. ``inner`` is the door's host."""

    def __init__(self, *, inner: Host, diagnostics: DiagnosticsService) -> None:
        self.inner = inner
        self.diagnostics = diagnostics

    def buffer(self, path: Path) -> TextSnapshot | None:
        """See :meth:`Host.buffer`."""
        return self.inner.buffer(path)

    async def apply_changes(self, changes: Sequence[FileChange], *, label: str) -> ApplyResult:
        """See :meth:`Host.apply_changes`; also records what was applied (even a partly
        applied batch: its snapshots say which documents did change)."""
        result = await self.inner.apply_changes(changes, label=label)
        journal = CURRENT_JOURNAL.get()
        now = time.monotonic()
        by_path = {change.path: change for change in changes}
        for snapshot in result.snapshots:
            change = by_path.get(snapshot.path)
            if change is None:
                continue
            if snapshot.version is not None and snapshot.source == "buffer":
                self.diagnostics.store.note_editor_version(snapshot.path, snapshot.version)
            if journal is not None:
                journal.record(
                    AppliedChange(path=snapshot.path, base=change.base, new=snapshot, at=now)
                )
        if result.applied and journal is not None:
            # Doors may leave out snapshots; the text is then what the change asked for.
            recorded = {s.path for s in result.snapshots}
            for change in changes:
                if change.path not in recorded:
                    journal.record(
                        AppliedChange(
                            path=change.path,
                            base=change.base,
                            new=TextSnapshot(path=change.path, text=change.new_text),
                            at=now,
                        )
                    )
        return result

    async def request_permission(self, request: PermissionRequest) -> PermissionResponse:
        """See :meth:`Host.request_permission`."""
        return await self.inner.request_permission(request)

    async def save_documents(self, paths: Sequence[Path]) -> None:
        """See :meth:`Host.save_documents`."""
        await self.inner.save_documents(paths)

    async def files_changed_on_disk(self, paths: Sequence[Path]) -> None:
        """See :meth:`Host.files_changed_on_disk`."""
        await self.inner.files_changed_on_disk(paths)

    def emit(self, session_id: str, update: SessionUpdate) -> None:
        """See :meth:`Host.emit`."""
        self.inner.emit(session_id, update)


def diagnostics_of(host: object) -> DiagnosticsService | None:
    """The diagnostics service a host carries (``host.diagnostics``), or ``None``."""
    service = getattr(host, "diagnostics", None)
    return service if isinstance(service, DiagnosticsService) else None
