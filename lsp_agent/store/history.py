"""Reading a transcript back: the records, the active branch, and the model's history.

A torn or corrupt line (a crash mid-write, a disk error, a hand edit) is skipped with a
warning naming the line; every record before and after it still loads. A record of a newer
format or an unknown kind is kept for the chain and otherwise ignored, with one warning. When
a record's parent is missing (its line was lost), the chain goes on with the record written
just before it in the file rather than dropping the earlier history.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from lsp_agent.model.types import Message, TextBlock, ToolResultBlock
from lsp_agent.store.records import (
    FORMAT_VERSION,
    KINDS,
    MESSAGE_KINDS,
    Record,
    RecordError,
    decode,
)

LOST_RECORDS = "[Part of this conversation could not be read back from the transcript.]"

RESTART_KINDS = frozenset({"compact_boundary", "clear"})
"""Records after which the model's history starts again."""

INTERRUPTED_RESULT = (
    "The session stopped before this tool call finished (the server exited); it may or may "
    "not have run. Check its effects before relying on them."
)


@dataclass(frozen=True, kw_only=True)
class Loaded:
    """A transcript as read: its records in file order and warnings for the user (each names
    the file and line)."""

    path: Path
    records: tuple[Record, ...]
    warnings: tuple[str, ...] = ()


def load_transcript(path: Path) -> Loaded:
    """Read ``path``. Raises ``OSError`` when the file cannot be read; never for its content
    (bad lines, including lines that are not UTF-8, become warnings)."""
    records: list[Record] = []
    warnings: list[str] = []
    newer: list[int] = []
    unknown: set[str] = set()
    with path.open("rb") as file:
        for number, line in enumerate(file, start=1):
            if not line.strip():
                continue
            try:
                record = decode(line)
            except RecordError as exc:
                torn = not line.endswith(b"\n")
                what = "torn last line" if torn else "corrupt line"
                warnings.append(f"{path}:{number}: {what} skipped: {exc}")
                continue
            if record.version > FORMAT_VERSION:
                newer.append(record.version)
            if record.type not in KINDS:
                unknown.add(record.type)
            records.append(record)
    if newer:
        warnings.append(
            f"{path}: written by a newer lsp-agent (record format {max(newer)}, this one reads "
            f"{FORMAT_VERSION}); loaded what this version understands"
        )
    if unknown:
        warnings.append(f"{path}: record kinds ignored: {', '.join(sorted(unknown))}")
    return Loaded(path=path, records=tuple(records), warnings=tuple(warnings))


class Linked(Protocol):
    """Anything with a record's ``uuid`` and ``parent_uuid`` (a record or its head)."""

    @property
    def uuid(self) -> str: ...

    @property
    def parent_uuid(self) -> str | None: ...


def active_chain(records: Sequence[Record], leaf: str | None = None) -> tuple[Record, ...]:
    """The branch ending at ``leaf`` (default: the newest record), oldest first.

    Follows ``parentUuid``; a parent that is missing, or a cycle, continues with the record
    written just before in the file, so one lost line never hides the history before it.
    """
    return tuple(records[i] for i in chain_positions(records, leaf))


def chain_positions(items: Sequence[Linked], leaf: str | None = None) -> list[int]:
    """:func:`active_chain` as positions in ``items`` (records or their heads), oldest first."""
    if not items:
        return []
    position = {r.uuid: i for i, r in enumerate(items)}
    index = position.get(leaf, len(items) - 1) if leaf is not None else len(items) - 1
    chain: list[int] = []
    seen: set[int] = set()
    while index >= 0 and index not in seen:
        seen.add(index)
        chain.append(index)
        parent = items[index].parent_uuid
        if parent is None:
            break
        found = position.get(parent)
        index = found if found is not None and found not in seen else index - 1
    chain.reverse()
    return chain


def message_of(record: Record) -> Message | None:
    """The message of a ``user``/``assistant`` record (``None``: not one, or malformed)."""
    if record.type not in MESSAGE_KINDS:
        return None
    try:
        return Message.model_validate(record.get("message"))
    except ValidationError:
        return None


def since_restart(chain: Sequence[Record]) -> tuple[Record, ...]:
    """The records after the last ``compact_boundary`` or ``clear`` (all when none)."""
    for i in range(len(chain) - 1, -1, -1):
        if chain[i].type in RESTART_KINDS:
            return tuple(chain[i + 1 :])
    return tuple(chain)


def history_of(chain: Sequence[Record]) -> tuple[tuple[Message, ...], tuple[str, ...]]:
    """The model's history from a branch, and the uuid of the record of each message.

    Starts after the last compaction or ``/clear``; consecutive messages of one role are
    merged (a torn line can leave two in a row); an unanswered ``tool_use`` at the end (the
    server died while tools ran) gets an error result, :data:`INTERRUPTED_RESULT`, so every
    ``tool_use`` is paired. A leading assistant message is dropped (the API wants a user
    message first).
    """
    return history_from([(r, message_of(r)) for r in since_restart(chain)])


def history_from(
    pairs: Iterable[tuple[Record, Message | None]],
) -> tuple[tuple[Message, ...], tuple[str, ...]]:
    """:func:`history_of` from the records after the last restart, each with its message
    already read (``None``: not a message)."""
    messages: list[Message] = []
    ids: list[str] = []
    for record, message in pairs:
        if message is None:
            continue
        if not messages and message.role == "assistant":
            continue
        if messages and messages[-1].role == message.role:
            last = messages[-1]
            messages[-1] = Message(role=last.role, content=(*last.content, *message.content))
            ids[-1] = record.uuid
            continue
        messages.append(message)
        ids.append(record.uuid)
    _pair(messages, ids)
    return tuple(messages), tuple(ids)


def _pair(messages: list[Message], ids: list[str]) -> None:
    """Make every ``tool_use`` answered by exactly one ``tool_result`` in the next message:
    missing results become :data:`INTERRUPTED_RESULT`, results answering nothing are dropped
    (their ``tool_use`` was on a lost line)."""
    for i, message in enumerate(messages):
        if message.role != "user":
            continue
        before = messages[i - 1] if i > 0 else None
        uses = before.tool_uses() if before is not None else ()
        wanted = {u.id for u in uses}
        content = [
            b
            for b in message.content
            if not isinstance(b, ToolResultBlock) or b.tool_use_id in wanted
        ]
        have = {b.tool_use_id for b in content if isinstance(b, ToolResultBlock)}
        missing = [_lost(u.id) for u in uses if u.id not in have]
        blocks = (*missing, *content) or (TextBlock(text=LOST_RECORDS),)
        if blocks != message.content:
            messages[i] = Message(role="user", content=blocks)
    if messages and messages[-1].role == "assistant" and messages[-1].tool_uses():
        messages.append(
            Message(role="user", content=tuple(_lost(u.id) for u in messages[-1].tool_uses()))
        )
        ids.append(ids[-1])


def _lost(tool_use_id: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=tool_use_id, content=INTERRUPTED_RESULT, is_error=True)


def interrupted(chain: Sequence[Record]) -> bool:
    """Whether the newest turn has no ``turn_end`` (the server stopped during it)."""
    for record in reversed(chain):
        if record.type == "turn_end":
            return False
        if record.type == "user" and record.get("prompt"):
            return True
    return False


def prompt_text(record: Record) -> str | None:
    """The text the user typed, for a ``user`` record that starts a turn."""
    if record.type != "user" or not record.get("prompt"):
        return None
    text = record.get("promptText")
    if isinstance(text, str):
        return text
    message = message_of(record)
    return message.text() if message is not None else None
