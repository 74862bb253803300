"""Completion of ``@server:uri`` resource mentions while the user types a prompt.

The editor sends what follows the ``@`` (``docs:``, ``docs:file:///gu``, ``do``); the answer
is the matching resources of the ready servers, each with the text to insert after the ``@``
(``docs:file:///guide.md``). A query without ``:`` matches server names (so ``@do`` offers
every resource of ``docs``); with ``:`` the server name must match exactly and the rest is
matched against each resource's URI and name (case-insensitive substring). Servers that are
not ready, offer no resources or fail to answer in time are skipped: completion never waits
for a server to start and never fails because of one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from lsp_agent.mcp.connection import CallFailedError, ServerConnection
from lsp_agent.mcp.resources import list_resources, resource_entry

log = logging.getLogger(__name__)

MAX_ITEMS = 50
"""Completion items returned at most."""

LIST_TIMEOUT_S = 2.0
"""How long one server may take to list its resources for completion (seconds)."""


def split_query(query: str) -> tuple[str, str | None]:
    """``(server part, URI part)`` of what follows ``@``; the URI part is ``None`` when the
    user has not typed the ``:`` after the server name yet."""
    server, sep, rest = query.partition(":")
    return server, (rest if sep else None)


async def _listed(connection: ServerConnection) -> list[dict[str, Any]]:
    name = connection.spec.name
    try:
        resources = await asyncio.wait_for(list_resources(connection), LIST_TIMEOUT_S)
    except (CallFailedError, TimeoutError) as exc:
        log.info("MCP server %s: no resources for completion (%s)", name, exc)
        return []
    return [resource_entry(name, r) for r in resources]


async def complete_resources(
    connections: Mapping[str, ServerConnection], query: str
) -> list[dict[str, Any]]:
    """The resources matching ``query`` (the text after ``@``; see the module docstring),
    at most :data:`MAX_ITEMS`, each ``resource_entry`` plain data plus ``label`` (the text
    to insert after ``@``: ``server:uri``); sorted by server, then URI."""
    server_part, uri_part = split_query(query)
    wanted = [
        c
        for name, c in sorted(connections.items())
        if c.state == "ready"
        and c.has_resources
        and (name == server_part if uri_part is not None else name.startswith(server_part))
    ]
    listed = await asyncio.gather(*(_listed(c) for c in wanted))
    needle = (uri_part or "").lower()
    out: list[dict[str, Any]] = []
    for entries in listed:
        for entry in sorted(entries, key=lambda e: e["uri"]):
            if needle in entry["uri"].lower() or needle in entry["name"].lower():
                out.append({**entry, "label": f"{entry['server']}:{entry['uri']}"})
    return out[:MAX_ITEMS]
