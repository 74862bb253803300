"""Pydantic models of what the LSP door sends: results of the client's ``lspAgent/*``
requests and params of the server's own requests and notifications.

They complete the protocol's single source (:mod:`lsp_agent.lsp.methods` names the methods,
:mod:`lsp_agent.lsp.params` holds what the client sends, the session updates and permission
types come from the core). Like every :class:`~lsp_agent.protocol.events.WireModel` they go out
through ``to_wire()``, which leaves ``None`` fields out: on the wire a field is present exactly
when its default is not ``None`` or it is set. The e2e suite checks every message the server
sends against these models.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.agent.loop import PromptStopReason
from lsp_agent.protocol.events import AvailableCommand, SessionUpdate, ToolCall, WireModel
from lsp_agent.protocol.permissions import PermissionMode, PermissionOption, RuleScope


class AgentCapabilities(WireModel):
    """``capabilities.experimental.lspAgent`` of the ``initialize`` result: the server's
    release, the protocol version, and the optional capabilities of ``methods.CAPABILITIES``
    (``loadSession`` gates ``lspAgent/session/load``, as ACP's ``agentCapabilities`` does)."""

    version: str
    protocol_version: int
    load_session: bool


# ---- results of client -> server requests -----------------------------------------------------


class SessionMode(WireModel):
    """One permission mode a session offers (ACP ``SessionMode``)."""

    id: PermissionMode
    name: str
    description: str | None = None


class SessionModeState(WireModel):
    """The session's current mode and the modes it offers (ACP ``SessionModeState``)."""

    current_mode_id: PermissionMode
    available_modes: tuple[SessionMode, ...]


class NewSessionResult(WireModel):
    """Result of ``lspAgent/session/new``: the session's id, its modes and the slash commands
    it accepts (ACP ``availableCommands``, in the answer so no notification races it)."""

    session_id: str
    modes: SessionModeState
    available_commands: tuple[AvailableCommand, ...] = ()


class TurnUsage(WireModel):
    """Token counts of one turn (tokens, summed over the turn's model requests)."""

    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


class PromptResult(WireModel):
    """Result of ``lspAgent/session/prompt``: why the turn ended and what it used, and the
    prompt's ``messageId`` (what ``lspAgent/session/rewind`` and fork take; absent for a slash
    command)."""

    stop_reason: PromptStopReason
    usage: TurnUsage
    message_id: str | None = None


class SessionCommandResult(WireModel):
    """Result of ``lspAgent/session/command``: the command's answer (Markdown), whether it
    failed, why its turn ended and what it used (a command that asks the model, such as
    ``compact`` or ``init``, uses tokens; the others none)."""

    text: str
    is_error: bool
    stop_reason: PromptStopReason
    usage: TurnUsage


class EmptyResult(WireModel):
    """An empty result object (``lspAgent/session/setMode``)."""


class SessionSummary(WireModel):
    """One session of ``lspAgent/session/list``: its directory, whether it is open in this
    server (``live``) and runs a turn (``busy``), and for a persisted one its title (the one
    the model wrote, else the first prompt), ISO 8601 UTC times, number of prompts, and
    whether its last turn was cut off by the server stopping. ``background_run``: the id of
    the background run (``lsp-agent run -p --bg``) of the same user that is running this
    session right now."""

    session_id: str
    cwd: str
    busy: bool
    live: bool = True
    title: str | None = None
    created: str | None = None
    updated: str | None = None
    turns: int | None = None
    interrupted: bool | None = None
    background_run: str | None = None


class ListSessionsResult(WireModel):
    """Result of ``lspAgent/session/list``."""

    sessions: tuple[SessionSummary, ...]


class LoadSessionResult(WireModel):
    """Result of ``lspAgent/session/load`` (after the history was replayed as updates):
    the modes and slash commands as in ``session/new``, and warnings about the transcript
    (lines that could not be read, a newer format)."""

    modes: SessionModeState | None = None
    available_commands: tuple[AvailableCommand, ...] = ()
    warnings: tuple[str, ...] = ()


class ForkSessionResult(WireModel):
    """Result of ``lspAgent/session/fork``: the new session, as ``session/new`` answers (its
    history is replayed as updates of the new id before this answer)."""

    session_id: str
    modes: SessionModeState
    available_commands: tuple[AvailableCommand, ...] = ()
    warnings: tuple[str, ...] = ()


class CheckpointSummary(WireModel):
    """One prompt of ``lspAgent/session/checkpoints``: its id, first line, Unix time
    (seconds), the files its turn changed (absolute paths) and whether every change was
    seen (``complete``)."""

    message_id: str
    prompt: str
    created: float
    files: tuple[str, ...]
    complete: bool


class ListCheckpointsResult(WireModel):
    """Result of ``lspAgent/session/checkpoints``: the session's prompts, oldest first."""

    checkpoints: tuple[CheckpointSummary, ...]


class RewindConflict(WireModel):
    """A file whose changes since the checkpoint overlap what was reverted: ``regions``
    conflict-marker regions were written into it (0: left as it was), ``reason`` says why."""

    path: str
    uri: str
    regions: int
    reason: str


class RewindResult(WireModel):
    """Result of ``lspAgent/session/rewind``: the prompt rewound to (its id and text, for the
    client to put back in the input), the files restored and removed (absolute paths), the
    conflicts, whether the conversation was cut, and ``failure`` when some file could not be
    changed."""

    message_id: str
    prompt: str
    restored: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    conflicts: tuple[RewindConflict, ...] = ()
    conversation: bool = False
    failure: str | None = None


# ---- server -> client -------------------------------------------------------------------------


class SessionUpdateParams(WireModel):
    """``lspAgent/session/update``: one update of session ``sessionId``; every ``path`` in it
    has a ``uri`` next to it."""

    session_id: str
    update: SessionUpdate = Field(discriminator="session_update")


class PermissionMeta(WireModel):
    """``_meta`` of a permission request: ``unsavedBuffers`` are URIs of files the call
    changes whose buffers have unsaved changes."""

    unsaved_buffers: tuple[str, ...]


class RequestPermissionParams(WireModel):
    """``lspAgent/session/requestPermission`` (ACP ``session/request_permission`` plus why the
    server asks): ``rule``/``source`` name the rule and settings layer that asked, if one did;
    ``suggestedRules`` are what an "always" answer saves, in one of ``scopes``;
    ``suggestedRuleLabels`` (one per rule) say it as the user knows it: a path rule
    ``Edit(//home/me/proj/src/calc.py)`` as ``Edit src/calc.py`` (show the label, the rule
    text as a detail; other rules are their own label). The server sends every field; the
    defaults say how a client reads one an older server left out."""

    session_id: str
    tool_call: ToolCall
    options: tuple[PermissionOption, ...]
    reason: str = ""
    suggested_rules: tuple[str, ...] = ()
    suggested_rule_labels: tuple[str, ...] = ()
    scopes: tuple[RuleScope, ...] = ("session",)
    rule: str | None = None
    source: str | None = None
    meta: PermissionMeta | None = Field(default=None, alias="_meta")


class SaveDocumentsParams(WireModel):
    """``lspAgent/workspace/saveDocuments``: the URIs of dirty buffers the agent edited."""

    uris: tuple[str, ...]


class DidChangeFilesParams(WireModel):
    """``lspAgent/workspace/didChangeFiles``: URIs of open, unmodified buffers whose files
    changed on disk."""

    uris: tuple[str, ...]


class SessionDidStartParams(WireModel):
    """``lspAgent/session/didStart``: the server started a turn for the agent command
    ``origin`` (e.g. ``lspAgent.fixWithAgent``) on the document ``uri``."""

    session_id: str
    cwd: str
    title: str
    origin: str
    uri: str


class SessionDidEndParams(WireModel):
    """``lspAgent/session/didEnd``: a turn the server started is over; ``error`` says why it
    failed, when it did."""

    session_id: str
    stop_reason: PromptStopReason
    usage: TurnUsage | None = None
    error: str | None = None


# ---- MCP servers ------------------------------------------------------------------------------


class McpServerInfo(BaseModel):
    """One MCP server as ``lspAgent/mcp/list`` and ``lspAgent/mcp/didChange`` describe it
    (:meth:`lsp_agent.mcp.service.McpService.statuses`): ``state`` is one of ``idle``,
    ``starting``, ``ready``, ``failed``, ``stopped``, ``needs_approval``, ``disabled``,
    ``denied``, ``untrusted``, ``invalid``; ``tools`` is a count; ``loggedIn`` says an OAuth
    token is held for the server (a client offers ``lspAgent/mcp/logout``). Sent as plain
    data, so ``error`` is ``null`` when there is none."""

    model_config = ConfigDict(frozen=True)

    name: str
    scope: str
    transport: str
    state: str
    error: str | None
    tools: int
    description: str
    logged_in: bool = Field(default=False, alias="loggedIn")


class McpServersResult(BaseModel):
    """The answer of every ``lspAgent/mcp/*`` request and the ``didChange`` payload: the
    servers of project directory ``cwd``."""

    model_config = ConfigDict(frozen=True)

    cwd: str
    servers: tuple[McpServerInfo, ...]


class McpResourceItem(BaseModel):
    """One resource offered for an ``@server:uri`` mention: ``label`` is the text to insert
    after the ``@`` (``server:uri``); ``mimeType`` and ``description`` only when the server
    gives them."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    label: str
    server: str
    uri: str
    name: str
    mime_type: str | None = Field(default=None, alias="mimeType")
    description: str | None = None


class McpResourcesResult(BaseModel):
    """The answer of ``lspAgent/mcp/resources``: matching resources of the ready servers of
    project directory ``cwd``, sorted by server then URI, at most 50."""

    model_config = ConfigDict(frozen=True)

    cwd: str
    items: tuple[McpResourceItem, ...]


class McpElicitParams(BaseModel):
    """``lspAgent/mcp/elicit``: MCP server ``server`` asks the user to fill a form.
    ``requestedSchema`` is a flat object schema (MCP 2025-06-18: string, number, integer,
    boolean and string-enum fields; ``required``); ``propertyOrder`` names its fields in the
    order the server listed them (the order to ask them in, which a JSON object decoded into an
    unordered table loses); ``problems`` lists what was wrong with the previous answer to the
    same form (absent the first time)."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    server: str
    message: str
    requested_schema: dict[str, Any] = Field(alias="requestedSchema")
    property_order: tuple[str, ...] = Field(default=(), alias="propertyOrder")
    problems: tuple[str, ...] | None = None
