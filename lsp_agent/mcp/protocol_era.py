"""Which MCP protocol era a connection speaks, and what follows from it.

We connect with the ``initialize`` handshake first (:data:`HANDSHAKE_MODE`). On the 2026-07-28
protocol a server cannot send requests of its own mid-call, so a tool written the usual way
with the SDK (``await ctx.elicit(...)``, ``ctx.session.list_roots()``, ``ctx.info``) fails there
with "no back-channel for server-initiated requests"; on the handshake protocol (2025-11-25)
those requests ride the stdio pipe or the streamable-HTTP response stream, and
``Resolve(...)``-style tools still work (the SDK sends their questions as the same requests). A
server that refuses the handshake (:func:`refuses_handshake`: it speaks only the 2026 protocol)
is reconnected with the SDK's ``auto`` negotiation.
"""

from __future__ import annotations

from dataclasses import dataclass

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

HANDSHAKE_MODE = "legacy"
"""The SDK's ``Client(mode=...)`` value for the ``initialize`` handshake."""

FALLBACK_MODE = "auto"
"""The SDK's negotiation (``server/discover``, then the handshake) for a server that refuses
the handshake."""


def refuses_handshake(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception in its groups) is the server's
    ``UNSUPPORTED_PROTOCOL_VERSION`` answer to ``initialize``."""
    if isinstance(exc, BaseExceptionGroup):
        return any(refuses_handshake(inner) for inner in exc.exceptions)
    return isinstance(exc, MCPError) and exc.code == types.UNSUPPORTED_PROTOCOL_VERSION


@dataclass(frozen=True, kw_only=True)
class Relist:
    """Which lists to fetch again after each call to a server (plain data)."""

    tools: bool = False
    prompts: bool = False


def relist_after_calls(protocol_version: str, capabilities: types.ServerCapabilities) -> Relist:
    """What to re-list after each call on a connection of ``protocol_version``.

    The SDK's ``ctx.notify_tools_changed()`` reaches only 2026 ``subscriptions/listen`` streams,
    and its servers declare ``listChanged: false`` on a handshake connection, so a handshake
    connection re-lists each list the server has but does not promise to announce. A 2026
    connection hears changes on its ``listen`` stream: nothing to re-list.
    """
    if protocol_version in MODERN_PROTOCOL_VERSIONS:
        return Relist()
    tools, prompts = capabilities.tools, capabilities.prompts
    return Relist(
        tools=tools is not None and not tools.list_changed,
        prompts=prompts is not None and not prompts.list_changed,
    )
