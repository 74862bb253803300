"""Which MCP servers a project gets, from every source, and whether each may start.

Sources, highest precedence first; a name defined in several takes its whole definition from
the highest (Claude Code's rule: no merging across scopes):

``cli``      ``--mcp-config`` files or JSON texts of ``run -p`` (with ``--strict-mcp-config``
             the only source)
``local``    ``~/.claude.json`` → ``projects[<project>].mcpServers`` (Claude Code's local scope)
``project``  ``<project>/.mcp.json`` — from the repository, see below
``user``     ``~/.claude.json`` → ``mcpServers``
``lsp``      the editor's ``mcpServers`` (:attr:`McpSources.editor_servers`), the user's too

Project servers start only when the workspace is trusted **and** the server is approved:
by name in ``enabledMcpjsonServers`` or by ``enableAllProjectMcpServers: true`` in a
settings source the repository cannot write (managed, user ``~/.claude/settings.json``,
``--settings``, or ``~/.claude.json``'s entry for the project), or by an answer recorded in
:mod:`lsp_agent.mcp.approvals` for the same definition. ``disabledMcpjsonServers`` is honoured
from every source (disabling is always safe), and the user's own switches (``~/.claude.json``'s
``disabledMcpServers``/``disabledMcpjsonServers`` for the project, :mod:`.enablement`) turn a
server of any scope off, with ``--strict-mcp-config`` too. Managed settings'
``deniedMcpServers`` and ``allowedMcpServers`` (entries ``{"serverName": ...}``,
``{"serverCommand": [...]}``, ``{"serverUrl": "https://*.example.com/*"}``) apply to every
scope: deny beats allow, and an allow list, once present, admits only what it names. A managed
settings file that cannot be read admits no server (fail closed).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lsp_agent.config.jsonpos import JsonSyntaxError, parse_document
from lsp_agent.config.problems import SettingsProblem, problem_at_start
from lsp_agent.mcp.approvals import Approval, load_approvals
from lsp_agent.mcp.config import (
    MAX_CONFIG_BYTES,
    McpFile,
    Scope,
    ServerSpec,
    parse_servers,
    read_config_file,
    read_config_text,
)
from lsp_agent.mcp.enablement import USER_STATE_FILE, disabled_names

log = logging.getLogger(__name__)

Status = Literal["enabled", "needs_approval", "disabled", "denied", "untrusted", "invalid"]
"""``enabled``: may start; ``needs_approval``: a project server nobody approved (or whose
definition changed); ``disabled``: turned off by the user; ``denied``: managed policy;
``untrusted``: the workspace is not trusted; ``invalid``: its definition cannot be used."""

SCOPES: tuple[Scope, ...] = ("cli", "local", "project", "user")
"""Sources in precedence order."""

APPROVING_SOURCES = ("managed", "flagSettings", "user")
"""Settings sources whose ``enabledMcpjsonServers``/``enableAllProjectMcpServers`` approve
project servers (files the repository cannot write)."""


@dataclass(frozen=True, kw_only=True)
class PlannedServer:
    """One server and whether it may start; ``reason`` explains any other status."""

    spec: ServerSpec
    status: Status
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class McpPlan:
    """Every configured server (precedence order, then file order), every problem, and the
    files considered (for diagnostics and for the watcher)."""

    servers: tuple[PlannedServer, ...] = ()
    problems: tuple[SettingsProblem, ...] = ()
    files: tuple[Path, ...] = ()

    def enabled(self) -> tuple[ServerSpec, ...]:
        """The servers that may start."""
        return tuple(p.spec for p in self.servers if p.status == "enabled")

    def get(self, name: str) -> PlannedServer | None:
        """The planned server called ``name``, if any."""
        return next((p for p in self.servers if p.spec.name == name), None)


@dataclass(frozen=True, kw_only=True)
class McpSources:
    """Where to look: the project directory ``cwd`` (absolute), the user's ``home``, whether
    the workspace is ``trusted``, the environment for ``${VAR}`` expansion, the settings files
    by source (``managed``, ``flagSettings``, ``local``, ``project``, ``user``), the
    ``--mcp-config`` values and ``--strict-mcp-config``."""

    cwd: Path
    home: Path
    trusted: bool
    environ: Mapping[str, str]
    settings_files: Mapping[str, Path]
    cli_configs: tuple[str, ...] = ()
    strict: bool = False
    editor_servers: Mapping[str, Any] | None = None
    """The editor's ``mcpServers`` (VS Code settings, Neovim ``setup{}``): the user's own,
    like ``~/.claude.json``'s, so they need neither trust nor approval."""


@dataclass(frozen=True, kw_only=True)
class _Switches:
    """Approval switches gathered from settings."""

    enabled: frozenset[str] = frozenset()
    enable_all: bool = False
    disabled: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Turned-off servers by name, each with where it was turned off (the reason shown)."""
    allowed: tuple[dict[str, Any], ...] | None = None
    denied: tuple[dict[str, Any], ...] = ()
    managed_broken: str | None = None


def _read_object(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """A JSON object file: ``(value, None)``, ``(None, None)`` when missing, or
    ``(None, why)`` when it cannot be used."""
    try:
        if not path.is_file():
            return None, None
        data = path.read_bytes()
        if len(data) > MAX_CONFIG_BYTES * 50:
            return None, "too large"
        value = json.loads(data.decode("utf-8").removeprefix("\ufeff"))
    except (OSError, ValueError, RecursionError) as exc:
        return None, str(exc)
    if not isinstance(value, dict):
        return None, "not a JSON object"
    return value, None


def _names(value: Any) -> frozenset[str]:
    if isinstance(value, list):
        return frozenset(v for v in value if isinstance(v, str))
    return frozenset()


def _switches(sources: McpSources, user_state: Mapping[str, Any]) -> _Switches:
    enabled: set[str] = set()
    disabled: dict[str, str] = {}
    enable_all = False
    allowed: tuple[dict[str, Any], ...] | None = None
    denied: tuple[dict[str, Any], ...] = ()
    managed_broken: str | None = None
    for source, path in sources.settings_files.items():
        value, why = _read_object(path)
        if source == "managed" and why is not None:
            managed_broken = f"the managed settings file {path} cannot be read ({why})"
        if value is None:
            continue
        if source in ("project", "local") and not sources.trusted:
            continue
        for name in _names(value.get("disabledMcpjsonServers")):
            disabled.setdefault(name, f"listed in disabledMcpjsonServers of {path}")
        if source in APPROVING_SOURCES:
            enabled |= _names(value.get("enabledMcpjsonServers"))
            enable_all = enable_all or value.get("enableAllProjectMcpServers") is True
        if source == "managed":
            if "allowedMcpServers" in value:
                raw = value["allowedMcpServers"]
                allowed = (
                    tuple(e for e in raw if isinstance(e, dict)) if isinstance(raw, list) else ()
                )
            raw_denied = value.get("deniedMcpServers", [])
            if isinstance(raw_denied, list):
                denied = tuple(e for e in raw_denied if isinstance(e, dict))
            elif raw_denied is not None:
                managed_broken = "deniedMcpServers in the managed settings is not a list"
    project = user_state.get("projects", {})
    entry = project.get(str(sources.cwd)) if isinstance(project, dict) else None
    if isinstance(entry, dict):
        enabled |= _names(entry.get("enabledMcpjsonServers"))
        enable_all = enable_all or entry.get("enableAllProjectMcpServers") is True
    # The user's own switches (Claude Code's /mcp menu) say why first.
    disabled = {**disabled, **disabled_names(user_state, sources.cwd)}
    return _Switches(
        enabled=frozenset(enabled),
        enable_all=enable_all,
        disabled=disabled,
        allowed=allowed,
        denied=denied,
        managed_broken=managed_broken,
    )


def _policy_matches(entry: Mapping[str, Any], spec: ServerSpec) -> bool:
    """Whether a managed ``allowedMcpServers``/``deniedMcpServers`` entry names ``spec``."""
    if "serverName" in entry:
        return bool(entry["serverName"] == spec.name)
    if "serverCommand" in entry:
        command = entry["serverCommand"]
        return (
            spec.transport == "stdio"
            and isinstance(command, list)
            and command == [spec.command, *spec.args]
        )
    if "serverUrl" in entry:
        pattern = entry["serverUrl"]
        return (
            spec.transport != "stdio"
            and isinstance(pattern, str)
            and fnmatch.fnmatchcase(spec.url, pattern)
        )
    return False


def _user_state(home: Path) -> tuple[dict[str, Any], str, tuple[SettingsProblem, ...]]:
    """``~/.claude.json`` as ``(value, text, problems)``; an absent file is empty."""
    path = home / USER_STATE_FILE
    try:
        if not path.is_file():
            return {}, "", ()
        text = path.read_bytes().decode("utf-8", "replace").removeprefix("\ufeff")
    except OSError as exc:
        return {}, "", (problem_at_start(path, f"cannot read: {exc}"),)
    try:
        # json first: the file can be megabytes of Claude Code history; the positions scan
        # (much slower) runs only when there are MCP definitions to report on.
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return {}, text, (problem_at_start(path, f"invalid JSON: {exc}", text=text),)
    return (value if isinstance(value, dict) else {}), text, ()


def _user_scopes(
    sources: McpSources, state: Mapping[str, Any], text: str
) -> tuple[McpFile, McpFile]:
    """The ``local`` and ``user`` definitions held in ``~/.claude.json``."""
    path = sources.home / USER_STATE_FILE
    project_key = str(sources.cwd)
    projects = state.get("projects")
    entry = projects.get(project_key) if isinstance(projects, dict) else None
    has_local = isinstance(entry, dict) and "mcpServers" in entry
    if not has_local and "mcpServers" not in state:
        return McpFile(path=path, exists=False), McpFile(path=path, exists=False)
    try:
        spans = parse_document(text).spans
    except JsonSyntaxError:
        spans = {}
    local = McpFile(path=path, exists=False)
    if isinstance(entry, dict) and "mcpServers" in entry:
        servers, problems, invalid = parse_servers(
            entry["mcpServers"],
            where=("projects", project_key, "mcpServers"),
            spans=spans,
            text=text,
            path=path,
            scope="local",
            environ=sources.environ,
        )
        local = McpFile(path=path, servers=servers, problems=problems, invalid=invalid)
    user = McpFile(path=path, exists=False)
    if "mcpServers" in state:
        servers, problems, invalid = parse_servers(
            state["mcpServers"],
            where=("mcpServers",),
            spans=spans,
            text=text,
            path=path,
            scope="user",
            environ=sources.environ,
        )
        user = McpFile(path=path, servers=servers, problems=problems, invalid=invalid)
    return local, user


def _cli_files(configs: Sequence[str], cwd: Path, environ: Mapping[str, str]) -> list[McpFile]:
    out = []
    for value in configs:
        if value.lstrip().startswith("{"):
            out.append(read_config_text(value, path=None, scope="cli", environ=environ))
            continue
        path = (cwd / value).resolve()
        file = read_config_file(path, scope="cli", environ=environ)
        if not file.exists:
            file = McpFile(path=path, problems=(problem_at_start(path, "file not found"),))
        out.append(file)
    return out


def plan_servers(
    sources: McpSources, *, approvals: Mapping[str, Approval] | None = None
) -> McpPlan:
    """Read every source and decide each server's status (see the module docstring).

    ``approvals`` defaults to the answers recorded for ``sources.cwd``. Never raises.
    """
    if approvals is None:
        approvals = load_approvals(sources.home, sources.cwd)
    files: list[McpFile] = _cli_files(sources.cli_configs, sources.cwd, sources.environ)
    state, text, state_problems = _user_state(sources.home)
    if sources.strict:
        state_problems = ()  # read for the user's switches only (disabledMcpServers)
    else:
        local, user = _user_scopes(sources, state, text)
        project = read_config_file(
            sources.cwd / ".mcp.json", scope="project", environ=sources.environ
        )
        files += [local, project, user]
        if sources.editor_servers is not None:
            text = json.dumps({"mcpServers": sources.editor_servers})
            files.append(read_config_text(text, path=None, scope="lsp", environ=sources.environ))
    switches = _switches(sources, state)
    seen: set[str] = set()
    planned: list[PlannedServer] = []
    problems: list[SettingsProblem] = list(state_problems)
    for file in files:
        problems.extend(file.problems)
        for spec in file.servers:
            if spec.name in seen:
                continue
            seen.add(spec.name)
            planned.append(_decide(spec, switches, approvals, trusted=sources.trusted))
        for spec in file.invalid:
            if spec.name not in seen:
                seen.add(spec.name)
                planned.append(PlannedServer(spec=spec, status="invalid", reason=spec.error or ""))
    considered = [sources.cwd / ".mcp.json", sources.home / USER_STATE_FILE]
    considered += [f.path for f in files if f.path is not None and f.path not in considered]
    return McpPlan(servers=tuple(planned), problems=tuple(problems), files=tuple(considered))


def _decide(
    spec: ServerSpec, switches: _Switches, approvals: Mapping[str, Approval], *, trusted: bool
) -> PlannedServer:
    if switches.managed_broken is not None:
        return PlannedServer(spec=spec, status="denied", reason=switches.managed_broken)
    if any(_policy_matches(e, spec) for e in switches.denied):
        return PlannedServer(
            spec=spec, status="denied", reason="denied by the managed deniedMcpServers list"
        )
    if switches.allowed is not None and not any(_policy_matches(e, spec) for e in switches.allowed):
        return PlannedServer(
            spec=spec, status="denied", reason="not in the managed allowedMcpServers list"
        )
    if spec.name in switches.disabled:
        return PlannedServer(spec=spec, status="disabled", reason=switches.disabled[spec.name])
    if spec.scope == "project":
        if not trusted:
            return PlannedServer(
                spec=spec,
                status="untrusted",
                reason="the workspace is not trusted, so its .mcp.json servers do not start",
            )
        answer = approvals.get(spec.name)
        if answer is not None and answer.digest == spec.digest and not answer.approved:
            return PlannedServer(spec=spec, status="disabled", reason="rejected by the user")
        approved = (
            switches.enable_all
            or spec.name in switches.enabled
            or (answer is not None and answer.approved and answer.digest == spec.digest)
        )
        if not approved:
            changed = answer is not None and answer.digest != spec.digest
            reason = (
                "its definition in .mcp.json changed since it was approved"
                if changed
                else "a project server (.mcp.json) runs only after you approve it"
            )
            return PlannedServer(spec=spec, status="needs_approval", reason=reason)
    if spec.error is not None:
        return PlannedServer(spec=spec, status="invalid", reason=spec.error)
    return PlannedServer(spec=spec, status="enabled")
