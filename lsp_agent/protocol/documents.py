"""Text snapshots and file changes: the currency between tools, the core and the doors.

A :class:`TextSnapshot` is what a tool read: either an editor buffer (``source="buffer"``,
with the editor's document ``version``) or a file on disk (``source="disk"``, with the codec
it was decoded with). Text is always a Python ``str`` holding the document's own line endings
(CRLF stays CRLF) and no BOM; positions inside it are code-point offsets. Conversion to LSP
positions happens in the LSP door only.

A :class:`FileChange` names the snapshot it was computed from, so whoever applies it can refuse
when the document moved on (an editor buffer whose version changed, a file whose bytes changed).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal


@dataclass(frozen=True, kw_only=True)
class TextSnapshot:
    """The text of one document at one moment.

    ``path`` is absolute. ``version`` is the editor's document version (``None`` for disk
    reads). ``encoding`` is the Python codec name the bytes were decoded with (``"utf-8"``,
    ``"utf-16-le"``, ``"latin-1"``, ...); ``bom`` says whether the file starts with a
    byte-order mark that must be written back. ``mtime_ns`` is the file's modification time
    in nanoseconds when read from disk.
    """

    path: Path
    text: str
    version: int | None = None
    source: Literal["buffer", "disk"] = "disk"
    encoding: str = "utf-8"
    bom: bool = False
    mtime_ns: int | None = None

    @property
    def digest(self) -> str:
        """SHA-256 of the text (hex), to detect changes between read and write."""
        return hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).hexdigest()

    @property
    def eol(self) -> str:
        """The dominant line ending of the text: ``"\\r\\n"`` or ``"\\n"`` (the default)."""
        crlf = self.text.count("\r\n")
        return "\r\n" if crlf and crlf >= self.text.count("\n") - crlf else "\n"


@dataclass(frozen=True, kw_only=True)
class FileChange:
    """Replace the whole text of ``path`` by ``new_text``.

    ``base`` is the snapshot the change was computed from; ``None`` means the file is new and
    must not exist yet. ``new_text`` uses the same line endings as ``base.text``.
    """

    path: Path
    base: TextSnapshot | None
    new_text: str


@dataclass(frozen=True, kw_only=True)
class ApplyResult:
    """What applying a batch of changes did.

    ``applied`` is all-or-nothing per batch as far as the door can promise it; ``failure``
    says why not, in words fit for the model and the user. ``snapshots`` hold the new state
    of every changed document (new buffer version or new disk bytes). ``merged`` names the
    documents whose change was merged with newer text (the user's typing) before it was applied.
    """

    applied: bool
    failure: str | None = None
    snapshots: tuple[TextSnapshot, ...] = ()
    merged: tuple[Path, ...] = ()
