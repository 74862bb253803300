"""Which servers a project gets: scopes, trust, approval pinned to the definition, managed
allow/deny lists, --mcp-config and --strict-mcp-config."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.mcp.approvals import approvals_path, load_approvals, record_approval
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


def statuses(plan: Any) -> dict[str, str]:
    return {p.spec.name: p.status for p in plan.servers}


def test_project_servers_need_trust_then_approval(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(project / ".mcp.json", {"mcpServers": {"p": {"command": "srv"}}})
    untrusted = plan_servers(sources(project, home, trusted=False))
    assert statuses(untrusted) == {"p": "untrusted"}
    plan = plan_servers(sources(project, home))
    assert statuses(plan) == {"p": "needs_approval"}
    assert plan.enabled() == ()


def test_the_repository_cannot_approve_its_own_servers(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(project / ".mcp.json", {"mcpServers": {"p": {"command": "srv"}}})
    write(project / ".claude" / "settings.json", {"enableAllProjectMcpServers": True})
    write(project / ".claude" / "settings.local.json", {"enabledMcpjsonServers": ["p"]})
    assert statuses(plan_servers(sources(project, home))) == {"p": "needs_approval"}


def test_user_settings_and_claude_json_approve_by_name(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(project / ".mcp.json", {"mcpServers": {"p": {"command": "srv"}, "q": {"command": "x"}}})
    write(home / ".claude" / "settings.json", {"enabledMcpjsonServers": ["p"]})
    assert statuses(plan_servers(sources(project, home))) == {"p": "enabled", "q": "needs_approval"}
    write(home / ".claude.json", {"projects": {str(project): {"enableAllProjectMcpServers": True}}})
    assert statuses(plan_servers(sources(project, home))) == {"p": "enabled", "q": "enabled"}


def test_recorded_approval_is_pinned_to_the_definition(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(project / ".mcp.json", {"mcpServers": {"p": {"command": "srv"}}})
    plan = plan_servers(sources(project, home))
    digest = plan.servers[0].spec.digest
    record_approval(home, project, server="p", digest=digest, approved=True)
    assert stat.S_IMODE(os.stat(approvals_path(home)).st_mode) == 0o600
    assert statuses(plan_servers(sources(project, home))) == {"p": "enabled"}
    # The repository changes the command: approval is needed again, with the reason.
    write(project / ".mcp.json", {"mcpServers": {"p": {"command": "srv", "args": ["--evil"]}}})
    changed = plan_servers(sources(project, home))
    assert statuses(changed) == {"p": "needs_approval"}
    assert "changed since it was approved" in changed.servers[0].reason
    # A rejection of the current definition disables it.
    record_approval(
        home, project, server="p", digest=changed.servers[0].spec.digest, approved=False
    )
    assert statuses(plan_servers(sources(project, home))) == {"p": "disabled"}


def test_broken_approvals_file_approves_nothing(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    approvals_path(home).parent.mkdir(parents=True)
    approvals_path(home).write_text("{not json")
    assert load_approvals(home, project) == {}


def test_scopes_take_the_whole_definition_from_the_highest(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(project / ".mcp.json", {"mcpServers": {"s": {"command": "from-project"}}})
    write(
        home / ".claude.json",
        {
            "mcpServers": {"s": {"command": "from-user"}, "u": {"command": "user-only"}},
            "projects": {str(project): {"mcpServers": {"s": {"command": "from-local"}}}},
        },
    )
    plan = plan_servers(sources(project, home))
    by_name = {p.spec.name: p for p in plan.servers}
    assert by_name["s"].spec.command == "from-local" and by_name["s"].spec.scope == "local"
    assert by_name["s"].status == "enabled"  # user-owned scopes need no approval
    assert by_name["u"].spec.scope == "user" and by_name["u"].status == "enabled"


def test_disabled_and_managed_lists(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(
        home / ".claude.json",
        {
            "mcpServers": {
                "ok": {"command": "good"},
                "off": {"command": "x"},
                "bad": {"command": "rm", "args": ["-rf"]},
                "web": {"type": "http", "url": "https://evil.example.com/mcp"},
            }
        },
    )
    write(project / ".claude" / "settings.local.json", {"disabledMcpjsonServers": ["off"]})
    write(
        home / "managed.json",
        {
            "deniedMcpServers": [
                {"serverCommand": ["rm", "-rf"]},
                {"serverUrl": "https://*.example.com/*"},
            ],
        },
    )
    assert statuses(plan_servers(sources(project, home))) == {
        "ok": "enabled",
        "off": "disabled",
        "bad": "denied",
        "web": "denied",
    }
    write(home / "managed.json", {"allowedMcpServers": [{"serverName": "ok"}]})
    plan = plan_servers(sources(project, home))
    assert statuses(plan)["ok"] == "enabled" and statuses(plan)["web"] == "denied"
    # A managed file that cannot be read admits nothing.
    (home / "managed.json").write_text("{broken")
    assert set(statuses(plan_servers(sources(project, home))).values()) == {"denied"}


def test_cli_configs_and_strict(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(project / ".mcp.json", {"mcpServers": {"p": {"command": "srv"}}})
    write(project / "extra.json", {"mcpServers": {"c": {"command": "from-file"}}})
    inline = json.dumps({"mcpServers": {"i": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}})
    plan = plan_servers(sources(project, home, cli_configs=("extra.json", inline)))
    assert statuses(plan) == {"c": "enabled", "i": "enabled", "p": "needs_approval"}
    strict = plan_servers(sources(project, home, cli_configs=("extra.json",), strict=True))
    assert statuses(strict) == {"c": "enabled"}
    missing = plan_servers(sources(project, home, cli_configs=("nope.json",), strict=True))
    assert missing.servers == () and "file not found" in missing.problems[0].message


def test_unset_variable_makes_the_server_invalid_with_the_reason(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(home / ".claude.json", {"mcpServers": {"s": {"command": "${NOT_SET_ANYWHERE}"}}})
    plan = plan_servers(sources(project, home))
    assert statuses(plan) == {"s": "invalid"}
    assert "NOT_SET_ANYWHERE" in plan.servers[0].reason


def test_the_editors_servers_are_the_users_own(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(project / ".mcp.json", {"mcpServers": {"both": {"command": "repo-srv"}}})
    editor = {"ed": {"command": "ed-srv"}, "both": {"command": "editor-srv"}, "bad": {"x": 1}}
    plan = plan_servers(sources(project, home, trusted=False, editor_servers=editor))
    by_name = {p.spec.name: p for p in plan.servers}
    # No approval and no trust needed: the editor's settings are the user's.
    assert (by_name["ed"].status, by_name["ed"].spec.scope) == ("enabled", "lsp")
    # A name the repository also defines keeps the repository's (higher scope) definition,
    # which still waits for trust: the editor cannot be overridden into running repo code.
    assert (by_name["both"].spec.command, by_name["both"].status) == ("repo-srv", "untrusted")
    assert any(p.path is None for p in plan.problems)  # "bad" is reported, without a file
    write(home / "managed.json", {"deniedMcpServers": [{"serverName": "ed"}]})
    denied = plan_servers(sources(project, home, trusted=False, editor_servers=editor))
    assert next(p for p in denied.servers if p.spec.name == "ed").status == "denied"
