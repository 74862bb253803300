"""The history of a persisted session as the updates a client would have seen live (ACP
``session/load`` replays the conversation this way before the session goes on).

From the active branch of the transcript: each prompt as ``user_message_chunk`` (what the user
typed), the assistant's thinking and text as ``agent_thought_chunk``/``agent_message_chunk``,
each tool call as ``tool_call`` followed by a ``tool_call_update`` with its final status and
result text, compactions as ``context_compacted``, mode changes as ``current_mode_update``,
rewinds as an ``agent_message_chunk`` saying what was rewound (the prompts a conversation
rewind cut are no longer on the branch, so they are not replayed).
Every message update carries the record's uuid as ``messageId`` (what fork and rewind take).
Replay starts after the last ``/clear``. A turn the server never finished ends with a note.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from lsp_agent.context.compaction import is_compacted_start
from lsp_agent.model.types import Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from lsp_agent.protocol.events import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentItem,
    ContextCompacted,
    CurrentModeUpdate,
    SessionUpdate,
    TextContent,
    ToolCall,
    ToolCallUpdate,
    ToolKind,
    UserMessageChunk,
)
from lsp_agent.sessions.rewind import describe, outcome_of
from lsp_agent.store.history import INTERRUPTED_RESULT, message_of
from lsp_agent.store.records import Record
from lsp_agent.tools.registry import ToolRegistry

RESULT_CHARS = 2000
"""Longest tool result text replayed (characters; the transcript keeps all of it)."""

INTERRUPTED_NOTE = (
    "[This turn was interrupted: the server stopped before it finished. Tool calls without a "
    "result may or may not have run.]"
)


def replay(chain: Sequence[Record], tools: ToolRegistry | None = None) -> Iterator[SessionUpdate]:
    """The updates that replay ``chain`` (a transcript's active branch, oldest first), lazily
    (the first comes before the rest are built). ``tools`` give tool calls their titles and
    kinds."""
    start = 0
    for i, record in enumerate(chain):
        if record.type == "clear":
            start = i + 1
    return replay_pairs(((r, message_of(r)) for r in chain[start:]), tools)


def replay_pairs(
    pairs: Iterable[tuple[Record, Message | None]], tools: ToolRegistry | None = None
) -> Iterator[SessionUpdate]:
    """The updates that replay the records after the branch's last ``/clear``, each with its
    message already read (``None``: not a message), as they come: each record's updates go
    out before the next record is read."""
    pending: dict[str, None] = {}
    open_turn = False
    for record, message in pairs:
        if record.type == "turn_end":
            open_turn = False
        elif record.type == "user" and record.get("prompt"):
            open_turn = True
        for update in _record_updates(record, message, tools):
            if isinstance(update, ToolCall):
                pending[update.tool_call_id] = None
            elif isinstance(update, ToolCallUpdate):
                pending.pop(update.tool_call_id, None)
            yield update
    for call in pending:
        yield ToolCallUpdate(
            tool_call_id=call,
            status="failed",
            content=(ContentItem(content=TextContent(text=INTERRUPTED_RESULT)),),
        )
    if open_turn:
        yield AgentMessageChunk(content=TextContent(text=INTERRUPTED_NOTE))


def _record_updates(
    record: Record, message: Message | None, tools: ToolRegistry | None
) -> Iterator[SessionUpdate]:
    if record.type == "compact_boundary":
        yield ContextCompacted(
            trigger=str(record.get("trigger", "auto")),
            tokens_before=_int(record.get("tokensBefore")),
            tokens_after=_int(record.get("tokensAfter")),
            prompts_kept=_int(record.get("promptsKept")),
            files=_int(record.get("files")),
            summary=str(record.get("summary", "")),
        )
        return
    if record.type == "rewind":
        data = record.get("data")
        outcome = outcome_of(data) if isinstance(data, dict) else None
        if outcome is not None:
            yield AgentMessageChunk(content=TextContent(text=describe(outcome)))
        return
    if record.type == "mode" and isinstance(record.get("mode"), str):
        yield CurrentModeUpdate(current_mode_id=record.get("mode"))
        return
    if message is None:
        return
    if message.role == "user":
        yield from _user_updates(record, message)
        return
    mid = record.uuid
    for item in message.content:
        if isinstance(item, TextBlock) and item.text:
            yield AgentMessageChunk(content=TextContent(text=item.text), message_id=mid)
        elif isinstance(item, ThinkingBlock) and item.thinking:
            yield AgentThoughtChunk(content=TextContent(text=item.thinking), message_id=mid)
        elif isinstance(item, ToolUseBlock):
            title, kind = _describe(item, tools)
            yield ToolCall(
                tool_call_id=item.id,
                title=title,
                kind=kind,
                status="pending",
                raw_input=item.input,
            )


def _user_updates(record: Record, message: Message) -> Iterator[SessionUpdate]:
    if is_compacted_start(message):
        return  # shown by its context_compacted update
    if record.get("prompt"):
        text = record.get("promptText")
        if not isinstance(text, str):
            text = message.text()
        yield UserMessageChunk(content=TextContent(text=text), message_id=record.uuid)
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            yield ToolCallUpdate(
                tool_call_id=block.tool_use_id,
                status="failed" if block.is_error else "completed",
                content=(ContentItem(content=TextContent(text=_cut(block.content))),),
            )


def _describe(use: ToolUseBlock, tools: ToolRegistry | None) -> tuple[str, ToolKind]:
    tool = tools.get(use.name) if tools is not None else None
    if tool is None:
        return use.name, "other"
    try:
        return tool.title(tool.parse(use.input)), tool.kind
    except Exception:
        return use.name, tool.kind


def _cut(text: str) -> str:
    if len(text) <= RESULT_CHARS:
        return text
    return text[:RESULT_CHARS] + f"\n… ({len(text) - RESULT_CHARS} more characters)"


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0
