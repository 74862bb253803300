"""Names of the custom JSON-RPC methods of the LSP door (docs/protocol.md is the contract).

Every custom method uses the ``lspAgent/`` prefix. The sets below tell the protocol which
envelope (request or notification) to decode each method with.
"""

from __future__ import annotations

PROTOCOL_VERSION = 1
"""Version of the ``lspAgent/*`` protocol, sent in ``capabilities.experimental.lspAgent``."""

# Client -> server requests.
SESSION_NEW = "lspAgent/session/new"
SESSION_PROMPT = "lspAgent/session/prompt"
SESSION_SET_MODE = "lspAgent/session/setMode"
SESSION_LIST = "lspAgent/session/list"
MCP_LIST = "lspAgent/mcp/list"
MCP_APPROVE = "lspAgent/mcp/approve"
MCP_RECONNECT = "lspAgent/mcp/reconnect"

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

CLIENT_REQUESTS = frozenset(
    {
        SESSION_NEW,
        SESSION_PROMPT,
        SESSION_SET_MODE,
        SESSION_LIST,
        MCP_LIST,
        MCP_APPROVE,
        MCP_RECONNECT,
    }
)
CLIENT_NOTIFICATIONS = frozenset({SESSION_CANCEL, DIAGNOSTICS_DID_CHANGE})
SERVER_REQUESTS = frozenset({SESSION_REQUEST_PERMISSION, WORKSPACE_SAVE_DOCUMENTS})
SERVER_NOTIFICATIONS = frozenset(
    {SESSION_UPDATE, WORKSPACE_DID_CHANGE_FILES, SESSION_DID_START, SESSION_DID_END, MCP_DID_CHANGE}
)

REQUESTS = CLIENT_REQUESTS | SERVER_REQUESTS
"""Every custom method that carries an ``id``."""

NOTIFICATIONS = CLIENT_NOTIFICATIONS | SERVER_NOTIFICATIONS
"""Every custom method without an ``id``."""

# ---- static capabilities ------------------------------------------------------------------------
# Declared here, not derived from the modules that implement them, so that the ``initialize``
# answer is built without importing the agent (tests keep these equal to the implementations).

COMMAND_FIX = "lspAgent.fixWithAgent"
COMMAND_EXPLAIN = "lspAgent.explainWithAgent"
COMMAND_ASK = "lspAgent.askAgent"
COMMAND_APPLY_SUGGESTION = "lspAgent.applySuggestion"
COMMANDS = (COMMAND_FIX, COMMAND_EXPLAIN, COMMAND_ASK, COMMAND_APPLY_SUGGESTION)
"""``workspace/executeCommand`` commands, in the order of ``executeCommandProvider``."""

KIND_FIX = "quickfix"
KIND_EXPLAIN = "refactor.lspAgent.explain"
KIND_ASK = "refactor.lspAgent.ask"
KIND_SUGGESTION = "quickfix.lspAgent.suggestion"
CODE_ACTION_KINDS = (KIND_FIX, KIND_EXPLAIN, KIND_ASK, KIND_SUGGESTION)
"""``codeActionProvider.codeActionKinds``."""
