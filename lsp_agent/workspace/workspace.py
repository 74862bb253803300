"""The session's view of files: editor buffers first, the disk second.

Tools read through :meth:`Workspace.read` so they see the user's unsaved text, and change files
only through :meth:`Workspace.apply` (the change-set pipeline: the door applies open buffers
through the editor and writes closed files atomically).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lsp_agent.protocol.documents import ApplyResult, FileChange, TextSnapshot
from lsp_agent.protocol.host import Host
from lsp_agent.workspace.textfile import read_text_file


class Workspace:
    """Reads and changes documents on behalf of one session.

    ``edited`` collects every path the agent changed, so that disk-reading tools can ask the
    door to save exactly those buffers first.
    """

    def __init__(self, *, host: Host, roots: Sequence[Path]) -> None:
        self.host = host
        self.roots = tuple(roots)
        self.edited: set[Path] = set()

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
        """Apply ``changes`` through the door (see :meth:`Host.apply_changes`)."""
        result = await self.host.apply_changes(changes, label=label)
        if result.applied:
            self.edited.update(change.path for change in changes)
        return result

    async def before_disk_read(self) -> None:
        """Save the buffers the agent edited since the last save, so the disk holds what the
        agent wrote. Once saved they are forgotten: text the user types into them later is
        theirs to save, never written behind their back by a later command."""
        if self.edited:
            await self.host.save_documents(sorted(self.edited))
            self.edited.clear()

    async def after_disk_write(self, paths: Sequence[Path] = ()) -> None:
        """Tell the door the disk may have changed (refresh clean buffers)."""
        await self.host.files_changed_on_disk(paths)
