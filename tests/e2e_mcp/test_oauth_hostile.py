"""A hostile or broken authorisation server during ``lsp-agent``'s OAuth login: whatever its
token endpoint answers, the login fails with a short error that holds none of the tokens its
answer carried (the error is printed by ``lsp-agent mcp login``, shown by the editors and
logged). The server is a small HTTP server of the test's own (standard library) speaking just
enough of the MCP authorisation flow: a 401 naming its protected-resource metadata, the
metadata, dynamic client registration and a token endpoint whose answer each test chooses;
the test plays the browser by calling the loopback redirect with the state it was given."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from lsp_agent.mcp.config import read_config_text
from lsp_agent.mcp.oauth import LoginError, login
from lsp_agent.mcp.oauth_store import load_entry

SECRET = "SECRETACCESS0123456789"
REFRESH = "SECRETREFRESH0123456789"


class Hostile(ThreadingHTTPServer):
    """The server; ``token_answer`` is the status and body of the token endpoint."""

    token_answer: tuple[int, bytes] = (500, b"")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: Hostile

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: object) -> None:
        self._send(status, json.dumps(data).encode())

    def do_GET(self) -> None:
        base = self.server.base
        if self.path.startswith("/.well-known/oauth-protected-resource"):
            self._json(200, {"resource": f"{base}/mcp", "authorization_servers": [base]})
        elif self.path.startswith("/.well-known/oauth-authorization-server"):
            self._json(
                200,
                {
                    "issuer": base,
                    "authorization_endpoint": f"{base}/authorize",
                    "token_endpoint": f"{base}/token",
                    "registration_endpoint": f"{base}/register",
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                },
            )
        else:
            self._json(404, {"error": "not_found"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        base = self.server.base
        if self.path == "/mcp":
            meta = f"{base}/.well-known/oauth-protected-resource/mcp"
            self._send(401, b"{}", WWW_Authenticate=f'Bearer resource_metadata="{meta}"')
        elif self.path == "/register":
            client = json.loads(body)
            self._json(201, {**client, "client_id": "hostile-client"})
        elif self.path == "/token":
            self._send(*self.server.token_answer)
        else:
            self._json(404, {"error": "not_found"})


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    server = Hostile(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


async def browser(url: str) -> None:
    """The user's browser: the authorisation server approves at once and redirects to the
    loopback callback with a code and the state it was sent."""
    query = parse_qs(urlsplit(url).query)
    target = f"{query['redirect_uri'][0]}?code=c0de&state={query['state'][0]}"

    async def visit() -> None:
        async with httpx2.AsyncClient(timeout=10) as client:
            await client.get(target)

    asyncio.get_running_loop().create_task(visit())


async def failed_login(hostile: Hostile, home: Path) -> str:
    file = read_config_text(
        json.dumps({"mcpServers": {"secure": {"type": "http", "url": f"{hostile.base}/mcp"}}}),
        path=None,
        scope="cli",
        environ={},
    )
    (spec,) = file.servers
    with pytest.raises(LoginError) as caught:
        await login(spec=spec, home=home, open_url=browser, timeout_s=20)
    assert load_entry(home, "secure", spec.url).get("tokens") is None
    return str(caught.value)


@pytest.mark.parametrize(
    "body",
    [
        # Not JSON (trailing garbage): the parser's error quotes the start and end of the input.
        json.dumps({"token_type": "Bearer", "access_token": SECRET, "refresh_token": REFRESH})
        + " x",
        # JSON with a bad field: the parser's error quotes the value of that field.
        json.dumps({"access_token": SECRET, "token_type": SECRET, "refresh_token": REFRESH}),
        json.dumps({"access_token": SECRET, "token_type": "Bearer", "expires_in": REFRESH}),
    ],
)
async def test_a_malformed_token_answer_fails_without_quoting_its_tokens(
    hostile: Hostile, tmp_path: Path, body: str
) -> None:
    hostile.token_answer = (200, body.encode())
    message = await failed_login(hostile, tmp_path)
    assert "token" in message
    # Parser reports quote the start and end of a value, some with its case changed.
    quoted = [part for t in (SECRET, REFRESH) for part in (t[:8], t[-8:])]
    assert not [q for q in quoted if q.lower() in message.lower()], message


async def test_a_huge_token_error_is_cut_in_the_login_error(
    hostile: Hostile, tmp_path: Path
) -> None:
    hostile.token_answer = (400, b'{"error": "invalid_grant", "pad": "' + b"A" * 5_000_000 + b'"}')
    message = await failed_login(hostile, tmp_path)
    assert "400" in message and "invalid_grant" in message
    assert len(message) < 1000


async def test_a_malformed_refresh_answer_is_not_logged_with_its_tokens(
    hostile: Hostile, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An expired token is refreshed before a connection; the authorisation server answers
    the refresh with a token answer the SDK cannot parse. The SDK logs that with the parser's
    report, whose lines quote the answer's fields; the log keeps the event, not the tokens."""
    import logging

    from lsp_agent.mcp.oauth import NeedsLoginError, connect_auth
    from lsp_agent.mcp.oauth_tokens import update_entry

    url = f"{hostile.base}/mcp"
    file = read_config_text(
        json.dumps({"mcpServers": {"secure": {"type": "http", "url": url}}}),
        path=None,
        scope="cli",
        environ={},
    )
    (spec,) = file.servers
    base = hostile.base
    update_entry(
        tmp_path,
        "secure",
        url,
        tokens={"access_token": "old", "token_type": "Bearer", "refresh_token": "r0"},
        expires_at=1.0,
        client_info={
            "client_id": "hostile-client",
            "redirect_uris": ["http://127.0.0.1/callback"],
            "token_endpoint_auth_method": "none",
        },
        metadata={
            "issuer": base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "response_types_supported": ["code"],
        },
    )
    answer = {"access_token": SECRET, "token_type": "Bearer", "expires_in": REFRESH}
    hostile.token_answer = (200, json.dumps(answer).encode())
    caplog.set_level(logging.INFO)
    auth = connect_auth(spec=spec, home=tmp_path, on_needs_login=lambda: None)
    async with httpx2.AsyncClient(auth=auth, timeout=10) as client:
        with pytest.raises(NeedsLoginError):
            await client.post(url, json={})
    assert "Invalid refresh response" in caplog.text
    quoted = [part for t in (SECRET, REFRESH) for part in (t[:8], t[-8:])]
    assert not [q for q in quoted if q.lower() in caplog.text.lower()], caplog.text
