"""OAuth with a client registered beforehand (``oauth.clientId``/``clientSecret``/``scopes``:
no dynamic registration, the secret sent at the token endpoint and never stored or logged),
and logging out, which revokes the tokens at the authorisation server (RFC 7009) and forgets
them here even when that server is gone. The authorisation server is the SDK's, run by
``tests/mcp_servers/oauth_server.py`` on 127.0.0.1; the test plays the browser."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.mcp.oauth_store import load_entry, oauth_path
from lsp_agent.mcp.pool import McpPool
from tests.e2e_mcp.conftest import free_port, stop
from tests.e2e_mcp.test_oauth import (
    Browser,
    control,
    home,
    logged_in,
    make_pool,
    oauth_server,
    pools,
    start_oauth,
    stats,
)
from tests.e2e_mcp.test_pool import by_name, call, wait_state

__all__ = ["home", "oauth_server", "pools"]  # fixtures used here

SECRET = "s3cret-of-the-client"


@pytest.fixture
def preset_server() -> Iterator[tuple[str, int]]:
    """A protected server that knows client ``cid`` (with ``SECRET``, redirect to
    ``http://localhost:PORT/callback``) and refuses dynamic registration; yields its base URL
    and the callback port."""
    port, callback = free_port(), free_port()
    proc = start_oauth(
        port,
        "--client-id",
        "cid",
        "--client-secret",
        SECRET,
        "--redirect-uri",
        f"http://localhost:{callback}/callback",
        "--no-registration",
    )
    try:
        yield f"http://127.0.0.1:{port}", callback
    finally:
        stop(proc)


async def test_a_pre_registered_client_logs_in_refreshes_and_logs_out_with_revocation(
    preset_server: tuple[str, int],
    home: Path,
    pools: list[McpPool],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    base, callback = preset_server
    url = f"{base}/mcp"
    oauth = {"clientId": "cid", "clientSecret": SECRET, "callbackPort": callback}
    servers: dict[str, Any] = {
        "secure": {"type": "http", "url": url, "oauth": {**oauth, "scopes": "read write"}}
    }
    pool = make_pool(pools, servers, home=home)
    browser = Browser()
    await logged_in(pool, browser)
    assert f"redirect_uri=http%3A%2F%2Flocalhost%3A{callback}%2Fcallback" in browser.urls[0]
    assert "client_id=cid" in browser.urls[0]
    tools = await pool.tools()
    assert (await call(by_name(tools, "mcp__secure__whoami"), {})).text == "authorised"
    counts = await stats(base)
    assert counts["registrations"] == 0 and counts["exchanges"] == 1
    assert counts["scope"] == "read write"  # pinned, not the server's choice
    # The client is the configuration's: neither it nor its secret is written or logged.
    assert "client_info" not in load_entry(home, "secure", url)
    assert SECRET not in oauth_path(home).read_text()
    assert SECRET not in caplog.text and SECRET not in repr(pool.statuses())

    # A refresh authenticates with the secret (HTTP Basic): the server accepts it.
    await control(base, "expire")
    pool.reconnect("secure")
    await wait_state(pool, "secure", "ready")
    assert (await stats(base))["refreshes"] == 1

    assert await pool.connections["secure"].logout() is True
    assert (await stats(base))["revocations"] == 2  # the refresh token, then the access token
    assert load_entry(home, "secure", url) == {}
    await wait_state(pool, "secure", "needs_login")
    assert SECRET not in caplog.text


async def test_a_wrong_client_secret_is_a_clear_login_error(
    preset_server: tuple[str, int], home: Path, pools: list[McpPool]
) -> None:
    base, callback = preset_server
    oauth = {"clientId": "cid", "clientSecret": "wrong", "callbackPort": callback}
    servers = {"secure": {"type": "http", "url": f"{base}/mcp", "oauth": oauth}}
    pool = make_pool(pools, servers, home=home)
    await wait_state(pool, "secure", "needs_login")
    with pytest.raises(Exception, match="login failed") as caught:
        await pool.connections["secure"].login(Browser().open, timeout_s=30)
    assert "wrong" not in str(caught.value).replace("wrong state", "")
    assert (await stats(base))["exchanges"] == 0
    assert pool.statuses()[0].state == "needs_login"


async def test_logout_revokes_a_dynamically_registered_clients_tokens(
    oauth_server: str, home: Path, pools: list[McpPool]
) -> None:
    url = f"{oauth_server}/mcp"
    pool = make_pool(pools, {"secure": {"type": "http", "url": url}}, home=home)
    await logged_in(pool, Browser())
    assert (await stats(oauth_server))["registrations"] == 1
    assert await pool.connections["secure"].logout() is True
    assert (await stats(oauth_server))["revocations"] == 2
    assert load_entry(home, "secure", url) == {}
    await wait_state(pool, "secure", "needs_login")


async def test_logout_forgets_the_tokens_when_the_authorisation_server_is_gone(
    home: Path, pools: list[McpPool]
) -> None:
    port = free_port()
    proc = start_oauth(port)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        pool = make_pool(pools, {"secure": {"type": "http", "url": url}}, home=home)
        await logged_in(pool, Browser())
    finally:
        stop(proc)
    assert load_entry(home, "secure", url)["tokens"]
    assert await pool.connections["secure"].logout() is False
    assert load_entry(home, "secure", url) == {}
