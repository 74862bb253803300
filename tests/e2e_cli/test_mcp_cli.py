"""``lsp-agent mcp``: list a folder's servers, approve or deny a project server (the approvals
file the editors write, pinned to the definition), log in to and out of an OAuth server, all
against real SDK servers; the browser is played by the test, which follows the printed
authorisation URL to the loopback callback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2

from lsp_agent.mcp.oauth_store import entry_key, oauth_path
from lsp_agent.testing.scenario import expecting, reply, scenario
from tests.e2e_cli.conftest import RUN_TIMEOUT_S, run_cli
from tests.e2e_mcp.conftest import free_port, stdio_entry, stop
from tests.e2e_mcp.test_oauth import start_oauth


def env() -> dict[str, str]:
    out = dict(os.environ)
    out.pop("PYTEST_ADDOPTS", None)
    return out


def mcp(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", "mcp", *args],
        cwd=cwd,
        env=env(),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def write_mcp_json(project: Path, **servers: Any) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def statuses(project: Path) -> dict[str, dict[str, Any]]:
    result = mcp(project, "list", "--json")
    assert result.returncode == 0, result.stderr
    return {s["name"]: s for s in json.loads(result.stdout)}


def test_approve_and_deny_pin_the_definition_and_list_shows_the_state(project: Path) -> None:
    write_mcp_json(project, fx=stdio_entry("--name", "fx"))
    listed = mcp(project, "list")
    assert listed.returncode == 0, listed.stderr
    assert "fx (project, stdio): needs-approval" in listed.stdout
    assert "lsp-agent mcp approve fx" in listed.stdout

    approved = mcp(project, "approve", "fx")
    assert approved.returncode == 0, approved.stderr
    assert "MCP server fx approved" in approved.stdout
    fx = statuses(project)["fx"]
    assert fx["state"] == "ready" and fx["scope"] == "project"
    assert fx["tools"] > 0

    # The approval is pinned: another definition of fx needs a new answer.
    write_mcp_json(project, fx=stdio_entry("--name", "fx", "--flood-stderr", "0"))
    assert statuses(project)["fx"]["state"] == "needs_approval"
    assert mcp(project, "deny", "fx").returncode == 0
    listed = mcp(project, "list")
    assert "fx (project, stdio): disabled" in listed.stdout
    assert "rejected by the user" in listed.stdout


def test_unknown_and_non_project_servers_are_refused(project: Path, isolated_home: Path) -> None:
    write_mcp_json(project, fx=stdio_entry("--name", "fx"))
    unknown = mcp(project, "approve", "nope")
    assert unknown.returncode == 1
    assert "no MCP server named 'nope'" in unknown.stderr and "servers: fx" in unknown.stderr
    # A user server (~/.claude.json) needs no approval; a stdio server has no OAuth.
    (isolated_home / ".claude.json").write_text(
        json.dumps({"mcpServers": {"mine": stdio_entry("--name", "mine")}})
    )
    user = mcp(project, "approve", "mine")
    assert user.returncode == 1 and "not a project (.mcp.json) one" in user.stderr
    login = mcp(project, "login", "fx")
    assert login.returncode == 1 and "does not use OAuth" in login.stderr
    usage = mcp(project, "approve")
    assert usage.returncode == 2 and "mcp approve needs NAME" in usage.stderr


def test_login_prints_the_url_waits_for_the_browser_and_logout_forgets(
    project: Path, isolated_home: Path
) -> None:
    port = free_port()
    server = start_oauth(port)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        (isolated_home / ".claude.json").write_text(
            json.dumps({"mcpServers": {"secure": {"type": "http", "url": url}}})
        )
        assert statuses(project)["secure"]["state"] == "needs_login"
        proc = subprocess.Popen(
            [sys.executable, "-m", "lsp_agent", "mcp", "login", "secure", "--timeout", "60"],
            cwd=project,
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdout is not None
        shown = [proc.stdout.readline() for _ in range(2)]
        assert shown[0].startswith("Open this URL in a browser"), shown
        authorize = shown[1].strip()
        with httpx2.Client(timeout=30) as browser:
            response = browser.get(authorize)
            assert response.status_code == 302, response.text
            assert browser.get(response.headers["location"]).status_code == 200
        out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
        assert proc.returncode == 0, err
        assert "Logged in to MCP server secure." in out
        entry = json.loads(oauth_path(isolated_home).read_text())["servers"]
        assert entry[entry_key("secure", url)]["tokens"]["access_token"]
        assert statuses(project)["secure"]["state"] == "ready"

        logout = mcp(project, "logout", "secure")
        assert logout.returncode == 0, logout.stderr
        assert "the server revoked its tokens" in logout.stdout
        stored = json.loads(oauth_path(isolated_home).read_text())["servers"]
        assert entry_key("secure", url) not in stored
        assert statuses(project)["secure"]["state"] == "needs_login"
    finally:
        stop(server)


def test_an_approval_from_the_terminal_lets_run_p_start_the_server(project: Path) -> None:
    write_mcp_json(project, fx=stdio_entry("--name", "fx"))
    assert mcp(project, "approve", "fx").returncode == 0
    plain = scenario(reply("Nothing to do.", expect=expecting()), name="plain")
    result = run_cli(
        ["run", "-p", "hi", "--output-format", "stream-json"], scenario=plain, cwd=project
    )
    assert result.code == 0, result.proc.stderr
    assert result.events()[0]["mcp_servers"] == [{"name": "fx", "status": "connected"}]
    assert "MCP server fx" not in result.proc.stderr


def test_list_shows_an_unusable_definition_and_a_broken_file_fails(project: Path) -> None:
    write_mcp_json(project, good=stdio_entry(), broken={"command": ""})
    listed = mcp(project, "list", "--json")
    states = {s["name"]: s for s in json.loads(listed.stdout)}
    assert states["broken"]["state"] == "invalid" and "command" in states["broken"]["error"]
    assert listed.returncode == 1 and "lsp-agent: error: " in listed.stderr
    assert str(project / ".mcp.json") in listed.stderr
    (project / ".mcp.json").write_text('{"mcpServers": {"pics": {"command": 5}, }')
    broken = mcp(project, "list")
    assert broken.returncode == 1
    assert f"lsp-agent: error: {project / '.mcp.json'}:1:" in broken.stderr
    assert "invalid JSON" in broken.stderr


def test_list_shows_a_failed_servers_stderr_once(project: Path) -> None:
    write_mcp_json(project, dies=stdio_entry("--die"))
    assert mcp(project, "approve", "dies").returncode == 0
    listed = mcp(project, "list")
    assert listed.returncode == 0, listed.stderr
    assert "dies (project, stdio): failed" in listed.stdout
    assert "    fixture: cannot start, missing FIXTURE_CONFIG" in listed.stdout
    assert "MCP server dies" not in listed.stderr  # said in the list, not again on stderr
    as_json = mcp(project, "list", "--json")
    assert "missing FIXTURE_CONFIG" in json.loads(as_json.stdout)[0]["error"]
    assert "MCP server dies" not in as_json.stderr
