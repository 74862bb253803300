"""The :class:`Host` protocol: everything the core needs from the door it runs behind.

The LSP door implements it with an editor on the other end (buffers, ``workspace/applyEdit``,
permission prompts); the headless door (``lsp-agent run``) with the disk and CLI flags; tests in
a few lines. The core never imports a door.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from lsp_agent.protocol.documents import ApplyResult, FileChange, TextSnapshot
from lsp_agent.protocol.events import SessionUpdate
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse


class Host(Protocol):
    """What a door provides to a session. Every method is called on the event loop."""

    def buffer(self, path: Path) -> TextSnapshot | None:
        """The editor's current text of ``path`` if it is open there (``source="buffer"``),
        else ``None``; the core then reads the disk."""
        ...

    async def apply_changes(self, changes: Sequence[FileChange], *, label: str) -> ApplyResult:
        """Apply ``changes`` (open buffers through the editor, other files on disk).

        Must refuse, with ``applied=False`` and a reason, any change whose ``base`` no longer
        matches the document (buffer version moved on, file bytes changed), and must never
        overwrite text the user typed after the base was read.
        """
        ...

    async def request_permission(self, request: PermissionRequest) -> PermissionResponse:
        """Ask the user; bounded in time by the door. Headless doors answer by policy."""
        ...

    async def save_documents(self, paths: Sequence[Path]) -> dict[Path, str]:
        """Make the disk hold the buffer text of ``paths`` (those the agent edited) before a
        tool that reads the disk runs. Returns the paths that could not be saved, each with
        the reason (empty: the disk holds every buffer)."""
        ...

    async def files_changed_on_disk(self, paths: Sequence[Path]) -> None:
        """The disk under ``paths`` may have changed behind the editor (after ``Bash``); the door
        refreshes buffers that hold no unsaved user changes. An empty sequence means
        "anything under the roots"."""
        ...

    def emit(self, session_id: str, update: SessionUpdate) -> None:
        """Send one session update to the user (never blocks)."""
        ...


@runtime_checkable
class DocumentShower(Protocol):
    """A door that can open a file in the user's editor (the LSP door: ``window/showDocument``).
    Optional: the core checks ``isinstance(host, DocumentShower)`` and, without it, names the
    path instead."""

    async def show_document(self, path: Path) -> str | None:
        """Open ``path`` in the editor and focus it. ``None`` when it was shown, else why not
        (in words for the user). Never raises."""
        ...
