"""``initializationOptions.lspAgent``: what the client tells the server at ``initialize``.

Example (all keys optional)::

    {"lspAgent": {"model": "claude-sonnet-4-5", "permissionMode": "default",
                  "clientCapabilities": {"saveDocuments": true, "reloadDocuments": true},
                  "trusted": false, "logLevel": "warning",
                  "settings": {"permissions": {"allow": ["Bash(npm test:*)"]}},
                  "permissionTimeoutMs": 1800000, "editConfirmTimeoutMs": 5000}}

This module is on the path to the ``initialize`` answer, so it does not import pydantic: what
editors send (camelCase keys, values of exactly the declared JSON types) is read by a strict
check here; anything else (snake_case keys, values pydantic would coerce, bad values) goes to
the pydantic schema in :mod:`lsp_agent.lsp.options_schema`, which gives the same result or the
``-32602`` error naming the field. Both paths produce the same :class:`InitOptions`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from lsp_agent.lsp.errors import invalid_params

log = logging.getLogger(__name__)

DEFAULT_SESSION_IDLE_MINUTES = 60.0
"""Minutes without a request after which a session is closed (``0``: never;
:mod:`lsp_agent.sessions.idle`). Claude Code keeps no idle sessions (each CLI process is one
session), so this is our own default: long enough that a session left open over a meeting is
still there, short enough that a server left running for days does not hold every session it
ever had."""
DEFAULT_PERMISSION_TIMEOUT_MS = 30 * 60 * 1000
"""How long a permission prompt may stay unanswered (ms) before it counts as cancelled."""

DEFAULT_EDIT_CONFIRM_TIMEOUT_MS = 5000
"""How long (ms) the buffer may take to show an edit the client reported as applied."""

PermissionModeName = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
"""The core's ``PermissionMode`` (kept equal by a unit test; importing the core's type would load
the agent's event models before ``initialize`` can be answered)."""

LogLevelName = Literal["error", "warning", "info", "debug"]

PERMISSION_MODES: tuple[str, ...] = get_args(PermissionModeName)
LOG_LEVEL_NAMES: tuple[str, ...] = get_args(LogLevelName)


@dataclass(frozen=True, kw_only=True)
class ClientFeatures:
    """Optional custom requests the client implements.

    ``saveDocuments``: the client answers ``lspAgent/workspace/saveDocuments`` (else the server
    writes buffer text to disk itself). ``reloadDocuments``: the client reloads clean buffers
    on ``lspAgent/workspace/didChangeFiles`` (the server sends it either way; this only tells
    the server that someone listens). ``mcpElicitation``: the client shows MCP servers' forms
    sent as ``lspAgent/mcp/elicit`` (else only forms buttons can answer are asked, with
    ``window/showMessageRequest``).
    """

    save_documents: bool = False
    reload_documents: bool = False
    mcp_elicitation: bool = False


@dataclass(frozen=True, kw_only=True)
class InitOptions:
    """The ``lspAgent`` object of ``initializationOptions``.

    ``model`` overrides the model name; ``permission_mode`` (one of :data:`PERMISSION_MODES`)
    is the default mode of new sessions; ``trusted`` says the user trusts the workspace
    (project hooks, MCP servers and settings run only then); ``settings`` is the editor's own
    settings layer, shaped like a ``.claude/settings.json`` file (source ``lsp``;
    docs/security.md); ``log_level`` is the lowest level forwarded as ``window/logMessage``;
    ``permission_timeout_ms`` bounds a permission prompt (ms); ``edit_confirm_timeout_ms``
    bounds the wait for the ``didChange`` that shows an applied edit (ms). ``diagnostics``
    holds the verification, managed-server and suggestion settings, validated at
    ``initialize`` by :func:`lsp_agent.diagnostics.config.parse_settings`
    (docs/verification.md). ``max_model_requests`` caps the model requests of one prompt
    (``None``: the core's default, 200). ``session_idle_minutes``: a session no request named
    for that long (minutes, not running a prompt) is closed, transcript kept, and reopened by
    the next request naming it (``0``: never). ``mcp_servers`` is the editor's ``mcpServers``
    object, shaped like ``.mcp.json``'s (the user's own servers: no approval, trust not needed;
    docs/mcp.md). ``extra`` holds keys this server does not know (logged).
    """

    client_name: str | None = None
    client_version: str | None = None
    model: str | None = None
    permission_mode: PermissionModeName | None = None
    client_capabilities: ClientFeatures = field(default_factory=ClientFeatures)
    trusted: bool = False
    settings: dict[str, Any] | None = None
    log_level: LogLevelName = "warning"
    permission_timeout_ms: int = DEFAULT_PERMISSION_TIMEOUT_MS
    edit_confirm_timeout_ms: int = DEFAULT_EDIT_CONFIRM_TIMEOUT_MS
    diagnostics: dict[str, Any] | None = None
    max_model_requests: int | None = None
    session_idle_minutes: float = DEFAULT_SESSION_IDLE_MINUTES
    mcp_servers: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# camelCase key -> field name, for the keys the strict check reads.
_FIELDS = {
    "clientName": "client_name",
    "clientVersion": "client_version",
    "model": "model",
    "permissionMode": "permission_mode",
    "clientCapabilities": "client_capabilities",
    "trusted": "trusted",
    "settings": "settings",
    "logLevel": "log_level",
    "permissionTimeoutMs": "permission_timeout_ms",
    "editConfirmTimeoutMs": "edit_confirm_timeout_ms",
    "diagnostics": "diagnostics",
    "maxModelRequests": "max_model_requests",
    "sessionIdleMinutes": "session_idle_minutes",
    "mcpServers": "mcp_servers",
}
_FEATURES = {
    "saveDocuments": "save_documents",
    "reloadDocuments": "reload_documents",
    "mcpElicitation": "mcp_elicitation",
}


def parse_init_options(raw: Any) -> InitOptions:
    """Read ``initializationOptions`` (any JSON). Only its ``lspAgent`` key is ours; a missing
    key gives the defaults. Unknown keys are logged and kept in ``extra`` (newer clients may
    send keys this server does not know yet). Raises ``JsonRpcInvalidParams`` (-32602) naming
    the bad field as ``initializationOptions.lspAgent.<field>``."""
    if not isinstance(raw, dict) or raw.get("lspAgent") is None:
        return InitOptions()
    ours = raw["lspAgent"]
    if not isinstance(ours, dict):
        raise invalid_params("initializationOptions.lspAgent must be a JSON object")
    options = read_strict(ours)
    if options is None:
        from lsp_agent.lsp.options_schema import validate

        options = validate(ours)
    if options.extra:
        log.warning(
            "ignoring unknown initializationOptions.lspAgent keys: %s",
            ", ".join(sorted(options.extra)),
        )
    return options


def read_strict(ours: dict[str, Any]) -> InitOptions | None:
    """``ours`` as :class:`InitOptions` when every known key is camelCase and its value has
    exactly the declared type and bounds; ``None`` when the full schema must decide."""
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    snake_names = set(_FIELDS.values())
    for key, value in ours.items():
        name = _FIELDS.get(key)
        if name is None:
            if key in snake_names:
                return None  # a field by its Python name: the schema accepts those too
            extra[key] = value
            continue
        checked = _check(name, value)
        if checked is _REJECT:
            return None
        values[name] = checked
    return InitOptions(**values, extra=extra)


_REJECT = object()


def _check(name: str, value: Any) -> Any:
    """``value`` (possibly converted) when it is exactly right for field ``name``, else
    :data:`_REJECT`."""
    if name in ("client_name", "client_version"):
        return value if value is None or type(value) is str else _REJECT
    if name == "model":
        return value if value is None or (type(value) is str and value) else _REJECT
    if name == "permission_mode":
        return value if value is None or value in PERMISSION_MODES else _REJECT
    if name == "log_level":
        return value if type(value) is str and value in LOG_LEVEL_NAMES else _REJECT
    if name in ("trusted", "session_idle_minutes"):
        number = type(value) in (int, float) and value >= 0
        return value if (type(value) is bool if name == "trusted" else number) else _REJECT
    if name in ("settings", "diagnostics", "mcp_servers"):
        if value is None or (type(value) is dict and all(type(k) is str for k in value)):
            return value
        return _REJECT
    if name in ("permission_timeout_ms", "edit_confirm_timeout_ms", "max_model_requests"):
        unset = name == "max_model_requests" and value is None
        return value if unset or (type(value) is int and value > 0) else _REJECT
    if name == "client_capabilities":
        if type(value) is not dict:
            return _REJECT
        features: dict[str, bool] = {}
        for key, flag in value.items():
            feature = _FEATURES.get(key)
            if feature is None or type(flag) is not bool:
                return _REJECT
            features[feature] = flag
        return ClientFeatures(**features)
    return _REJECT
