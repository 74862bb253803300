"""The editor's open documents as the door sees them: path index, disk state, change waiters.

pygls keeps the text and version of every document the client opened (its workspace is the
overlay). This module adds what the door needs on top:

* a path -> URI index, so the core (which speaks absolute paths) finds buffers; only
  documents the client opened count (never pygls' lazily-read unmanaged documents);
* the disk text digest and codec last seen in sync with each document (read at ``didOpen``,
  ``didSave`` and after the server writes the file), to tell clean buffers from dirty ones;
* waiters that resolve when a document's text becomes an expected text, used to confirm that
  a ``workspace/applyEdit`` really reached the buffer (Neovim may skip an edit silently).
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument, Workspace

from lsp_agent.workspace.textfile import NotTextError, read_text_file

logger = logging.getLogger(__name__)


@dataclass(kw_only=True)
class DiskState:
    """What the disk held for one document when last known.

    ``digest`` is ``TextSnapshot.digest`` of the decoded disk text (``None``: no readable file);
    ``encoding``/``bom`` are the file's codec, reused when the server writes the file.
    """

    digest: str | None = None
    encoding: str = "utf-8"
    bom: bool = False


@dataclass(kw_only=True)
class _Tracked:
    uri: str
    path: Path
    disk: DiskState
    waiters: list[tuple[str, asyncio.Future[int]]] = field(default_factory=list)


def read_disk_state(path: Path) -> tuple[DiskState, str | None]:
    """The disk state of ``path`` and its decoded text (``None`` when missing or not text)."""
    try:
        snapshot = read_text_file(path)
    except (OSError, NotTextError):
        return DiskState(), None
    return (
        DiskState(digest=snapshot.digest, encoding=snapshot.encoding, bom=snapshot.bom),
        snapshot.text,
    )


def _key(path: str | Path) -> str:
    return os.path.normcase(os.path.abspath(path))


class OpenDocuments:
    """Index and disk state of the documents the client opened. Event-loop only."""

    def __init__(self) -> None:
        self._by_uri: dict[str, _Tracked] = {}
        self._by_path: dict[str, str] = {}

    # ---- sync notifications ------------------------------------------------------------------

    def opened(self, uri: str) -> None:
        """``textDocument/didOpen``: index ``uri`` by path and read its disk state."""
        fs_path = to_fs_path(uri)
        if fs_path is None:
            return  # not a file (untitled:, vscode-notebook-cell:, ...): no path to find it by
        path = Path(fs_path)
        disk, _ = read_disk_state(path)
        tracked = _Tracked(uri=uri, path=path, disk=disk)
        self._by_uri[unquote(uri)] = tracked
        for key in {_key(path), _key(os.path.realpath(path))}:
            self._by_path[key] = unquote(uri)

    def saved(self, uri: str) -> None:
        """``textDocument/didSave``: the disk now holds what the editor wrote."""
        tracked = self._by_uri.get(unquote(uri))
        if tracked is not None:
            tracked.disk, _ = read_disk_state(tracked.path)

    def wrote(self, path: Path, disk: DiskState) -> None:
        """The server wrote ``path`` itself; remember the new disk state."""
        tracked = self._tracked(path)
        if tracked is not None:
            tracked.disk = disk

    def closed(self, uri: str) -> None:
        """``textDocument/didClose``: forget ``uri``; pending waiters fail."""
        tracked = self._by_uri.pop(unquote(uri), None)
        if tracked is None:
            return
        for key in [k for k, v in self._by_path.items() if v == unquote(uri)]:
            del self._by_path[key]
        for _, future in tracked.waiters:
            if not future.done():
                future.set_exception(LookupError(f"{tracked.path} was closed in the editor"))

    def changed(self, doc: TextDocument) -> None:
        """``textDocument/didChange`` (after pygls applied it): resolve matching waiters."""
        tracked = self._by_uri.get(unquote(doc.uri))
        if tracked is None or not tracked.waiters:
            return
        text = doc.source
        remaining = []
        for expected, future in tracked.waiters:
            if future.done():
                continue
            if text == expected and doc.version is not None:
                future.set_result(doc.version)
            else:
                remaining.append((expected, future))
        tracked.waiters = remaining

    # ---- queries -------------------------------------------------------------------------------

    def find(self, workspace: Workspace, path: Path) -> TextDocument | None:
        """The open document at ``path`` (absolute; symlinks resolved as a fallback)."""
        tracked = self._tracked(path)
        if tracked is None:
            return None
        doc: TextDocument | None = workspace.text_documents.get(unquote(tracked.uri))
        return doc

    def disk_state(self, path: Path) -> DiskState:
        """The last known disk state of the open document at ``path`` (defaults if unknown)."""
        tracked = self._tracked(path)
        return tracked.disk if tracked is not None else DiskState()

    def open_paths(self) -> list[Path]:
        """Paths of all open file documents."""
        return [tracked.path for tracked in self._by_uri.values()]

    def uri_for(self, path: Path) -> str:
        """The URI the client uses for ``path`` if it is open, else a ``file:`` URI."""
        tracked = self._tracked(path)
        if tracked is not None:
            return tracked.uri
        return from_fs_path(str(path)) or path.as_uri()

    def expect(self, path: Path, text: str) -> asyncio.Future[int]:
        """A future resolving with the document version once the buffer at ``path`` holds
        exactly ``text`` (checked at every ``didChange``). Register it before sending the edit:
        clients may send the ``didChange`` before answering ``workspace/applyEdit``."""
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        tracked = self._tracked(path)
        if tracked is None:
            future.set_exception(LookupError(f"{path} is not open in the editor"))
        else:
            tracked.waiters.append((text, future))
        return future

    def _tracked(self, path: Path) -> _Tracked | None:
        uri = self._by_path.get(_key(path))
        if uri is None:
            uri = self._by_path.get(_key(os.path.realpath(path)))
        return self._by_uri.get(uri) if uri is not None else None
