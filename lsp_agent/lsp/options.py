"""``initializationOptions.lspAgent``: what the client tells the server at ``initialize``.

Example (all keys optional)::

    {"lspAgent": {"model": "claude-sonnet-4-5", "permissionMode": "default",
                  "clientCapabilities": {"saveDocuments": true, "reloadDocuments": true},
                  "trusted": false, "logLevel": "warning",
                  "settings": {"permissions": {"allow": ["Bash(npm test:*)"]}},
                  "permissionTimeoutMs": 1800000, "editConfirmTimeoutMs": 5000}}
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from lsp_agent.lsp.errors import describe_validation_error, invalid_params
from lsp_agent.permissions.types import PermissionMode

log = logging.getLogger(__name__)

DEFAULT_PERMISSION_TIMEOUT_MS = 30 * 60 * 1000
"""How long a permission prompt may stay unanswered (ms) before it counts as cancelled."""

DEFAULT_EDIT_CONFIRM_TIMEOUT_MS = 5000
"""How long (ms) the buffer may take to show an edit the client reported as applied."""


class _Options(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True
    )


class ClientFeatures(_Options):
    """Optional custom requests the client implements.

    ``saveDocuments``: the client answers ``lspAgent/workspace/saveDocuments`` (else the server
    writes buffer text to disk itself). ``reloadDocuments``: the client reloads clean buffers
    on ``lspAgent/workspace/didChangeFiles`` (the server sends it either way; this only tells
    the server that someone listens).
    """

    save_documents: bool = False
    reload_documents: bool = False


class InitOptions(_Options):
    """The ``lspAgent`` object of ``initializationOptions``.

    ``model`` overrides the model name; ``permissionMode`` is the default mode of new sessions;
    ``trusted`` says the user trusts the workspace (project hooks, MCP servers and settings run
    only then); ``settings`` is the editor's own settings layer, shaped like a
    ``.claude/settings.json`` file (source ``lsp``; docs/security.md); ``logLevel`` is the
    lowest level forwarded as ``window/logMessage``;
    ``permissionTimeoutMs`` bounds a permission prompt (ms); ``editConfirmTimeoutMs`` bounds the
    wait for the ``didChange`` that shows an applied edit (ms). ``diagnostics`` holds the
    verification, managed-server and suggestion settings, validated by
    :func:`lsp_agent.diagnostics.config.parse_settings` (docs/verification.md).
    """

    # Newer clients may send keys this server does not know yet: keep working, log them.
    model_config = ConfigDict(
        extra="allow", frozen=True, alias_generator=to_camel, populate_by_name=True
    )

    client_name: str | None = None
    client_version: str | None = None
    model: str | None = Field(default=None, min_length=1)
    permission_mode: PermissionMode | None = None
    client_capabilities: ClientFeatures = ClientFeatures()
    trusted: bool = False
    settings: dict[str, Any] | None = None
    log_level: Literal["error", "warning", "info", "debug"] = "warning"
    permission_timeout_ms: int = Field(default=DEFAULT_PERMISSION_TIMEOUT_MS, gt=0)
    edit_confirm_timeout_ms: int = Field(default=DEFAULT_EDIT_CONFIRM_TIMEOUT_MS, gt=0)
    diagnostics: dict[str, Any] | None = None


def parse_init_options(raw: Any) -> InitOptions:
    """Read ``initializationOptions`` (any JSON). Only its ``lspAgent`` key is ours; a missing
    key gives the defaults. Raises ``JsonRpcInvalidParams`` (-32602) naming the bad field as
    ``initializationOptions.lspAgent.<field>``."""
    if not isinstance(raw, dict) or raw.get("lspAgent") is None:
        return InitOptions()
    ours = raw["lspAgent"]
    if not isinstance(ours, dict):
        raise invalid_params("initializationOptions.lspAgent must be a JSON object")
    try:
        options = InitOptions.model_validate(ours)
        if options.model_extra:
            log.warning(
                "ignoring unknown initializationOptions.lspAgent keys: %s",
                ", ".join(sorted(options.model_extra)),
            )
        return options
    except ValidationError as exc:
        text = describe_validation_error("initialize", exc)
        fields = text.removeprefix("invalid params for initialize: ")
        raise invalid_params(f"invalid initializationOptions.lspAgent: {fields}") from None
