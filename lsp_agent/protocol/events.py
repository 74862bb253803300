"""Session updates: the events the core emits while a prompt runs.

Shapes and names follow the Agent Client Protocol's ``session/update`` union (schema v1):
``agent_message_chunk``, ``agent_thought_chunk``, ``tool_call``, ``tool_call_update``,
``usage_update`` and ``plan``. Paths are absolute filesystem paths and lines are 1-based,
as in ACP; the LSP door converts them to URIs. ``to_wire()`` gives the camelCase JSON object that
goes out as the ``update`` of ``lspAgent/session/update``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
"""ACP ``ToolKind``."""

ToolCallStatus = Literal["pending", "in_progress", "completed", "failed"]
"""ACP ``ToolCallStatus``."""


class WireModel(BaseModel):
    """Base of every wire-shaped model: camelCase aliases, frozen."""

    model_config = ConfigDict(frozen=True, alias_generator=to_camel, populate_by_name=True)

    def to_wire(self) -> dict[str, Any]:
        """The JSON object sent on the wire (camelCase keys, ``None`` fields left out)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class TextContent(WireModel):
    """ACP ``ContentBlock`` of type text."""

    type: Literal["text"] = "text"
    text: str


class ContentItem(WireModel):
    """ACP ``ToolCallContent`` of type ``content``: a content block shown in the tool call."""

    type: Literal["content"] = "content"
    content: TextContent


class DiffItem(WireModel):
    """ACP ``ToolCallContent`` of type ``diff``: whole-file texts before and after.

    ``old_text`` is ``None`` for a new file. ``unified_diff`` is our extension (ACP carries
    only the texts): the unified diff the permission prompt shows, so thin clients need no diff
    library.
    """

    type: Literal["diff"] = "diff"
    path: str
    old_text: str | None = None
    new_text: str
    unified_diff: str | None = None
    uri: str | None = None
    """The ``file:`` URI of ``path``, added by the LSP door (editors address files by URI)."""


ToolCallContent = ContentItem | DiffItem


class Location(WireModel):
    """ACP ``ToolCallLocation``: a file (absolute path) and an optional 1-based line."""

    path: str
    line: int | None = None
    uri: str | None = None
    """The ``file:`` URI of ``path``, added by the LSP door."""


class AgentMessageChunk(WireModel):
    """A piece of the assistant's visible answer."""

    session_update: Literal["agent_message_chunk"] = "agent_message_chunk"
    content: TextContent
    message_id: str | None = None


class AgentThoughtChunk(WireModel):
    """A piece of the assistant's thinking."""

    session_update: Literal["agent_thought_chunk"] = "agent_thought_chunk"
    content: TextContent
    message_id: str | None = None


class UserMessageChunk(WireModel):
    """The user's prompt, replayed when a session is loaded."""

    session_update: Literal["user_message_chunk"] = "user_message_chunk"
    content: TextContent
    message_id: str | None = None


class ToolCall(WireModel):
    """A tool call the model made (first report of it)."""

    session_update: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    title: str
    kind: ToolKind = "other"
    status: ToolCallStatus = "pending"
    content: tuple[ToolCallContent, ...] = ()
    locations: tuple[Location, ...] = ()
    raw_input: dict[str, Any] | None = None


class LineRange(WireModel):
    """Lines ``start`` to ``end`` of a document (1-based, inclusive)."""

    start: int
    end: int


class ProposalStatus(WireModel):
    """Our extension (ACP has none): how a proposed change of ``path`` that waits for the
    user's answer relates to the document now. ``current``: the document still holds the text
    the change was computed from; ``rebased``: the user changed other lines, and the change
    will be merged with them; ``stale``: the user changed lines the change touches
    (``conflicts``, in the document's current lines), so approving it will fail. ``version``
    is the editor's document version checked; ``message`` says it in words for the user."""

    path: str
    status: Literal["current", "rebased", "stale"]
    message: str
    version: int | None = None
    conflicts: tuple[LineRange, ...] = ()
    uri: str | None = None
    """The ``file:`` URI of ``path``, added by the LSP door."""


class ToolCallUpdate(WireModel):
    """A change to a tool call: only the fields that changed are set. ``proposal`` (our
    extension) is sent while a permission prompt for the call is open and the user changes a
    document it would change."""

    session_update: Literal["tool_call_update"] = "tool_call_update"
    tool_call_id: str
    title: str | None = None
    kind: ToolKind | None = None
    status: ToolCallStatus | None = None
    content: tuple[ToolCallContent, ...] | None = None
    locations: tuple[Location, ...] | None = None
    raw_input: dict[str, Any] | None = None
    raw_output: dict[str, Any] | None = None
    proposal: tuple[ProposalStatus, ...] | None = None


class UsageUpdate(WireModel):
    """Context use: ``used`` tokens of a ``size``-token context window."""

    session_update: Literal["usage_update"] = "usage_update"
    used: int
    size: int


class ContextCompacted(WireModel):
    """The history was compacted (our extension; ACP has no such update): the boundary record
    (``trigger`` auto/manual/reactive, prompt tokens before and after), how many of the user's
    messages were kept verbatim and how many files the working set lists, and the summary."""

    session_update: Literal["context_compacted"] = "context_compacted"
    trigger: str
    tokens_before: int
    tokens_after: int
    prompts_kept: int
    files: int
    summary: str


class AvailableCommand(WireModel):
    """ACP ``AvailableCommand``: a slash command the session accepts; ``input.hint`` describes
    its argument."""

    name: str
    description: str
    input: dict[str, str] | None = None


class AvailableCommandsUpdate(WireModel):
    """ACP ``available_commands_update``: the slash commands the session accepts now."""

    session_update: Literal["available_commands_update"] = "available_commands_update"
    available_commands: tuple[AvailableCommand, ...]


class PlanEntry(WireModel):
    """One entry of an ACP plan."""

    content: str
    priority: Literal["high", "medium", "low"] = "medium"
    status: Literal["pending", "in_progress", "completed"] = "pending"


class Plan(WireModel):
    """The complete current plan (clients replace what they showed)."""

    session_update: Literal["plan"] = "plan"
    entries: tuple[PlanEntry, ...]


class CurrentModeUpdate(WireModel):
    """The session's permission mode changed."""

    session_update: Literal["current_mode_update"] = "current_mode_update"
    current_mode_id: str


class SessionInfoUpdate(WireModel):
    """ACP ``session_info_update``: the session's metadata changed; only the fields sent
    change (``title``: a short title the model wrote for the session)."""

    session_update: Literal["session_info_update"] = "session_info_update"
    title: str | None = None


class ModelRetry(WireModel):
    """The model request failed and will be sent again (our extension; ACP has none; Claude
    Code's ``system``/``api_retry`` message in ``-p`` output): retry ``attempt`` of at most
    ``max_retries``, after ``delay_ms`` milliseconds. ``error`` is the API's error type
    (``overloaded_error``, ``rate_limit_error``, ...) or ``connection_error`` /
    ``timeout_error``; ``status`` the HTTP status (absent for connection failures);
    ``message`` the failure in words. Clients show it until the session's next other update
    or the end of the turn."""

    session_update: Literal["model_retry"] = "model_retry"
    attempt: int
    max_retries: int
    delay_ms: int
    error: str
    status: int | None = None
    message: str


SessionUpdate = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCall
    | ToolCallUpdate
    | UsageUpdate
    | Plan
    | CurrentModeUpdate
    | ContextCompacted
    | AvailableCommandsUpdate
    | SessionInfoUpdate
    | ModelRetry
)
