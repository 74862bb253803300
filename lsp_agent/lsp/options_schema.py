"""The full pydantic schema of ``initializationOptions.lspAgent``.

:func:`lsp_agent.lsp.options.parse_init_options` reads the common shapes without pydantic (it
is on the path to the ``initialize`` answer); everything else comes here: snake_case keys,
values pydantic coerces (``"5000"`` for an integer), and bad values, which fail with the
field named.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError
from pydantic.alias_generators import to_camel

from lsp_agent.lsp.errors import describe_validation_error, invalid_params
from lsp_agent.lsp.options import (
    DEFAULT_EDIT_CONFIRM_TIMEOUT_MS,
    DEFAULT_PERMISSION_TIMEOUT_MS,
    DEFAULT_SESSION_IDLE_MINUTES,
    ClientFeatures,
    InitOptions,
    LogLevelName,
    PermissionModeName,
)


class _Options(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True
    )


class ClientFeaturesModel(_Options):
    """``clientCapabilities``; see :class:`~lsp_agent.lsp.options.ClientFeatures`."""

    save_documents: bool = False
    reload_documents: bool = False
    mcp_elicitation: bool = False


class InitOptionsModel(_Options):
    """``lspAgent``; see :class:`~lsp_agent.lsp.options.InitOptions`."""

    # Newer clients may send keys this server does not know yet: keep working, log them.
    model_config = ConfigDict(
        extra="allow", frozen=True, alias_generator=to_camel, populate_by_name=True
    )

    client_name: str | None = None
    client_version: str | None = None
    model: str | None = Field(default=None, min_length=1)
    permission_mode: PermissionModeName | None = None
    client_capabilities: ClientFeaturesModel = ClientFeaturesModel()
    trusted: StrictBool = False  # trust gates hooks and project settings: no coercion
    settings: dict[str, Any] | None = None
    log_level: LogLevelName = "warning"
    permission_timeout_ms: int = Field(default=DEFAULT_PERMISSION_TIMEOUT_MS, gt=0)
    edit_confirm_timeout_ms: int = Field(default=DEFAULT_EDIT_CONFIRM_TIMEOUT_MS, gt=0)
    diagnostics: dict[str, Any] | None = None
    max_model_requests: int | None = Field(default=None, gt=0)
    session_idle_minutes: float = Field(default=DEFAULT_SESSION_IDLE_MINUTES, ge=0)
    mcp_servers: dict[str, Any] | None = None


def validate(ours: dict[str, Any]) -> InitOptions:
    """Validate the ``lspAgent`` object with the schema. Raises ``JsonRpcInvalidParams``
    (-32602): ``invalid initializationOptions.lspAgent: permissionMode: Input should be ...``."""
    try:
        model = InitOptionsModel.model_validate(ours)
    except ValidationError as exc:
        text = describe_validation_error("initialize", exc)
        fields = text.removeprefix("invalid params for initialize: ")
        raise invalid_params(f"invalid initializationOptions.lspAgent: {fields}") from None
    return InitOptions(
        client_name=model.client_name,
        client_version=model.client_version,
        model=model.model,
        permission_mode=model.permission_mode,
        client_capabilities=ClientFeatures(
            save_documents=model.client_capabilities.save_documents,
            reload_documents=model.client_capabilities.reload_documents,
            mcp_elicitation=model.client_capabilities.mcp_elicitation,
        ),
        trusted=model.trusted,
        settings=model.settings,
        log_level=model.log_level,
        permission_timeout_ms=model.permission_timeout_ms,
        edit_confirm_timeout_ms=model.edit_confirm_timeout_ms,
        diagnostics=model.diagnostics,
        max_model_requests=model.max_model_requests,
        session_idle_minutes=model.session_idle_minutes,
        mcp_servers=model.mcp_servers,
        extra=dict(model.model_extra or {}),
    )
