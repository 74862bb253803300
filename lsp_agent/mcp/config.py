"""MCP server definitions, Claude Code's shape, validated with exact source ranges.

An ``mcpServers`` object maps a server name to one definition:

``{"command": "npx", "args": ["-y", "pkg"], "env": {"K": "v"}, "cwd": "dir"}``
    stdio (``"type": "stdio"`` optional): the command runs as a child process.
``{"type": "http", "url": "https://host/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}``
    streamable HTTP (``"streamable-http"`` is accepted as a synonym).
``{"type": "sse", "url": ..., "headers": ...}``
    the legacy HTTP+SSE transport.

``${VAR}`` and ``${VAR:-default}`` expand in command, args, env, url and headers
(:mod:`lsp_agent.mcp.expand`). Problems become :class:`~lsp_agent.config.settings.
SettingsProblem` values positioned in the file (the LSP door publishes them as diagnostics);
a definition that cannot be read is dropped, one whose variables are unset is kept with an
``error`` so the server list can say why it does not start. Unknown keys are ignored (the files
are shared with other MCP clients).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lsp_agent.config.jsonpos import JsonPath, JsonSyntaxError, Span, parse_document, position
from lsp_agent.config.problems import SettingsProblem, problem_at_start
from lsp_agent.mcp.expand import ExpansionError, expand

Transport = Literal["stdio", "http", "sse"]
Scope = Literal["cli", "local", "project", "user", "lsp"]
"""Where a definition came from: ``--mcp-config``, ``~/.claude.json`` (this project's entry),
``.mcp.json``, ``~/.claude.json`` (top level), the editor's settings."""

MAX_CONFIG_BYTES = 1_000_000
"""An MCP configuration file larger than this is not read (reported as a problem)."""

_TYPES: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "sse": "sse",
}
_NAME = re.compile(r"[A-Za-z0-9_.-]+")


@dataclass(frozen=True, kw_only=True)
class ServerSpec:
    """One configured server after validation and expansion.

    ``digest`` is the SHA-256 of the definition as written (before expansion), so an approval
    names exactly what was approved and a changed definition needs approval again; ``error``
    says why the server cannot start (an unset variable) when it is not ``None``.
    """

    name: str
    scope: Scope
    path: Path | None
    transport: Transport
    digest: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str = ""
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    callback_port: int | None = None
    """``oauth.callbackPort``: the fixed loopback port of the OAuth redirect (Claude Code's
    key; ``None``: an ephemeral port)."""
    client_id: str | None = None
    """``oauth.clientId``: a client registered with the authorisation server beforehand (no
    dynamic client registration then)."""
    client_secret: str | None = field(default=None, repr=False)
    """``oauth.clientSecret`` of that client (``${VAR}`` expanded); never logged or listed."""
    scopes: str | None = None
    """``oauth.scopes``: the scopes to ask for (space-separated), instead of the server's."""
    error: str | None = None

    def describe(self) -> str:
        """A one-line description for lists and approval prompts (no header values)."""
        if self.transport == "stdio":
            return " ".join([self.command, *self.args])
        return f"{self.transport} {self.url}"


@dataclass(frozen=True, kw_only=True)
class McpFile:
    """What one configuration source held: its servers (file order), problems, and whether
    it exists."""

    path: Path | None
    servers: tuple[ServerSpec, ...] = ()
    problems: tuple[SettingsProblem, ...] = ()
    exists: bool = True
    invalid: tuple[ServerSpec, ...] = ()
    """Definitions that cannot be used at all, each with its ``error`` (lists show them as
    ``invalid``); never started."""


def definition_digest(entry: Any) -> str:
    """SHA-256 (hex) of a definition's canonical JSON (sorted keys, no spaces)."""
    canonical = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


class _Report:
    def __init__(self, *, path: Path | None, text: str, spans: Mapping[JsonPath, Span]) -> None:
        self.path = path
        self.text = text
        self.spans = spans
        self.problems: list[SettingsProblem] = []

    def at(
        self, where: JsonPath, message: str, *, severity: str = "error", key: bool = False
    ) -> None:
        span = self.spans.get(where)
        while span is None and where:
            where = where[:-1]
            span = self.spans.get(where)
        start = end = 0
        if span is not None:
            use_key = key and span.key_start is not None and span.key_end is not None
            start = span.key_start if use_key and span.key_start is not None else span.start
            end = span.key_end if use_key and span.key_end is not None else span.end
        self.problems.append(
            SettingsProblem(
                path=self.path,
                start=position(self.text, start),
                end=position(self.text, end),
                message=message,
                severity="warning" if severity == "warning" else "error",
                text=self.text,
            )
        )


def parse_servers(
    raw: Any,
    *,
    where: JsonPath,
    spans: Mapping[JsonPath, Span],
    text: str,
    path: Path | None,
    scope: Scope,
    environ: Mapping[str, str],
) -> tuple[tuple[ServerSpec, ...], tuple[SettingsProblem, ...], tuple[ServerSpec, ...]]:
    """Validate an ``mcpServers`` value found at JSON path ``where`` of ``text``.

    Returns the usable definitions (in file order), every problem, positioned with
    ``spans``, and the unusable definitions with a well-formed name (each with its
    ``error``: the problems' messages). Never raises.
    """
    report = _Report(path=path, text=text, spans=spans)
    if not isinstance(raw, dict):
        report.at(where, "mcpServers must be an object mapping server names to definitions")
        return (), tuple(report.problems), ()
    servers: list[ServerSpec] = []
    invalid: list[ServerSpec] = []
    for name, entry in raw.items():
        known = len(report.problems)
        spec = _server(name, entry, (*where, name), report, path=path, scope=scope, env=environ)
        if spec is not None:
            servers.append(spec)
        elif _NAME.fullmatch(name):
            reasons = [p.message for p in report.problems[known:] if p.severity == "error"]
            invalid.append(
                ServerSpec(
                    name=name,
                    scope=scope,
                    path=path,
                    transport="stdio",
                    digest=definition_digest(entry),
                    error="; ".join(reasons) or "the definition cannot be used",
                )
            )
    return tuple(servers), tuple(report.problems), tuple(invalid)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _server(
    name: str,
    entry: Any,
    at: JsonPath,
    report: _Report,
    *,
    path: Path | None,
    scope: Scope,
    env: Mapping[str, str],
) -> ServerSpec | None:
    """One server definition, or ``None`` (reported) when it cannot be used at all; a
    definition whose ``${VAR}`` expansion failed comes back with its ``error`` set."""
    if not _NAME.fullmatch(name):
        report.at(
            at,
            f"MCP server name {name!r} may only hold letters, digits, '_', '-' and '.'",
            key=True,
        )
        return None
    if not isinstance(entry, dict):
        report.at(at, f"MCP server {name!r}: the definition must be an object")
        return None
    transport = _transport(name, entry, at, report)
    if transport is None:
        return None
    expand_at = _Expander(name=name, env=env, report=report)
    common: dict[str, Any] = {
        "name": name,
        "scope": scope,
        "path": path,
        "transport": transport,
        "digest": definition_digest(entry),
    }
    build = _stdio if transport == "stdio" else _remote
    spec = build(name, entry, at, report, common=common, x=expand_at)
    if spec is None or not expand_at.errors:
        return spec
    return ServerSpec(**{**spec.__dict__, "error": "; ".join(dict.fromkeys(expand_at.errors))})


def _transport(name: str, entry: dict[str, Any], at: JsonPath, report: _Report) -> Transport | None:
    """The transport ``"type"`` names; without one, Claude Code's guess (``command`` → stdio,
    ``url`` → http, with a warning)."""
    kind = entry.get("type")
    if kind is None:
        if "url" in entry and "command" not in entry:
            report.at(
                at,
                f'MCP server {name!r} has a url but no "type"; read as "http" (add '
                '"type": "http" or "type": "sse")',
                severity="warning",
                key=True,
            )
            return "http"
        return "stdio"
    if isinstance(kind, str) and kind in _TYPES:
        return _TYPES[kind]
    report.at((*at, "type"), f'MCP server {name!r}: "type" must be "stdio", "http" or "sse"')
    return None


@dataclass(kw_only=True)
class _Expander:
    """Expands ``${VAR}`` in one server's values, reporting failures at the value's place and
    collecting them in ``errors`` (the server is then kept, marked with the error)."""

    name: str
    env: Mapping[str, str]
    report: _Report
    errors: list[str] = field(default_factory=list)

    def __call__(self, value: str, where: JsonPath) -> str:
        try:
            return expand(value, self.env)
        except ExpansionError as exc:
            self.report.at(where, f"MCP server {self.name!r}: {exc}")
            self.errors.append(str(exc))
            return value


def _stdio(
    name: str,
    entry: dict[str, Any],
    at: JsonPath,
    report: _Report,
    *,
    common: dict[str, Any],
    x: _Expander,
) -> ServerSpec | None:
    """A stdio server: ``command``, ``args``, ``env``, ``cwd``."""
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        report.at(
            (*at, "command") if "command" in entry else at,
            f'MCP server {name!r}: "command" must be a non-empty string',
        )
        return None
    args = entry.get("args", [])
    if not _strings(args):
        report.at((*at, "args"), f'MCP server {name!r}: "args" must be a list of strings')
        return None
    child_env = entry.get("env", {})
    if not _string_map(child_env):
        report.at((*at, "env"), f'MCP server {name!r}: "env" must be an object of strings')
        return None
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        report.at((*at, "cwd"), f'MCP server {name!r}: "cwd" must be a string')
        return None
    return ServerSpec(
        **common,
        command=x(command, (*at, "command")),
        args=tuple(x(a, (*at, "args", i)) for i, a in enumerate(args)),
        env=tuple((k, x(v, (*at, "env", k))) for k, v in child_env.items()),
        cwd=x(cwd, (*at, "cwd")) if cwd is not None else None,
    )


def _remote(
    name: str,
    entry: dict[str, Any],
    at: JsonPath,
    report: _Report,
    *,
    common: dict[str, Any],
    x: _Expander,
) -> ServerSpec | None:
    """An HTTP or SSE server: ``url`` (http or https once expanded) and ``headers``."""
    url = entry.get("url")
    if not isinstance(url, str) or not url.strip():
        report.at(
            (*at, "url") if "url" in entry else at,
            f'MCP server {name!r}: "url" must be a non-empty string',
        )
        return None
    headers = entry.get("headers", {})
    if not _string_map(headers):
        report.at((*at, "headers"), f'MCP server {name!r}: "headers" must be an object of strings')
        return None
    expanded = x(url, (*at, "url"))
    if not x.errors and not re.match(r"https?://", expanded, re.IGNORECASE):
        report.at((*at, "url"), f"MCP server {name!r}: the url must start with http:// or https://")
        return None
    oauth = _oauth(name, entry.get("oauth", {}), (*at, "oauth"), report)
    if oauth is None:
        return None
    port, client_id, secret, scopes = oauth
    return ServerSpec(
        **common,
        url=expanded,
        headers=tuple((k, x(v, (*at, "headers", k))) for k, v in headers.items()),
        callback_port=port,
        client_id=x(client_id, (*at, "oauth", "clientId")) if client_id is not None else None,
        client_secret=x(secret, (*at, "oauth", "clientSecret")) if secret is not None else None,
        scopes=scopes,
    )


def _oauth(
    name: str, oauth: Any, at: JsonPath, report: _Report
) -> tuple[int | None, str | None, str | None, str | None] | None:
    """``oauth``: ``callbackPort`` (1-65535), ``clientId`` and ``clientSecret`` (non-empty
    strings, a secret only with an id), ``scopes`` (a space-separated string or a list of
    strings). ``None`` (reported) when malformed."""
    if not isinstance(oauth, dict):
        report.at(at, f'MCP server {name!r}: "oauth" must be an object')
        return None
    port = oauth.get("callbackPort")
    if port is not None and (type(port) is not int or not 0 < port < 65536):
        report.at(
            (*at, "callbackPort"),
            f'MCP server {name!r}: "oauth.callbackPort" must be a port number (1-65535)',
        )
        return None
    client_id, secret = oauth.get("clientId"), oauth.get("clientSecret")
    for key, value in (("clientId", client_id), ("clientSecret", secret)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            report.at((*at, key), f'MCP server {name!r}: "oauth.{key}" must be a non-empty string')
            return None
    if secret is not None and client_id is None:
        report.at(
            (*at, "clientSecret"),
            f'MCP server {name!r}: "oauth.clientSecret" needs "oauth.clientId"',
        )
        return None
    scopes = oauth.get("scopes")
    if isinstance(scopes, list) and _strings(scopes):
        scopes = " ".join(scopes)
    if scopes is not None and (not isinstance(scopes, str) or not scopes.strip()):
        report.at(
            (*at, "scopes"),
            f'MCP server {name!r}: "oauth.scopes" must be a space-separated string of scopes',
        )
        return None
    return port, client_id, secret, " ".join(scopes.split()) if scopes else None


def read_config_text(
    text: str, *, path: Path | None, scope: Scope, environ: Mapping[str, str]
) -> McpFile:
    """Parse a ``.mcp.json``-shaped text (``{"mcpServers": {...}}``). Never raises."""
    try:
        document = parse_document(text)
    except JsonSyntaxError as exc:
        at = position(text, exc.offset)
        problem = SettingsProblem(
            path=path,
            start=at,
            end=(at[0], at[1] + 1),
            message=f"invalid JSON: {exc}",
            text=text,
        )
        return McpFile(path=path, problems=(problem,))
    report = _Report(path=path, text=text, spans=document.spans)
    for where, _earlier in document.duplicates:
        report.at(where, f"duplicate key {where[-1]!r}: JSON keeps only the last one", key=True)
    value = document.value
    if not isinstance(value, dict):
        report.at((), "an MCP configuration must be a JSON object with an mcpServers key")
        return McpFile(path=path, problems=tuple(report.problems))
    if "mcpServers" not in value:
        # VS Code's own mcp.json names the object "servers": the likeliest slip.
        hint = ' (rename "servers" to "mcpServers")' if "servers" in value else ""
        report.at(
            (),
            f'no "mcpServers" key: this file configures no MCP server{hint}',
            severity="warning",
        )
        return McpFile(path=path, problems=tuple(report.problems))
    servers, problems, invalid = parse_servers(
        value["mcpServers"],
        where=("mcpServers",),
        spans=document.spans,
        text=text,
        path=path,
        scope=scope,
        environ=environ,
    )
    return McpFile(
        path=path, servers=servers, problems=(*report.problems, *problems), invalid=invalid
    )


def read_config_file(path: Path, *, scope: Scope, environ: Mapping[str, str]) -> McpFile:
    """Read and parse the MCP configuration file ``path``; a missing file is empty
    (``exists=False``). Never raises: unreadable, oversized or non-UTF-8 files are problems."""
    try:
        if not path.is_file():
            return McpFile(path=path, exists=False)
        data = path.read_bytes()
    except OSError as exc:
        return McpFile(path=path, problems=(problem_at_start(path, f"cannot read: {exc}"),))
    if len(data) > MAX_CONFIG_BYTES:
        message = f"the file is larger than {MAX_CONFIG_BYTES} bytes and was not read"
        return McpFile(path=path, problems=(problem_at_start(path, message),))
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        message = f"the file is not UTF-8 (byte {exc.start}) and was not read"
        return McpFile(path=path, problems=(problem_at_start(path, message),))
    return read_config_text(text, path=path, scope=scope, environ=environ)
