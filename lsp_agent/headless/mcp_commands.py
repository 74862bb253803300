"""``lsp-agent mcp``: the MCP servers of a project from a terminal (Claude Code's ``claude mcp
list``), and what the editors' MCP section does for them: approve or deny a project server,
turn a server of any scope on or off for the project, log in to an OAuth server or log out.

The same files as the editors: approvals in the user's state folder, pinned to the server's
definition (:mod:`lsp_agent.mcp.approvals`), OAuth tokens in ``mcp-oauth.json`` beside them
(:mod:`lsp_agent.mcp.oauth_store`), the on/off switches in ``~/.claude.json``
(:mod:`lsp_agent.mcp.enablement`, Claude Code's lists). As ``run -p``, the command trusts
the folder it runs in: the user typed it there.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from lsp_agent.headless.mcp_notices import McpFailureNotices, shown_state
from lsp_agent.headless.terminal import plain

Action = Literal["list", "approve", "deny", "enable", "disable", "login", "logout"]

LIST_WAIT_S = 10.0
"""How long ``mcp list`` waits for the servers to start before it reports them (seconds)."""


@dataclass(frozen=True, kw_only=True)
class McpCommandOptions:
    """One ``lsp-agent mcp`` command: ``action`` on server ``name`` (``None`` for ``list``) of
    the project ``cwd``; ``timeout_s`` bounds ``list``'s wait and ``login``'s wait for the
    browser (seconds)."""

    action: Action
    name: str | None
    cwd: Path
    as_json: bool = False
    timeout_s: float = LIST_WAIT_S
    environ: Mapping[str, str]


class McpCommandError(Exception):
    """The command cannot be done; the message says why."""


def run_mcp(
    options: McpCommandOptions, *, out: TextIO = sys.stdout, err: TextIO = sys.stderr
) -> int:
    """Do ``options.action``; return the exit status: 0 done, 1 failed (a line on ``err``
    says why: unknown server, not a project server, not OAuth, refused login, timeout, or
    for ``list`` a configuration file with errors, named)."""
    service = _service(options, err=err)
    try:
        if options.action == "list":
            asyncio.run(_list(service, options, out=out))
        elif options.action in ("approve", "deny"):
            _approve(service, options, out=out)
        elif options.action in ("enable", "disable"):
            _set_enabled(service, options, out=out)
        elif options.action == "login":
            asyncio.run(_login(service, options, out=out))
        else:
            asyncio.run(_logout(service, options, out=out))
    except McpCommandError as exc:
        err.write(f"lsp-agent: error: {plain(str(exc))}\n")
        return 1
    broken = sorted({str(p.path) for p in service.problems if p.severity == "error" and p.path})
    if options.action == "list" and broken:
        # The lines above name each problem; the exit status tells a script.
        err.write(f"lsp-agent: error: MCP configuration with errors: {plain(', '.join(broken))}\n")
        return 1
    return 0


def _service(options: McpCommandOptions, *, err: TextIO) -> Any:
    from lsp_agent.config.store import SettingsStore
    from lsp_agent.mcp.limits import limits_from_env
    from lsp_agent.mcp.service import McpService
    from lsp_agent.mcp.sources import McpSources

    settings = SettingsStore(cwd=options.cwd, flag_settings_path=None, trusted=True)
    service = McpService(
        sources=McpSources(
            cwd=options.cwd,
            home=settings.loader.home,
            trusted=True,
            environ=dict(options.environ),
            settings_files={str(k): v for k, v in settings.loader.files().items()},
        ),
        limits=limits_from_env(options.environ),
        roots=lambda: (options.cwd,),
    )
    for problem in service.problems:
        err.write(f"lsp-agent: {problem.severity}: {plain(problem_line(problem))}\n")
    return service


def name_argument(name: str) -> str:
    """``name`` as the command line's argument: after ``--`` when it starts with ``-`` (a
    server named ``--help`` or ``-x`` would be read as an option)."""
    return f"-- {name}" if name.startswith("-") else name


def problem_line(problem: Any) -> str:
    """A configuration problem as ``FILE:LINE:COL: message`` (1-based), or ``--mcp-config:
    message`` for inline JSON; the caller prefixes ``lsp-agent: SEVERITY:``."""
    if problem.path is None:
        return f"--mcp-config: {problem.message}"
    return f"{problem.path}:{problem.start[0] + 1}:{problem.start[1] + 1}: {problem.message}"


def _hint(status: Mapping[str, Any]) -> str | None:
    """What the user can do about a server in ``status["state"]`` (``None``: nothing)."""
    name = name_argument(status["name"])
    error = status.get("error") or ""
    if status["state"] == "disabled":
        if error.startswith("rejected"):
            return f"approve it again: lsp-agent mcp approve {name}"
        if "~/.claude.json" in error:
            return f"turn it on again: lsp-agent mcp enable {name}"
        return None  # a settings file's disabledMcpjsonServers: the error names it
    return {
        "needs_approval": f"approve it: lsp-agent mcp approve {name}",
        "needs_login": f"log in: lsp-agent mcp login {name}",
    }.get(status["state"])


async def _list(service: Any, options: McpCommandOptions, *, out: TextIO) -> None:
    # The list shows each failure (with the server's stderr): the connection's log line of it
    # on stderr would say it a second time, unprefixed.
    quiet = McpFailureNotices()
    quiet.install()
    try:
        if service.plan.enabled():
            await service.tools(wait_s=options.timeout_s)
        statuses = service.statuses()
    finally:
        await service.aclose()
        quiet.remove()
    if options.as_json:
        out.write(json.dumps(statuses, indent=2) + "\n")
        return
    if not statuses:
        out.write("No MCP servers are configured for this folder (see .mcp.json).\n")
        return
    for status in statuses:
        tools = (
            f" · {status['tools']} tool{'' if status['tools'] == 1 else 's'}"
            if status["state"] == "ready"
            else ""
        )
        out.write(
            plain(
                f"{status['name']} ({status['scope']}, {status['transport']}): "
                f"{shown_state(status['state'])}{tools} - {status['description']}"
            )
            + "\n"
        )
        if status["error"]:
            first, *more = status["error"].splitlines()
            out.write(f"  {plain(first)}\n")
            out.writelines(f"    {plain(line)}\n" for line in more)  # the server's stderr tail
        hint = _hint(status)
        if hint:
            out.write(f"  {hint}\n")


def _planned(service: Any, name: str | None) -> Any:
    planned = service.plan.get(name or "")
    if planned is None:
        known = ", ".join(s.spec.name for s in service.plan.servers) or "none"
        raise McpCommandError(f"no MCP server named {name!r} is configured here (servers: {known})")
    return planned


def _approve(service: Any, options: McpCommandOptions, *, out: TextIO) -> None:
    from lsp_agent.mcp.approvals import record_approval

    planned = _planned(service, options.name)
    spec = planned.spec
    if spec.scope != "project":
        raise McpCommandError(
            f"MCP server {spec.name!r} is a {spec.scope} server, not a project (.mcp.json) "
            "one: only project servers need approving"
        )
    approved = options.action == "approve"
    try:
        record_approval(
            service.sources.home,
            service.sources.cwd,
            server=spec.name,
            digest=spec.digest,
            approved=approved,
        )
    except OSError as exc:
        raise McpCommandError(f"the approval could not be saved: {exc}") from None
    verb = "approved" if approved else "denied"
    out.write(
        plain(f"MCP server {spec.name} {verb} for {service.sources.cwd} ({spec.describe()}); ")
        + "a change to its definition in .mcp.json needs a new answer\n"
    )


def _set_enabled(service: Any, options: McpCommandOptions, *, out: TextIO) -> None:
    from lsp_agent.mcp.enablement import EnablementError, set_server_enabled
    from lsp_agent.mcp.sources import plan_servers

    planned = _planned(service, options.name)
    spec = planned.spec
    enabled = options.action == "enable"
    if enabled and planned.status == "denied":
        raise McpCommandError(f"MCP server {spec.name!r} cannot be turned on: {planned.reason}")
    cwd = service.sources.cwd
    try:
        changed = set_server_enabled(
            service.sources.home,
            cwd,
            server=spec.name,
            project_scope=spec.scope == "project",
            enabled=enabled,
        )
    except EnablementError as exc:
        raise McpCommandError(str(exc)) from None
    after = plan_servers(service.sources).get(spec.name)
    if enabled and after is not None and after.status == "disabled":
        raise McpCommandError(f"MCP server {spec.name!r} is still off: {after.reason}")
    out.write(
        f"MCP server {spec.name} ({spec.scope}) turned {'on' if enabled else 'off'} for {cwd}"
        f"{'' if changed else ' (it already was)'}; the editors and run -p follow it\n"
    )
    if enabled and after is not None and after.status != "enabled":
        status = {"name": spec.name, "state": after.status, "scope": spec.scope}
        hint = _hint(status)
        state = shown_state(after.status)
        out.write(f"  it is {state}: {after.reason}\n" + (f"  {hint}\n" if hint else ""))


def _oauth_spec(service: Any, name: str | None) -> Any:
    from lsp_agent.mcp.oauth import uses_oauth

    planned = _planned(service, name)
    if not uses_oauth(planned.spec):
        raise McpCommandError(
            f"MCP server {planned.spec.name!r} does not use OAuth (a stdio server, or its "
            "headers set Authorization)"
        )
    return planned


async def _login(service: Any, options: McpCommandOptions, *, out: TextIO) -> None:
    from lsp_agent.mcp.oauth import LoginError, login

    planned = _oauth_spec(service, options.name)
    if planned.status != "enabled":
        hint = _hint(
            {"name": planned.spec.name, "state": planned.status, "scope": planned.spec.scope}
        )
        raise McpCommandError(
            f"MCP server {planned.spec.name!r} is {planned.status}: {planned.reason}"
            + (f" ({hint})" if hint else "")
        )

    async def show(url: str) -> None:
        out.write(
            f"Open this URL in a browser on this machine to log in to {planned.spec.name}:\n"
            f"  {plain(url)}\n"
            f"Waiting up to {options.timeout_s:g} s for the browser to come back…\n"
        )
        out.flush()

    try:
        await login(
            spec=planned.spec,
            home=service.sources.home,
            open_url=show,
            callback_port=planned.spec.callback_port or 0,
            timeout_s=options.timeout_s,
        )
    except LoginError as exc:
        raise McpCommandError(
            f"logging in to MCP server {planned.spec.name!r} failed: {exc}"
        ) from None
    out.write(f"Logged in to MCP server {planned.spec.name}.\n")


async def _logout(service: Any, options: McpCommandOptions, *, out: TextIO) -> None:
    from lsp_agent.mcp.oauth_logout import logout

    spec = _oauth_spec(service, options.name).spec
    try:
        revoked = await logout(spec=spec, home=service.sources.home)
    except OSError as exc:
        raise McpCommandError(f"the OAuth credentials could not be removed: {exc}") from None
    done = " (the server revoked its tokens)" if revoked else ""
    out.write(f"Logged out of MCP server {spec.name}{done}.\n")
