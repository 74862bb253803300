"""The parser of ``lsp-agent mcp`` (Claude Code's ``claude mcp list`` and the editors' MCP
section from a terminal), kept beside :mod:`lsp_agent.cli.parser` so that module stays small.
Only :mod:`argparse` is imported."""

from __future__ import annotations

import argparse
from typing import Any

LOGIN_WAIT_S = 300.0
"""How long ``mcp login`` waits for the browser by default (seconds)."""


def add_mcp_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``mcp`` to ``commands`` (the ``add_subparsers`` object) and return its parser."""
    mcp: argparse.ArgumentParser = commands.add_parser(
        "mcp",
        help="list this folder's MCP servers; approve, deny, enable, disable, log in to or "
        "log out of one",
        description="list: every MCP server of the folder with its scope (project = .mcp.json, "
        "local, user, cli...), state and tool count (servers are started to count their tools). "
        "approve NAME / deny NAME: answer for a project (.mcp.json) server, pinned to its "
        "current definition, in the same approvals file the editors write; run -p and the "
        "editors then start (or skip) it. enable NAME / disable NAME: turn a server of any "
        "scope on or off for this folder, in ~/.claude.json as Claude Code's /mcp menu does "
        "(disabledMcpServers); the editors and run -p follow it. login NAME: OAuth login to "
        "an HTTP server: prints the authorisation URL and waits for the browser's redirect to "
        "127.0.0.1; the tokens go where the editors' login keeps them. logout NAME: forget "
        "them.",
    )
    mcp.add_argument(
        "action",
        choices=("list", "approve", "deny", "enable", "disable", "login", "logout"),
        nargs="?",
        default="list",
        help="list (default), approve, deny, enable, disable, login or logout",
    )
    mcp.add_argument("name", nargs="?", metavar="NAME", help="the server's name")
    mcp.add_argument("--json", action="store_true", help="list: print a JSON array")
    mcp.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"list: wait for servers to start (default 10); login: wait for the browser "
        f"(default {LOGIN_WAIT_S:g})",
    )
    mcp.add_argument("--cwd", default=".", metavar="DIR", help="the project folder (default: .)")
    return mcp
