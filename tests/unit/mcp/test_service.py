"""The per-project MCP service without starting servers: re-reading the configuration only
when a file changed, approval through the service, errors for bad requests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsp_agent.mcp.limits import McpLimits
from lsp_agent.mcp.service import McpError, McpService
from lsp_agent.mcp.sources import McpSources


def service(project: Path, home: Path, *, trusted: bool = True) -> McpService:
    sources = McpSources(cwd=project, home=home, trusted=trusted, environ={}, settings_files={})
    return McpService(sources=sources, limits=McpLimits())


def write(project: Path, servers: dict[str, object]) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "p").mkdir()
    (tmp_path / "h").mkdir()
    return (tmp_path / "p").resolve(), tmp_path / "h"


async def test_an_edited_mcp_json_is_picked_up_at_the_next_refresh(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    svc = service(project, home)
    assert svc.statuses() == []
    changes: list[int] = []
    svc.on_change = lambda s: changes.append(len(s.statuses()))
    await svc.refresh()
    assert changes == []  # nothing changed: no re-read, no notification
    write(project, {"a": {"command": "srv"}, "b": {"command": "${UNSET_VAR}"}})
    await svc.refresh()
    assert [(s["name"], s["state"]) for s in svc.statuses()] == [
        ("a", "needs_approval"),
        ("b", "needs_approval"),
    ]
    assert changes == [2]
    await svc.refresh()
    assert changes == [2]


async def test_approve_and_reject_through_the_service(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(project, {"a": {"command": "${UNSET_VAR}"}})
    svc = service(project, home)
    # Approved, but its variable is unset: invalid, and it never starts (no SDK, no pool).
    await svc.approve("a", approved=True)
    (status,) = svc.statuses()
    assert status["state"] == "invalid" and "UNSET_VAR" in status["error"]
    assert svc.pool is None
    await svc.approve("a", approved=False)
    assert svc.statuses()[0]["state"] == "disabled"
    with pytest.raises(McpError, match="no MCP server named"):
        await svc.approve("zz", approved=True)
    with pytest.raises(McpError, match="not running"):
        svc.reconnect("a")


async def test_untrusted_workspaces_cannot_approve(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(project, {"a": {"command": "srv"}})
    svc = service(project, home, trusted=False)
    assert svc.statuses()[0]["state"] == "untrusted"
    with pytest.raises(McpError, match="not trusted"):
        await svc.approve("a", approved=True)


def test_a_big_claude_json_without_servers_reports_nothing(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    history = [{"display": "x" * 200} for _ in range(20)]
    state = {"projects": {f"/p/{i}": {"history": history} for i in range(300)}}
    (home / ".claude.json").write_text(json.dumps(state))
    svc = service(project, home)
    # No MCP definition in it: nothing to position, nothing reported.
    assert svc.statuses() == [] and svc.problems == ()
