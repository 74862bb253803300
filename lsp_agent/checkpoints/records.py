"""The plain data of checkpoints: which files a prompt's turn changed, from what to what.

File contents are git blob ids (hex) in the shadow store (:mod:`.objects`); ``None`` means
the file did not exist. A buffer's content is its text encoded as its file would be saved,
so an unsaved buffer and the file on disk compare byte for byte.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

RECORD_VERSION = 1
"""Version of the manifest format written into each checkpoint commit."""


class FileRecord(BaseModel):
    """One file a turn changed: its content before the turn's first change to it and after
    the last. ``before_version``/``after_version`` are the editor's document versions when the
    content came from an open buffer (``None``: from the disk)."""

    model_config = ConfigDict(frozen=True)

    before: str | None
    after: str | None
    before_version: int | None = None
    after_version: int | None = None


class Checkpoint(BaseModel):
    """The checkpoint of one prompt: ``message_id`` names the prompt (the user message),
    ``seq`` orders the checkpoints of a session, ``created`` is a Unix time (seconds).

    ``root`` is the project folder whose full tree ``tree`` (blob ids under the shadow store,
    ``None`` until the turn changed something) was taken before the first change; ``files``
    maps absolute paths to what the turn did to them. ``prompt`` is the prompt's first line
    (for pickers). ``complete`` is false when a snapshot failed during the turn (the files it
    could not see are missing from ``files``).
    """

    model_config = ConfigDict(frozen=True)

    version: int = RECORD_VERSION
    session_id: str
    message_id: str
    seq: int
    created: float
    root: str
    prompt: str = ""
    tree: str | None = None
    files: dict[str, FileRecord] = Field(default_factory=dict)
    complete: bool = True
