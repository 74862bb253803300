"""OAuth credentials in the keyring: ``lsp-agent mcp login`` / ``list`` / ``logout`` run with a
real ``keyring`` backend (``tests/keyrings/file_keyring.py``, selected with
``PYTHON_KEYRING_BACKEND`` as a user would select theirs) against the SDK's authorisation
server; and ``LSP_AGENT_MCP_OAUTH_STORE=file`` keeps them in the 0600 file even then, with
nothing moved between the stores afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from lsp_agent.mcp.oauth_store import entry_key, oauth_path
from lsp_agent.mcp.oauth_tokens import KEYRING_SERVICE, STORE_ENV
from tests.e2e_cli.conftest import RUN_TIMEOUT_S
from tests.e2e_mcp.conftest import free_port, stop
from tests.e2e_mcp.test_oauth import start_oauth
from tests.keyrings.file_keyring import BACKEND, FILE_ENV, items

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def secure(isolated_home: Path) -> Iterator[str]:
    """The OAuth-protected server, configured as user server ``secure``; yields its URL."""
    port = free_port()
    proc = start_oauth(port)
    url = f"http://127.0.0.1:{port}/mcp"
    (isolated_home / ".claude.json").write_text(
        json.dumps({"mcpServers": {"secure": {"type": "http", "url": url}}})
    )
    try:
        yield url
    finally:
        stop(proc)


def keyring_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    out = dict(os.environ)
    out.pop("PYTEST_ADDOPTS", None)
    out["PYTHON_KEYRING_BACKEND"] = BACKEND
    out[FILE_ENV] = str(tmp_path / "keyring.json")
    out["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), out.get("PYTHONPATH")]))
    out.update(extra)
    return out


def mcp(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", "mcp", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def state(cwd: Path, env: dict[str, str]) -> str:
    result = mcp(cwd, env, "list", "--json")
    assert result.returncode == 0, result.stderr
    return str({s["name"]: s for s in json.loads(result.stdout)}["secure"]["state"])


def login(cwd: Path, env: dict[str, str]) -> None:
    """``lsp-agent mcp login secure``, the test playing the browser."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "mcp", "login", "secure", "--timeout", "60"],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    shown = [proc.stdout.readline() for _ in range(2)]
    with httpx2.Client(timeout=30) as browser:
        response = browser.get(shown[1].strip())
        assert response.status_code == 302, response.text
        assert browser.get(response.headers["location"]).status_code == 200
    out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
    assert proc.returncode == 0, err
    assert "Logged in to MCP server secure." in out


def file_entry(home: Path, url: str) -> dict[str, object]:
    path = oauth_path(home)
    servers = json.loads(path.read_text())["servers"] if path.exists() else {}
    return dict(servers.get(entry_key("secure", url), {}))


def test_with_a_keyring_backend_the_token_lives_in_the_keyring_only(
    project: Path, isolated_home: Path, tmp_path: Path, secure: str
) -> None:
    env = keyring_env(tmp_path)
    assert state(project, env) == "needs_login"
    login(project, env)
    item = items(tmp_path / "keyring.json")[f"{KEYRING_SERVICE}\n{entry_key('secure', secure)}"]
    stored = json.loads(item)
    assert stored["tokens"]["access_token"] and stored["client_info"]["client_id"]
    assert file_entry(isolated_home, secure) == {}  # nothing in the file
    assert state(project, env) == "ready"  # read back from the keyring by another process

    logout = mcp(project, env, "logout", "secure")
    assert logout.returncode == 0, logout.stderr
    assert "revoked" in logout.stdout
    assert items(tmp_path / "keyring.json") == {}
    assert state(project, env) == "needs_login"


def test_the_file_can_be_forced_and_nothing_moves_between_the_stores(
    project: Path, isolated_home: Path, tmp_path: Path, secure: str
) -> None:
    forced = keyring_env(tmp_path, **{STORE_ENV: "file"})
    login(project, forced)
    assert file_entry(isolated_home, secure)["tokens"]
    assert items(tmp_path / "keyring.json") == {}

    # With the keyring allowed again the token in the file is still used, and stays there.
    auto = keyring_env(tmp_path)
    assert state(project, auto) == "ready"
    assert items(tmp_path / "keyring.json") == {}
    assert file_entry(isolated_home, secure)["tokens"]

    # Logout clears both stores.
    assert mcp(project, auto, "logout", "secure").returncode == 0
    assert file_entry(isolated_home, secure) == {}
    assert items(tmp_path / "keyring.json") == {}
    assert state(project, auto) == "needs_login"
