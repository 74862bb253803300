"""Server statuses for a plan whose servers never started (no SDK import needed)."""

from __future__ import annotations

from typing import Any

from lsp_agent.mcp.sources import McpPlan


def planned_statuses(plan: McpPlan) -> list[dict[str, Any]]:
    """Statuses (the shape of :meth:`McpService.statuses`) of ``plan``'s servers."""
    return [
        {
            "name": p.spec.name,
            "scope": p.spec.scope,
            "transport": p.spec.transport,
            "state": "idle" if p.status == "enabled" else p.status,
            "error": p.reason or None,
            "tools": 0,
            "description": p.spec.describe(),
            "loggedIn": False,
        }
        for p in plan.servers
    ]
