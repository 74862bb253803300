"""Pydantic models of the custom methods' payloads (both directions).

Requests arrive as plain dicts (see :mod:`lsp_agent.lsp.protocol`); :func:`parse` validates
them and turns every problem into a ``-32602`` error naming the field. Keys are camelCase on
the wire; unknown keys are rejected (typos surface at once) except ``_meta``, ACP's extension
slot.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema
from pydantic.alias_generators import to_camel

from lsp_agent.lsp.errors import describe_validation_error, invalid_params
from lsp_agent.protocol.permissions import PermissionMode, RuleScope


class _Params(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True
    )

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


ParamsT = TypeVar("ParamsT", bound=BaseModel)


def parse(model: type[ParamsT], raw: Any, *, method: str) -> ParamsT:
    """Validate ``raw`` (the request's ``params``) as ``model``.

    ``None`` counts as ``{}``. Raises ``JsonRpcInvalidParams`` (-32602) naming every bad field.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise invalid_params(f"invalid params for {method}: params must be a JSON object")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise invalid_params(describe_validation_error(method, exc)) from None


# ---- client -> server ---------------------------------------------------------------------


class NewSessionParams(_Params):
    """``lspAgent/session/new``: ``cwd`` is an absolute path or a ``file:`` URI; it defaults
    to the first workspace folder. ``additionalDirectories`` default to the other folders."""

    cwd: str | None = None
    additional_directories: list[str] | None = None
    mode: PermissionMode | None = None


class PromptParams(_Params):
    """``lspAgent/session/prompt``: ``prompt`` holds ACP content blocks, validated one by
    one by :func:`lsp_agent.lsp.prompt.prompt_parts` (so errors can name ``prompt[i]``)."""

    session_id: str
    prompt: Annotated[
        list[Any],
        Field(min_length=1),
        WithJsonSchema({"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/ContentBlock"}}),
    ]


class SessionIdParams(_Params):
    """``lspAgent/session/cancel`` and ``lspAgent/session/close``."""

    session_id: str


class SessionCommandParams(_Params):
    """``lspAgent/session/command``: run slash command ``command`` (its name, with or without
    the leading ``/``) with ``args`` in session ``sessionId``."""

    session_id: str
    command: str
    args: str = ""


class SetModeParams(_Params):
    """``lspAgent/session/setMode``."""

    session_id: str
    mode_id: PermissionMode


class ListSessionsParams(_Params):
    """``lspAgent/session/list``: ``cwd`` (absolute path or ``file:`` URI) keeps only the
    sessions of that directory; without it, every session of the data folder is listed."""

    cwd: str | None = None


class LoadSessionParams(_Params):
    """``lspAgent/session/load`` (ACP ``session/load``): resume ``sessionId`` in ``cwd``.
    Served only when the server advertises ``loadSession`` (docs/protocol.md §4.7)."""

    session_id: str
    cwd: str | None = None
    mcp_servers: list[Any] | None = None
    """ACP's field; accepted and ignored (the project's MCP servers are used)."""


class ForkSessionParams(_Params):
    """``lspAgent/session/fork``: a new session holding ``sessionId``'s history up to
    ``messageId`` (a ``messageId`` of its replayed updates; default: all of it)."""

    session_id: str
    message_id: str | None = None
    cwd: str | None = None


class ListCheckpointsParams(_Params):
    """``lspAgent/session/checkpoints``: the prompts of ``sessionId`` that can be rewound to."""

    session_id: str


class RewindParams(_Params):
    """``lspAgent/session/rewind``: go back to before prompt ``messageId`` (an id from
    ``lspAgent/session/checkpoints``, or a unique prefix of at least 6 characters), restoring
    the ``code``, the ``conversation`` or ``both``."""

    session_id: str
    message_id: str
    restore: Literal["code", "conversation", "both"] = "both"


# ---- content blocks -------------------------------------------------------------------------


class Position(_Params):
    """An LSP position (0-based line; ``character`` in the negotiated encoding's units)."""

    line: int = Field(ge=0)
    character: int = Field(ge=0)


class Range(_Params):
    """An LSP range."""

    start: Position
    end: Position


class TextBlockIn(_Params):
    """ACP text content block."""

    type: Literal["text"]
    text: str


class ResourceMeta(BaseModel):
    """``_meta`` of a resource block: ``range`` is the selection the resource stands for."""

    model_config = ConfigDict(extra="allow", frozen=True)

    range: Range | None = None


class EmbeddedResource(_Params):
    """ACP ``TextResourceContents``: the (possibly unsaved) buffer text of ``uri``."""

    uri: str
    text: str
    mime_type: str | None = None


class ResourceBlockIn(_Params):
    """ACP ``resource`` content block (an @-mention or a selection)."""

    type: Literal["resource"]
    resource: EmbeddedResource
    meta: ResourceMeta | None = Field(default=None, alias="_meta")  # type: ignore[assignment]


class ResourceLinkBlockIn(_Params):
    """ACP ``resource_link`` content block: the server reads the buffer (or the file)."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["resource_link"]
    uri: str
    name: str | None = None


CONTENT_BLOCKS: dict[str, type[_Params]] = {
    "text": TextBlockIn,
    "resource": ResourceBlockIn,
    "resource_link": ResourceLinkBlockIn,
}
"""Supported content block types by their ``type`` tag."""


# ---- the diagnostics bridge -----------------------------------------------------------------


class WireDiagnostic(BaseModel):
    """An LSP ``Diagnostic`` as the bridge reads it (other fields are ignored): ``severity``
    1..4 (absent: error), ``range`` in the negotiated position encoding. Each diagnostic is
    read on its own by :func:`lsp_agent.diagnostics.model.parse_diagnostic`, so a malformed
    one is skipped instead of failing the whole notification."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    range: Range
    message: str
    severity: Literal[1, 2, 3, 4] | None = None
    code: str | int | None = None
    source: str | None = None
    tags: list[int] | None = None


class DiagnosticsDidChangeParams(BaseModel):
    """``lspAgent/diagnostics/didChange`` params: every diagnostic the editor shows for
    ``uri`` (from all other language servers, with their ``source``) at document ``version``
    (``null`` when the document is not open). ``diagnostics`` stays raw JSON here: each one is
    read on its own (see :class:`WireDiagnostic`)."""

    model_config = ConfigDict(extra="ignore")

    uri: str
    version: int | None = None
    diagnostics: Annotated[
        list[Any],
        WithJsonSchema({"type": "array", "items": {"$ref": "#/$defs/WireDiagnostic"}}),
    ]


# ---- answers to server -> client requests -----------------------------------------------------


class SelectedOutcome(BaseModel):
    """The user chose ``optionId``. ``feedback`` goes to the model (with a rejection, or as a
    remark with an approval); ``editedText`` maps file URIs (or absolute paths) to the full text
    the user approved instead of the proposal (edit-before-accept, per-hunk review); ``scope``
    says where an "always" answer is kept (``session``, ``project``: the project's
    ``.claude/settings.local.json``, ``user``: ``~/.claude/settings.json``; default session)."""

    model_config = ConfigDict(
        extra="ignore", frozen=True, alias_generator=to_camel, populate_by_name=True
    )

    outcome: Literal["selected"]
    option_id: str
    feedback: str | None = None
    edited_text: dict[str, str] | None = None
    scope: RuleScope | None = None


class CancelledOutcome(BaseModel):
    """The prompt was dismissed (turn cancelled)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    outcome: Literal["cancelled"]


class RequestPermissionResult(BaseModel):
    """Result of ``lspAgent/session/requestPermission``."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    outcome: SelectedOutcome | CancelledOutcome = Field(discriminator="outcome")


class SaveDocumentsResult(BaseModel):
    """Result of ``lspAgent/workspace/saveDocuments``: the URIs the client saved."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    saved: list[str] = Field(default_factory=list)


# ---- MCP servers ----------------------------------------------------------------------------
# The MCP door (:mod:`lsp_agent.lsp.mcp_door`) reads these params itself (unknown keys are
# ignored there); the models give them their schema.


class McpListParams(BaseModel):
    """``lspAgent/mcp/list``: the servers of project directory ``cwd`` (an absolute path;
    default: the first workspace folder)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    cwd: str | None = None


class McpApproveParams(BaseModel):
    """``lspAgent/mcp/approve``: the user's answer about project server ``name``."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str
    approved: bool
    cwd: str | None = None


class McpSetEnabledParams(BaseModel):
    """``lspAgent/mcp/setEnabled``: turn server ``name`` (any scope) on or off for project
    ``cwd``, persisted in the user's ``~/.claude.json`` (Claude Code's lists)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str
    enabled: bool
    cwd: str | None = None


class McpResourcesParams(BaseModel):
    """``lspAgent/mcp/resources``: complete the ``@server:uri`` mention being typed;
    ``query`` is the text after the ``@`` (``docs:``, ``docs:file:///gu``, ``do``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    query: str
    cwd: str | None = None


class McpElicitResult(BaseModel):
    """Answer to ``lspAgent/mcp/elicit``: ``accept`` with the fields' ``content``, or
    ``decline`` / ``cancel`` (MCP's elicitation actions). The server checks ``content``
    against the form and asks again, with ``problems``, when it does not fit."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, str | int | float | bool] | None = None


class McpReconnectParams(BaseModel):
    """``lspAgent/mcp/reconnect``: restart server ``name`` now."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str
    cwd: str | None = None


class McpLoginParams(BaseModel):
    """``lspAgent/mcp/login``: log in to HTTP server ``name`` with OAuth; answered when the
    login ended (the browser came back, or it failed or timed out)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str
    cwd: str | None = None


class McpLogoutParams(BaseModel):
    """``lspAgent/mcp/logout``: forget the OAuth tokens of HTTP server ``name``."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str
    cwd: str | None = None
