"""The ``lspAgent/*`` method table: the single source of the protocol's methods.

Every custom method uses the ``lspAgent/`` prefix. :data:`METHODS` names each method with its
direction, its kind (request or notification) and the pydantic models of its payloads (by
class name, resolved by :mod:`lsp_agent.lsp.schema`, so that this module stays free of pydantic
and the ``initialize`` answer does not wait for it). The JSON Schema, the VS Code extension's
TypeScript types and the Neovim plugin's Lua table are generated from this table and those
models (``python -m lsp_agent.lsp.schema_gen``); docs/protocol.md describes them.

A method with a ``capability`` is optional: the server serves it only when it advertises that
capability as ``true`` in ``capabilities.experimental.lspAgent`` (:data:`CAPABILITIES`), and
clients must check it before calling (as ACP's ``agentCapabilities.loadSession`` gates
``session/load``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

PROTOCOL_VERSION = 1
"""Version of the ``lspAgent/*`` protocol, sent in ``capabilities.experimental.lspAgent``."""

Direction = Literal["client_to_server", "server_to_client"]
Kind = Literal["request", "notification"]


@dataclass(frozen=True, kw_only=True)
class Method:
    """One ``lspAgent/*`` method.

    ``params`` and ``result`` are names of pydantic models (``result`` is ``None`` for a
    notification). ``capability`` names the optional capability that gates the method;
    ``section`` is its section in docs/protocol.md.
    """

    name: str
    direction: Direction
    kind: Kind
    params: str
    result: str | None = None
    capability: str | None = None
    section: str
    summary: str


# Client -> server requests.
SESSION_NEW = "lspAgent/session/new"
SESSION_PROMPT = "lspAgent/session/prompt"
SESSION_SET_MODE = "lspAgent/session/setMode"
SESSION_LIST = "lspAgent/session/list"
SESSION_LOAD = "lspAgent/session/load"
SESSION_CLOSE = "lspAgent/session/close"
SESSION_FORK = "lspAgent/session/fork"
SESSION_COMMAND = "lspAgent/session/command"
SESSION_CHECKPOINTS = "lspAgent/session/checkpoints"
SESSION_REWIND = "lspAgent/session/rewind"
MCP_LIST = "lspAgent/mcp/list"
MCP_APPROVE = "lspAgent/mcp/approve"
MCP_RECONNECT = "lspAgent/mcp/reconnect"
MCP_RESOURCES = "lspAgent/mcp/resources"
MCP_LOGIN = "lspAgent/mcp/login"
MCP_LOGOUT = "lspAgent/mcp/logout"
MCP_ELICIT = "lspAgent/mcp/elicit"
MCP_SET_ENABLED = "lspAgent/mcp/setEnabled"

# Client -> server notifications.
SESSION_CANCEL = "lspAgent/session/cancel"
DIAGNOSTICS_DID_CHANGE = "lspAgent/diagnostics/didChange"

# Server -> client requests.
SESSION_REQUEST_PERMISSION = "lspAgent/session/requestPermission"
WORKSPACE_SAVE_DOCUMENTS = "lspAgent/workspace/saveDocuments"

# Server -> client notifications.
SESSION_UPDATE = "lspAgent/session/update"
SESSION_DID_START = "lspAgent/session/didStart"
SESSION_DID_END = "lspAgent/session/didEnd"
WORKSPACE_DID_CHANGE_FILES = "lspAgent/workspace/didChangeFiles"
MCP_DID_CHANGE = "lspAgent/mcp/didChange"

CAP_LOAD_SESSION = "loadSession"

CAPABILITIES: Mapping[str, bool] = MappingProxyType({CAP_LOAD_SESSION: True})
"""Optional capabilities advertised in ``capabilities.experimental.lspAgent``: a method gated
by a capability is served exactly when its value here is ``true`` (tests hold this)."""

_C2S: Direction = "client_to_server"
_S2C: Direction = "server_to_client"

METHODS: tuple[Method, ...] = (
    Method(
        name=SESSION_NEW,
        direction=_C2S,
        kind="request",
        params="NewSessionParams",
        result="NewSessionResult",
        section="4.1",
        summary="Create a session in a directory.",
    ),
    Method(
        name=SESSION_PROMPT,
        direction=_C2S,
        kind="request",
        params="PromptParams",
        result="PromptResult",
        section="4.2",
        summary="Run one turn; answered when the turn ends.",
    ),
    Method(
        name=SESSION_CANCEL,
        direction=_C2S,
        kind="notification",
        params="SessionIdParams",
        section="4.3",
        summary="Cancel the session's running turn.",
    ),
    Method(
        name=SESSION_SET_MODE,
        direction=_C2S,
        kind="request",
        params="SetModeParams",
        result="EmptyResult",
        section="4.4",
        summary="Change the session's permission mode.",
    ),
    Method(
        name=SESSION_LIST,
        direction=_C2S,
        kind="request",
        params="ListSessionsParams",
        result="ListSessionsResult",
        section="4.5",
        summary="The open sessions and the persisted ones (title, time, prompts, folder).",
    ),
    Method(
        name=SESSION_UPDATE,
        direction=_S2C,
        kind="notification",
        params="SessionUpdateParams",
        section="4.6",
        summary="A session update (message chunk, tool call, usage, mode).",
    ),
    Method(
        name=SESSION_LOAD,
        direction=_C2S,
        kind="request",
        params="LoadSessionParams",
        result="LoadSessionResult",
        capability=CAP_LOAD_SESSION,
        section="4.7",
        summary="Resume a session, replaying its history as updates (optional).",
    ),
    Method(
        name=SESSION_CLOSE,
        direction=_C2S,
        kind="request",
        params="SessionIdParams",
        result="EmptyResult",
        section="4.8",
        summary="Close a session: end its turn and release everything it holds.",
    ),
    Method(
        name=SESSION_FORK,
        direction=_C2S,
        kind="request",
        params="ForkSessionParams",
        result="ForkSessionResult",
        capability=CAP_LOAD_SESSION,
        section="4.9",
        summary="A new session from a session's history up to a message (optional).",
    ),
    Method(
        name=SESSION_COMMAND,
        direction=_C2S,
        kind="request",
        params="SessionCommandParams",
        result="SessionCommandResult",
        section="4.10",
        summary="Run a slash command of a session; the result is its outcome.",
    ),
    Method(
        name=SESSION_REQUEST_PERMISSION,
        direction=_S2C,
        kind="request",
        params="RequestPermissionParams",
        result="RequestPermissionResult",
        section="5.1",
        summary="Ask the user whether a tool call may run.",
    ),
    Method(
        name=WORKSPACE_SAVE_DOCUMENTS,
        direction=_S2C,
        kind="request",
        params="SaveDocumentsParams",
        result="SaveDocumentsResult",
        section="6.1",
        summary="Save buffers the agent edited.",
    ),
    Method(
        name=WORKSPACE_DID_CHANGE_FILES,
        direction=_S2C,
        kind="notification",
        params="DidChangeFilesParams",
        section="6.2",
        summary="Files changed on disk behind open buffers; reload them.",
    ),
    Method(
        name=SESSION_DID_START,
        direction=_S2C,
        kind="notification",
        params="SessionDidStartParams",
        section="13.3",
        summary="The server started a turn for an agent command.",
    ),
    Method(
        name=SESSION_DID_END,
        direction=_S2C,
        kind="notification",
        params="SessionDidEndParams",
        section="13.3",
        summary="A turn the server started is over.",
    ),
    Method(
        name=DIAGNOSTICS_DID_CHANGE,
        direction=_C2S,
        kind="notification",
        params="DiagnosticsDidChangeParams",
        section="14.1",
        summary="The editor's diagnostics of a document (the diagnostics bridge).",
    ),
    Method(
        name=MCP_LIST,
        direction=_C2S,
        kind="request",
        params="McpListParams",
        result="McpServersResult",
        section="15.1",
        summary="The MCP servers of a project directory.",
    ),
    Method(
        name=MCP_APPROVE,
        direction=_C2S,
        kind="request",
        params="McpApproveParams",
        result="McpServersResult",
        section="15.2",
        summary="Record the user's answer about a project MCP server.",
    ),
    Method(
        name=MCP_RECONNECT,
        direction=_C2S,
        kind="request",
        params="McpReconnectParams",
        result="McpServersResult",
        section="15.3",
        summary="Restart an MCP server now.",
    ),
    Method(
        name=MCP_DID_CHANGE,
        direction=_S2C,
        kind="notification",
        params="McpServersResult",
        section="15.4",
        summary="An MCP server's state or the configuration changed.",
    ),
    Method(
        name=MCP_RESOURCES,
        direction=_C2S,
        kind="request",
        params="McpResourcesParams",
        result="McpResourcesResult",
        section="15.5",
        summary="Resources matching an @server:uri mention being typed (completion).",
    ),
    Method(
        name=MCP_LOGIN,
        direction=_C2S,
        kind="request",
        params="McpLoginParams",
        result="McpServersResult",
        section="15.6",
        summary="Log in to an HTTP MCP server with OAuth (the browser opens).",
    ),
    Method(
        name=MCP_LOGOUT,
        direction=_C2S,
        kind="request",
        params="McpLogoutParams",
        result="McpServersResult",
        section="15.7",
        summary="Forget an HTTP MCP server's OAuth tokens.",
    ),
    Method(
        name=MCP_ELICIT,
        direction=_S2C,
        kind="request",
        params="McpElicitParams",
        result="McpElicitResult",
        section="15.8",
        summary="Show an MCP server's form (clients declaring mcpElicitation).",
    ),
    Method(
        name=MCP_SET_ENABLED,
        direction=_C2S,
        kind="request",
        params="McpSetEnabledParams",
        result="McpServersResult",
        section="15.9",
        summary="Turn an MCP server of any scope on or off for a project (persisted).",
    ),
    Method(
        name=SESSION_CHECKPOINTS,
        direction=_C2S,
        kind="request",
        params="ListCheckpointsParams",
        result="ListCheckpointsResult",
        section="17.1",
        summary="The prompts of a session that can be rewound to.",
    ),
    Method(
        name=SESSION_REWIND,
        direction=_C2S,
        kind="request",
        params="RewindParams",
        result="RewindResult",
        section="17.2",
        summary="Go back to before a prompt: code, conversation or both.",
    ),
)
"""Every ``lspAgent/*`` method, in the order of docs/protocol.md."""

BY_NAME: dict[str, Method] = {m.name: m for m in METHODS}


def served(method: Method) -> bool:
    """Whether this server answers ``method`` (ungated, or gated by an advertised capability)."""
    return method.capability is None or CAPABILITIES[method.capability]


def _names(direction: Direction, kind: Kind) -> frozenset[str]:
    return frozenset(
        m.name for m in METHODS if m.direction == direction and m.kind == kind and served(m)
    )


CLIENT_REQUESTS = _names(_C2S, "request")
CLIENT_NOTIFICATIONS = _names(_C2S, "notification")
SERVER_REQUESTS = _names(_S2C, "request")
SERVER_NOTIFICATIONS = _names(_S2C, "notification")

REQUESTS = frozenset(m.name for m in METHODS if m.kind == "request")
"""Every custom method that carries an ``id`` (served or not: envelopes stay plain JSON)."""

NOTIFICATIONS = frozenset(m.name for m in METHODS if m.kind == "notification")
"""Every custom method without an ``id``."""

SERVED = CLIENT_REQUESTS | CLIENT_NOTIFICATIONS
"""The client -> server methods this server answers (registered as pygls features)."""


def agent_capabilities(version: str) -> dict[str, object]:
    """``capabilities.experimental.lspAgent``: ``{version, protocolVersion, <capabilities>}``."""
    return {"version": version, "protocolVersion": PROTOCOL_VERSION, **CAPABILITIES}


# ---- static capabilities ------------------------------------------------------------------------
# Declared here, not derived from the modules that implement them, so that the ``initialize``
# answer is built without importing the agent (tests keep these equal to the implementations).

COMMAND_FIX = "lspAgent.fixWithAgent"
COMMAND_EXPLAIN = "lspAgent.explainWithAgent"
COMMAND_ASK = "lspAgent.askAgent"
COMMAND_APPLY_SUGGESTION = "lspAgent.applySuggestion"
COMMANDS = (COMMAND_FIX, COMMAND_EXPLAIN, COMMAND_ASK, COMMAND_APPLY_SUGGESTION)
"""``workspace/executeCommand`` commands of the agent code actions."""

COMMAND_APPROVE_IMPORTS = "lspAgent.memory.approveImports"
"""Remember the user's answer about memory imports from outside the workspace."""

MEMORY_COMPLETION_TRIGGERS = ("@", "/")
"""Characters that start path completion in memory files."""

KIND_FIX = "quickfix"
KIND_EXPLAIN = "refactor.lspAgent.explain"
KIND_ASK = "refactor.lspAgent.ask"
KIND_SUGGESTION = "quickfix.lspAgent.suggestion"
CODE_ACTION_KINDS = (KIND_FIX, KIND_EXPLAIN, KIND_ASK, KIND_SUGGESTION)
"""``codeActionProvider.codeActionKinds``."""
