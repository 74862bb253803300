"""OAuth for HTTP MCP servers against a real authorisation server: the SDK's ``MCPServer`` with
its own OAuth provider (``tests/mcp_servers/oauth_server.py``) on 127.0.0.1. The tests play
the browser: they GET the authorisation URL the login hands out and follow its redirect to the
loopback callback, as a browser would."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from lsp_agent.mcp.oauth import LoginError
from lsp_agent.mcp.oauth_store import entry_key, oauth_path
from lsp_agent.mcp.pool import McpPool
from tests.e2e_mcp.conftest import (
    START_WAIT_S,
    free_port,
    plan_of,
    start_listening,
    stdio_entry,
    stop,
)
from tests.e2e_mcp.conftest import test_limits as limits_for_tests
from tests.e2e_mcp.test_pool import by_name, call, wait_state

SERVER = Path(__file__).resolve().parents[1] / "mcp_servers" / "oauth_server.py"


def start_oauth(port: int, *flags: str) -> subprocess.Popen[bytes]:
    argv = [sys.executable, str(SERVER), str(port), *flags]
    return start_listening(argv, port, what="the OAuth server")


@pytest.fixture
def oauth_server() -> Iterator[str]:
    """The protected server; yields its base URL (the MCP endpoint is ``/mcp``)."""
    port = free_port()
    proc = start_oauth(port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
async def pools() -> Any:
    made: list[McpPool] = []
    yield made
    for pool in made:
        await pool.aclose()


def make_pool(made: list[McpPool], servers: dict[str, Any], *, home: Path) -> McpPool:
    pool = McpPool(
        plan=plan_of(servers),
        limits=limits_for_tests(),
        project=home,
        environ=os.environ,
        home=home,
    )
    made.append(pool)
    pool.start()
    return pool


class Browser:
    """Plays the user's browser: GETs each URL it is shown and follows the redirects (to the
    loopback callback), in a task of its own as a real browser would."""

    def __init__(self, *, state: str | None = None) -> None:
        self.urls: list[str] = []
        self.pages: list[tuple[int, str]] = []
        self.state = state
        self.tasks: list[asyncio.Task[None]] = []

    async def open(self, url: str) -> None:
        self.urls.append(url)
        self.tasks.append(asyncio.ensure_future(self._visit(url)))

    async def _visit(self, url: str) -> None:
        async with httpx2.AsyncClient(timeout=30) as client:
            response = await client.get(url)
            assert response.status_code == 302, response.text
            target = response.headers["location"]
            if self.state is not None:  # a forged redirect: same code, another state
                target = target.replace("state=", f"state={self.state}&was=")
            page = await client.get(target)
            self.pages.append((page.status_code, page.text))


async def stats(base: str) -> dict[str, int]:
    async with httpx2.AsyncClient() as client:
        return dict((await client.get(f"{base}/test/stats")).json())


async def control(base: str, what: str) -> None:
    async with httpx2.AsyncClient() as client:
        assert (await client.post(f"{base}/test/{what}")).status_code == 200


def stored(home: Path, url: str) -> dict[str, Any]:
    data = json.loads(oauth_path(home).read_text("utf-8"))
    return dict(data["servers"][entry_key("secure", url)])


async def logged_in(pool: McpPool, browser: Browser) -> None:
    await wait_state(pool, "secure", "needs_login")
    await pool.connections["secure"].login(browser.open, timeout_s=START_WAIT_S)
    await wait_state(pool, "secure", "ready")


async def test_login_end_to_end_stores_a_private_token_and_calls_the_tool(
    oauth_server: str, home: Path, pools: list[McpPool], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"{oauth_server}/mcp"
    pool = make_pool(pools, {"secure": {"type": "http", "url": url}}, home=home)
    await wait_state(pool, "secure", "needs_login")
    assert pool.statuses()[0].error and "log in" in pool.statuses()[0].error
    assert await stats(oauth_server) == dict.fromkeys(stats_keys(), 0)  # no flow on connect

    browser = Browser()
    await logged_in(pool, browser)
    assert len(browser.urls) == 1
    assert "code_challenge_method=S256" in browser.urls[0]
    assert "redirect_uri=http%3A%2F%2F127.0.0.1%3A" in browser.urls[0]
    assert browser.pages and browser.pages[0][0] == 200 and "Logged in" in browser.pages[0][1]
    tools = await pool.tools()
    assert (await call(by_name(tools, "mcp__secure__whoami"), {})).text == "authorised"
    assert pool.statuses()[0].logged_in is True

    path = oauth_path(home)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    entry = stored(home, url)
    assert entry["server"] == "secure" and entry["url"] == url
    token = entry["tokens"]["access_token"]
    assert entry["tokens"]["refresh_token"] and entry["client_info"]["client_id"]
    assert entry["expires_at"] > time.time()
    assert (await stats(oauth_server))["registrations"] == 1
    # The token is nowhere but in the file: not in statuses, not in the log.
    assert token not in repr(pool.statuses())
    assert token not in caplog.text and entry["tokens"]["refresh_token"] not in caplog.text


def stats_keys() -> tuple[str, ...]:
    return ("registrations", "authorizations", "exchanges", "refreshes", "revocations")


async def test_an_expired_token_is_refreshed_across_restarts_and_on_401(
    oauth_server: str, home: Path, pools: list[McpPool]
) -> None:
    url = f"{oauth_server}/mcp"
    servers = {"secure": {"type": "http", "url": url}}
    pool = make_pool(pools, servers, home=home)
    await logged_in(pool, Browser())
    await pool.aclose()

    # A new process: the stored expiry says the token has expired, so it is refreshed first.
    data = json.loads(oauth_path(home).read_text("utf-8"))
    data["servers"][entry_key("secure", url)]["expires_at"] = time.time() - 10
    oauth_path(home).write_text(json.dumps(data), "utf-8")
    old = stored(home, url)["tokens"]["access_token"]
    pool = make_pool(pools, servers, home=home)
    await wait_state(pool, "secure", "ready")
    assert (await stats(oauth_server))["refreshes"] == 1
    assert stored(home, url)["tokens"]["access_token"] != old

    # The server drops its access tokens early: the 401 is answered by one refresh.
    await control(oauth_server, "expire")
    pool.reconnect("secure")
    await wait_state(pool, "secure", "ready")
    assert (await stats(oauth_server))["refreshes"] == 2
    tools = await pool.tools()
    assert (await call(by_name(tools, "mcp__secure__whoami"), {})).text == "authorised"
    assert (await stats(oauth_server))["authorizations"] == 1  # never a new login


async def test_a_revoked_token_needs_login_again_without_a_loop_and_relogin_recovers(
    oauth_server: str, home: Path, pools: list[McpPool]
) -> None:
    url = f"{oauth_server}/mcp"
    pool = make_pool(pools, {"secure": {"type": "http", "url": url}}, home=home)
    await logged_in(pool, Browser())
    await control(oauth_server, "revoke")
    pool.reconnect("secure")
    await wait_state(pool, "secure", "needs_login")
    before = await stats(oauth_server)
    await asyncio.sleep(0.5)  # a loop would keep refreshing or restarting meanwhile
    assert await stats(oauth_server) == before
    assert pool.statuses()[0].state == "needs_login"
    assert before["refreshes"] == 0  # the refresh was refused (400), not counted

    await pool.connections["secure"].login(Browser().open, timeout_s=START_WAIT_S)
    await wait_state(pool, "secure", "ready")
    tools = await pool.tools()
    assert (await call(by_name(tools, "mcp__secure__whoami"), {})).text == "authorised"


async def test_a_callback_with_a_wrong_state_is_refused_and_other_servers_go_on(
    oauth_server: str, home: Path, pools: list[McpPool]
) -> None:
    url = f"{oauth_server}/mcp"
    pool = make_pool(
        pools, {"secure": {"type": "http", "url": url}, "fx": stdio_entry()}, home=home
    )
    await wait_state(pool, "secure", "needs_login")
    browser = Browser(state="forged")
    with pytest.raises(LoginError, match="wrong state"):
        await pool.connections["secure"].login(browser.open, timeout_s=START_WAIT_S)
    await asyncio.gather(*browser.tasks)
    assert browser.pages[0][0] == 400 and "refused" in browser.pages[0][1]
    assert (await stats(oauth_server))["exchanges"] == 0  # the code was never used
    assert "tokens" not in stored(home, url)
    assert pool.statuses()[0].state == "needs_login"
    await wait_state(pool, "fx", "ready")
    tools = await pool.tools()
    assert (await call(by_name(tools, "mcp__fx__echo"), {"text": "on"})).text == "echo: on"


async def test_garbage_metadata_is_a_clear_login_error(home: Path, pools: list[McpPool]) -> None:
    port = free_port()
    proc = start_oauth(port, "--garbage-metadata")
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        pool = make_pool(pools, {"secure": {"type": "http", "url": url}}, home=home)
        await wait_state(pool, "secure", "needs_login")
        browser = Browser()
        with pytest.raises(LoginError) as caught:
            await pool.connections["secure"].login(browser.open, timeout_s=START_WAIT_S)
        assert "login failed" in str(caught.value)
        assert "Invalid registration response" in str(caught.value)
        assert browser.urls == []  # no browser opened for a server we cannot use
        assert pool.statuses()[0].state == "needs_login"
    finally:
        stop(proc)


async def test_login_to_a_server_without_oauth_says_so(
    http_server: str, home: Path, pools: list[McpPool]
) -> None:
    pool = make_pool(pools, {"web": {"type": "http", "url": http_server}}, home=home)
    await wait_state(pool, "web", "ready")
    assert pool.statuses()[0].logged_in is False  # OAuth-capable, but no token held
    with pytest.raises(LoginError, match="did not ask for an OAuth login"):
        await pool.connections["web"].login(Browser().open, timeout_s=START_WAIT_S)
    await wait_state(pool, "web", "ready")


async def test_one_login_at_a_time_and_a_cancelled_login_frees_its_port(
    oauth_server: str, home: Path, pools: list[McpPool]
) -> None:
    url = f"{oauth_server}/mcp"
    pool = make_pool(pools, {"secure": {"type": "http", "url": url}}, home=home)
    await wait_state(pool, "secure", "needs_login")
    connection = pool.connections["secure"]
    shown: list[str] = []

    async def show(link: str) -> None:  # the user never comes back from the browser
        shown.append(link)

    first = asyncio.ensure_future(connection.login(show, timeout_s=START_WAIT_S))
    for _ in range(int(START_WAIT_S * 20)):
        if shown:
            break
        await asyncio.sleep(0.05)
    with pytest.raises(LoginError, match="already waiting"):
        await connection.login(show, timeout_s=START_WAIT_S)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    port = int(shown[0].split("127.0.0.1%3A")[1].split("%2F")[0])
    with socket.socket() as sock:  # the loopback callback is closed with the login
        sock.bind(("127.0.0.1", port))
    # A new login works after the cancelled one.
    await connection.login(Browser().open, timeout_s=START_WAIT_S)
    await wait_state(pool, "secure", "ready")


async def test_a_legacy_sse_server_logs_in_too(home: Path, pools: list[McpPool]) -> None:
    port = free_port()
    proc = start_oauth(port, "--sse")
    try:
        url = f"http://127.0.0.1:{port}/sse"
        pool = make_pool(pools, {"secure": {"type": "sse", "url": url}}, home=home)
        await logged_in(pool, Browser())
        tools = await pool.tools()
        assert (await call(by_name(tools, "mcp__secure__whoami"), {})).text == "authorised"
        assert stored(home, url)["tokens"]["access_token"]
    finally:
        stop(proc)
