"""The writer of one session's transcript: append-only, one record per line, flushed per
record and fsynced at turn end (:meth:`Transcript.sync`).

The file is created on the first record (a session nobody prompted leaves no file) and held
with an exclusive advisory lock (``flock``) while open, so a second server cannot append to
the same session: it gets :class:`TranscriptBusyError` and may fork instead. A write that fails
(disk full, read-only folder) turns persistence off for the session: :attr:`Transcript.error`
says why, later appends only update the in-memory chain, and the session goes on.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from lsp_agent.store.ids import RandomUuids
from lsp_agent.store.records import Clock, Record, encode, new_record

log = logging.getLogger(__name__)

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, one writer assumed
    fcntl = None  # type: ignore[assignment]


class TranscriptBusyError(Exception):
    """Another process holds the session's transcript open (it is running that session)."""


class Transcript:
    """Appends records to ``path`` for session ``session_id``; ``leaf`` is the uuid of the
    newest record of the current branch (``None`` before the first)."""

    def __init__(self, *, path: Path, session_id: str, leaf: str | None = None) -> None:
        self.path = path
        self.session_id = session_id
        self.leaf = leaf
        self.error: str | None = None
        """Why persistence is off (``None``: it is on)."""
        self.count = 0
        """Records appended by this writer."""
        self._file: IO[bytes] | None = None
        self._uuids = RandomUuids()
        self._clock = Clock()

    @property
    def enabled(self) -> bool:
        """Whether records still reach the file."""
        return self.error is None

    def open(self) -> None:
        """Create the folder and open the file for appending, locked. Raises
        :class:`TranscriptBusyError` when another process holds it; ``OSError`` when it cannot be
        created (callers turn that into :attr:`error`)."""
        if self._file is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        file = self.path.open("ab")
        if fcntl is not None:
            try:
                fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                file.close()
                raise TranscriptBusyError(
                    f"session {self.session_id} is open in another lsp-agent process "
                    f"({self.path}); fork it instead (run -p: --fork-session)"
                ) from None
        self._file = file

    def append(
        self, kind: str, *, parent: str | None = None, record_id: str | None = None, **fields: Any
    ) -> Record:
        """Append a record of ``kind`` with ``fields`` (JSON values) and return it.

        ``parent`` defaults to :attr:`leaf` (the record continues the branch); naming an older
        record starts a new branch from it (rewind). The record becomes the new leaf even
        when persistence is off. ``record_id`` is the record's ``uuid`` (default: a fresh one).
        Raises ``ValueError`` when a field uses an envelope name.
        """
        record = new_record(
            kind,
            session_id=self.session_id,
            parent=parent or self.leaf,
            fields=fields,
            record_id=record_id or self._uuids(),
            timestamp=self._clock(),
        )
        self.write(record)
        return record

    def write(self, record: Record) -> None:
        """Append an existing record (a fork's copy) and make it the leaf."""
        self.leaf = record.uuid
        if self.error is not None:
            return
        try:
            if self._file is None:
                self.open()
            assert self._file is not None
            self._file.write(encode(record))
            self._file.flush()
            self.count += 1
        except TranscriptBusyError as exc:
            self._fail(str(exc))
        except OSError as exc:
            self._fail(f"cannot write {self.path}: {exc.strerror or exc}")

    def write_all(self, records: Mapping[str, Record] | list[Record]) -> None:
        """Append several records in order (see :meth:`write`)."""
        for record in records.values() if isinstance(records, Mapping) else records:
            self.write(record)

    def sync(self) -> None:
        """Make every appended record durable (``fsync``; at turn end)."""
        if self._file is None or self.error is not None:
            return
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as exc:
            self._fail(f"cannot write {self.path}: {exc.strerror or exc}")

    def close(self) -> None:
        """Sync, release the lock and close the file (idempotent)."""
        self.sync()
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None

    def _fail(self, reason: str) -> None:
        log.warning("session %s: persistence is off: %s", self.session_id, reason)
        self.error = reason
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
