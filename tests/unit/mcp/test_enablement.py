"""Turning servers of every scope off and on for one project: Claude Code's lists in the
user's ~/.claude.json, written without losing anything else, honoured by the plan for every
scope, and out of a repository's reach."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.mcp.enablement import EnablementError, set_server_enabled
from lsp_agent.mcp.sources import McpSources, plan_servers


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "proj"
    home = tmp_path / "home"
    project.mkdir()
    home.mkdir()
    return project.resolve(), home


def write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def sources(project: Path, home: Path, **kw: Any) -> McpSources:
    files = {
        "managed": home / "managed.json",
        "user": home / ".claude" / "settings.json",
        "project": project / ".claude" / "settings.json",
        "local": project / ".claude" / "settings.local.json",
    }
    base: dict[str, Any] = dict(
        cwd=project, home=home, trusted=True, environ={}, settings_files=files
    )
    base.update(kw)
    return McpSources(**base)


def states(src: McpSources) -> dict[str, str]:
    return {p.spec.name: p.status for p in plan_servers(src).servers}


def test_every_scope_turns_off_and_on_in_claude_codes_lists(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(
        home / ".claude.json",
        {
            "numStartups": 7,
            "mcpServers": {"u": {"command": "user-srv"}},
            "projects": {
                str(project): {"mcpServers": {"l": {"command": "local-srv"}}, "history": [1]}
            },
        },
    )
    write(project / ".mcp.json", {"mcpServers": {"p": {"command": "proj-srv"}}})
    write(home / ".claude" / "settings.json", {"enabledMcpjsonServers": ["p"]})
    editor = {"e": {"command": "editor-srv"}}
    src = sources(
        project,
        home,
        cli_configs=('{"mcpServers": {"c": {"command": "c"}}}',),
        editor_servers=editor,
    )
    assert set(states(src).values()) == {"enabled"}
    for name, scope in (
        ("u", "user"),
        ("l", "local"),
        ("p", "project"),
        ("e", "lsp"),
        ("c", "cli"),
    ):
        assert set_server_enabled(
            home, project, server=name, project_scope=scope == "project", enabled=False
        )
    assert set(states(src).values()) == {"disabled"}
    plan = plan_servers(src)
    assert "disabledMcpServers" in (plan.get("u") or pytest.fail()).reason
    assert "disabledMcpjsonServers" in (plan.get("p") or pytest.fail()).reason
    saved = json.loads((home / ".claude.json").read_text())
    entry = saved["projects"][str(project)]
    assert entry["disabledMcpServers"] == ["u", "l", "e", "c"]
    assert entry["disabledMcpjsonServers"] == ["p"]
    assert saved["numStartups"] == 7 and entry["history"] == [1]  # nothing else lost
    assert list(saved) == ["numStartups", "mcpServers", "projects"]  # key order kept
    # Twice is once; on removes the name from both lists.
    assert not set_server_enabled(home, project, server="u", project_scope=False, enabled=False)
    for name in "ulpec":
        set_server_enabled(home, project, server=name, project_scope=False, enabled=True)
    assert set(states(src).values()) == {"enabled"}
    entry = json.loads((home / ".claude.json").read_text())["projects"][str(project)]
    assert entry["disabledMcpServers"] == [] and entry["disabledMcpjsonServers"] == []


def test_the_switch_is_per_project(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    project, home = dirs
    other = (tmp_path / "other").resolve()
    other.mkdir()
    write(home / ".claude.json", {"mcpServers": {"u": {"command": "srv"}}})
    set_server_enabled(home, project, server="u", project_scope=False, enabled=False)
    assert states(sources(project, home)) == {"u": "disabled"}
    assert states(sources(other, home)) == {"u": "enabled"}


def test_strict_mcp_config_honours_the_switch(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(home / ".claude.json", {"projects": {str(project): {"disabledMcpServers": ["c"]}}})
    src = sources(
        project, home, strict=True, cli_configs=('{"mcpServers": {"c": {"command": "c"}}}',)
    )
    assert states(src) == {"c": "disabled"}


def test_a_repository_cannot_turn_a_server_back_on(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(home / ".claude.json", {"mcpServers": {"gh": {"command": "gh-srv"}}})
    set_server_enabled(home, project, server="gh", project_scope=False, enabled=False)
    # The repository redefines the name, approves everything and lists nothing as off.
    write(project / ".mcp.json", {"mcpServers": {"gh": {"command": "evil"}}})
    write(
        project / ".claude" / "settings.json",
        {"enableAllProjectMcpServers": True, "disabledMcpServers": [], "projects": {}},
    )
    write(project / ".claude" / "settings.local.json", {"enabledMcpjsonServers": ["gh"]})
    write(project / ".claude.json", {"projects": {str(project): {"disabledMcpServers": []}}})
    assert states(sources(project, home)) == {"gh": "disabled"}


def test_managed_deny_still_wins(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(home / ".claude.json", {"mcpServers": {"u": {"command": "srv"}}})
    write(home / "managed.json", {"deniedMcpServers": [{"serverName": "u"}]})
    set_server_enabled(home, project, server="u", project_scope=False, enabled=True)
    assert states(sources(project, home)) == {"u": "denied"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"projects": []}', "'projects' is not an object"),
        ('{"projects": {"PROJECT": "x"}}', "is not an object"),
        (b"\xff\xfe{}", "not valid JSON"),
    ],
)
def test_a_broken_file_is_left_as_it_was(
    dirs: tuple[Path, Path], text: str | bytes, problem: str
) -> None:
    project, home = dirs
    path = home / ".claude.json"
    data = text.encode() if isinstance(text, str) else text
    data = data.replace(b"PROJECT", str(project).encode())
    path.write_bytes(data)
    with pytest.raises(EnablementError, match=problem) as caught:
        set_server_enabled(home, project, server="u", project_scope=False, enabled=False)
    assert str(path) in str(caught.value)
    assert path.read_bytes() == data


def test_mode_and_symlink_are_kept(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    project, home = dirs
    target = tmp_path / "dotfiles" / "claude.json"
    write(target, {"mcpServers": {}})
    os.chmod(target, 0o640)
    (home / ".claude.json").symlink_to(target)
    set_server_enabled(home, project, server="u", project_scope=False, enabled=False)
    assert (home / ".claude.json").is_symlink()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    saved = json.loads(target.read_text())
    assert saved["projects"][str(project)]["disabledMcpServers"] == ["u"]


def test_a_missing_file_is_created_private(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    set_server_enabled(home, project, server="u", project_scope=False, enabled=False)
    path = home / ".claude.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {
        "projects": {str(project): {"disabledMcpServers": ["u"]}}
    }


async def test_the_service_turns_servers_off_and_says_why_one_stays_off(
    dirs: tuple[Path, Path],
) -> None:
    from lsp_agent.mcp.limits import McpLimits
    from lsp_agent.mcp.service import McpError, McpService

    project, home = dirs
    # Unset variables keep both servers from starting (no SDK, no pool).
    write(home / ".claude.json", {"mcpServers": {"u": {"command": "${UNSET_A}"}}})
    write(project / ".mcp.json", {"mcpServers": {"p": {"command": "${UNSET_B}"}}})
    write(home / "managed.json", {"deniedMcpServers": [{"serverName": "d"}]})
    write(project / ".claude" / "settings.json", {"disabledMcpjsonServers": ["p"]})
    svc = McpService(
        sources=sources(project, home, editor_servers={"d": {"command": "x"}}),
        limits=McpLimits(),
    )
    changes: list[str] = []
    svc.on_change = lambda s: changes.append("changed")
    await svc.set_enabled("u", enabled=False)
    assert {s["name"]: s["state"] for s in svc.statuses()}["u"] == "disabled"
    assert changes
    await svc.set_enabled("u", enabled=True)
    assert {s["name"]: s["state"] for s in svc.statuses()}["u"] == "invalid"
    with pytest.raises(McpError, match="still off: listed in disabledMcpjsonServers of"):
        await svc.set_enabled("p", enabled=True)
    with pytest.raises(McpError, match="cannot be turned on: denied by the managed"):
        await svc.set_enabled("d", enabled=True)
    await svc.set_enabled("d", enabled=False)  # turning off is always allowed
    with pytest.raises(
        McpError, match=r"no MCP server named 'zz' is configured \(servers: p, u, d"
    ):
        await svc.set_enabled("zz", enabled=False)
    (home / ".claude.json").write_text("{broken")
    with pytest.raises(McpError, match="not valid JSON"):
        await svc.set_enabled("u", enabled=False)
    assert svc.pool is None


def _turn_off_many(home: str, project: str, prefix: str) -> None:
    for i in range(30):
        set_server_enabled(
            Path(home), Path(project), server=f"{prefix}{i}", project_scope=False, enabled=False
        )


def test_two_processes_keep_each_others_switches(dirs: tuple[Path, Path]) -> None:
    import multiprocessing

    project, home = dirs
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_turn_off_many, args=(str(home), str(project), p)) for p in "ab"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    saved = json.loads((home / ".claude.json").read_text())
    names = saved["projects"][str(project)]["disabledMcpServers"]
    assert sorted(names) == sorted(f"{p}{i}" for p in "ab" for i in range(30))
    assert not (home / ".claude.json.lock").exists()  # the lock is in our state folder
