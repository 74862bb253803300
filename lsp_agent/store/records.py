"""Transcript records: one JSON object per line, linked by ``uuid`` and ``parentUuid``.

Field names follow Claude Code's transcripts (``type``, ``uuid``, ``parentUuid``,
``sessionId``, ``timestamp``, ``version``, ``message``); every other field of a record is kept
as it was read, so a record written by a newer version survives a load and a fork unchanged.

Kinds (``type``):

- ``meta``: the session's start (``cwd``, ``roots``, ``model``, ``mode``, ``forkedFrom``);
- ``user`` / ``assistant``: one conversation message (``message``: the Messages API shape,
  tool calls and results included); a user record that starts a turn has ``prompt: true``;
- ``compact_boundary``: a compaction (the context engine's boundary: ``trigger``,
  ``tokensBefore``, ``tokensAfter``, ``promptsKept``, ``files``, and ``summary``); the model's
  history restarts after it;
- ``clear``: ``/clear``; the history restarts after it and so does the replay;
- ``mode`` / ``model``: the permission mode or model changed (``mode`` / ``model``);
- ``title``: a title for the session list (``title``);
- ``turn_end``: a turn ended (``stopReason``); a prompt without one was interrupted;
- ``checkpoint`` / ``rewind``: written by checkpoints and rewind (``data``, their own shape).

A record's parent is the record before it in its branch: loading follows ``parentUuid`` from
the newest record back to the first, so a record whose parent is an older record (a rewind)
starts a new branch and the abandoned one is skipped.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

import pydantic_core

from lsp_agent.store.ids import random_uuid

FORMAT_VERSION = 1
"""Version of the record format written by this code; a higher one on load is read as far as
it is understood, with a warning."""

RecordKind = Literal[
    "meta",
    "user",
    "assistant",
    "compact_boundary",
    "clear",
    "mode",
    "model",
    "title",
    "turn_end",
    "checkpoint",
    "rewind",
]

KINDS: frozenset[str] = frozenset(RecordKind.__args__)  # type: ignore[attr-defined]
"""Every kind this version writes and understands."""

MESSAGE_KINDS: frozenset[str] = frozenset({"user", "assistant"})

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class RecordError(ValueError):
    """A line is not a record (not JSON, not an object, or without ``type``/``uuid``)."""


@dataclass(frozen=True, kw_only=True)
class Record:
    """One transcript record. ``fields`` holds everything but the envelope (read-only)."""

    type: str
    uuid: str
    parent_uuid: str | None
    session_id: str
    timestamp: str
    version: int = FORMAT_VERSION
    fields: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    def get(self, name: str, default: Any = None) -> Any:
        """A field of the record (``default`` when absent)."""
        return self.fields.get(name, default)

    def to_json(self) -> dict[str, Any]:
        """The record as the JSON object written to the file."""
        return {
            "type": self.type,
            "uuid": self.uuid,
            "parentUuid": self.parent_uuid,
            "sessionId": self.session_id,
            "timestamp": self.timestamp,
            "version": self.version,
            **self.fields,
        }

    def with_session(self, session_id: str) -> Record:
        """The same record belonging to another session (a fork's copy)."""
        return Record(
            type=self.type,
            uuid=self.uuid,
            parent_uuid=self.parent_uuid,
            session_id=session_id,
            timestamp=self.timestamp,
            version=self.version,
            fields=self.fields,
        )


_ENVELOPE = ("type", "uuid", "parentUuid", "sessionId", "timestamp", "version")


def now() -> str:
    """The current time as ISO 8601 UTC with milliseconds (``2026-01-02T03:04:05.678Z``)."""
    ns = time.time_ns()
    seconds, rest = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{rest // 1_000_000:03d}Z"


class Clock:
    """:func:`now` for one writer stamping many records: the date and time of day are
    formatted once per second (``strftime`` and ``gmtime`` cost more than the record's other
    fields together), the milliseconds at every call. The same text as :func:`now`."""

    def __init__(self) -> None:
        self._second = -1
        self._prefix = ""

    def __call__(self) -> str:
        """The current time as :func:`now` gives it."""
        seconds, rest = divmod(time.time_ns(), 1_000_000_000)
        if seconds != self._second:
            self._prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
            self._second = seconds
        return f"{self._prefix}.{rest // 1_000_000:03d}Z"


def new_record(
    kind: str,
    *,
    session_id: str,
    parent: str | None,
    fields: Mapping[str, Any] | None = None,
    record_id: str | None = None,
    timestamp: str | None = None,
) -> Record:
    """A new record of ``kind``, stamped ``timestamp`` (default: :func:`now`), with
    ``record_id`` as its ``uuid`` (default: a fresh one). Raises ``ValueError`` when
    ``fields`` uses an envelope name."""
    extra = dict(fields or {})
    clash = [name for name in _ENVELOPE if name in extra]
    if clash:
        raise ValueError(f"record fields may not use envelope names: {', '.join(clash)}")
    return Record(
        type=kind,
        uuid=record_id or random_uuid(),
        parent_uuid=parent,
        session_id=session_id,
        timestamp=timestamp or now(),
        fields=MappingProxyType(extra),
    )


def encode(record: Record) -> bytes:
    """One line of the transcript: JSON in UTF-8, ending in ``\\n``. Text that cannot be
    UTF-8 (a lone surrogate from a model) is written as JSON ``\\u`` escapes instead.

    Serialised by pydantic-core (about twice as fast as :mod:`json` on a message record, with
    the same bytes as ``json.dumps(..., ensure_ascii=False, separators=(",", ":"))``, NaN and
    float spelling included); what it refuses (lone surrogates) goes through :mod:`json`."""
    data = record.to_json()
    try:
        return pydantic_core.to_json(data) + b"\n"
    except (pydantic_core.PydanticSerializationError, ValueError):
        return (json.dumps(data, ensure_ascii=True, separators=(",", ":")) + "\n").encode()


def decode(line: str | bytes) -> Record:
    """The record of one line (UTF-8 bytes or text). Raises :class:`RecordError` saying what
    is wrong. Parsed by pydantic-core's JSON parser (a few times faster than the standard
    library's on long transcripts), falling back to :mod:`json` for what it refuses (escaped
    lone surrogates, which :func:`encode` may write)."""
    try:
        data = pydantic_core.from_json(line)
    except ValueError:
        try:
            data = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            where = (
                f" ({exc.msg} at column {exc.colno})"
                if isinstance(exc, json.JSONDecodeError)
                else " (not UTF-8)"
                if isinstance(exc, UnicodeDecodeError)
                else " (nested too deeply)"
            )
            raise RecordError(f"not JSON{where}") from None
    if not isinstance(data, dict):
        raise RecordError(f"not a JSON object but {type(data).__name__}")
    kind, uid = data.get("type"), data.get("uuid")
    if not isinstance(kind, str) or not kind:
        raise RecordError("no string 'type'")
    if not isinstance(uid, str) or not uid:
        raise RecordError("no string 'uuid'")
    parent = data.get("parentUuid")
    version = data.get("version", FORMAT_VERSION)
    return Record(
        type=kind,
        uuid=uid,
        parent_uuid=parent if isinstance(parent, str) else None,
        session_id=str(data.get("sessionId", "")),
        timestamp=str(data.get("timestamp", "")),
        version=version if isinstance(version, int) else FORMAT_VERSION,
        fields=MappingProxyType({k: v for k, v in data.items() if k not in _ENVELOPE}),
    )
