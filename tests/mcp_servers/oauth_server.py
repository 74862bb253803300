"""A real MCP server protected by OAuth, for the tests: the SDK's ``MCPServer`` with its own
authorisation server (``auth_server_provider``: metadata, dynamic client registration,
``/authorize`` that approves at once, PKCE-checked ``/token``, refresh) and its protected
resource metadata, on streamable HTTP at ``http://127.0.0.1:PORT/mcp``.

Run as ``python oauth_server.py PORT [--garbage-metadata] [--sse]`` (``--sse``: the legacy
SSE transport at ``/sse`` instead). Test controls (unauthenticated,
127.0.0.1 only): ``POST /test/expire`` makes every access token invalid (refresh tokens stay),
``POST /test/revoke`` makes every token invalid, ``GET /test/stats`` counts registrations,
authorisations, code exchanges and refreshes. ``--garbage-metadata`` serves no protected
resource metadata and garbage for every discovery and registration URL.
"""

from __future__ import annotations

import argparse
import secrets
import time
import warnings
from typing import Any

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

ACCESS_TTL_S = 3600


class Provider:
    """An in-memory authorisation server that approves every authorisation request."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.stats = {"registrations": 0, "authorizations": 0, "exchanges": 0, "refreshes": 0}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.stats["registrations"] += 1
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        self.stats["authorizations"] += 1
        code = secrets.token_hex(16)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_hex(16), secrets.token_hex(16)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + ACCESS_TTL_S,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            expires_in=ACCESS_TTL_S,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.stats["exchanges"] += 1
        del self.codes[authorization_code.code]
        return self._issue(
            authorization_code.client_id, authorization_code.scopes, authorization_code.resource
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.stats["refreshes"] += 1
        del self.refresh[refresh_token.token]
        return self._issue(refresh_token.client_id, refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def build(port: int, *, garbage: bool, path: str = "/mcp") -> MCPServer:
    base = f"http://127.0.0.1:{port}"
    provider = Provider()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        settings = AuthSettings(
            issuer_url=base,  # type: ignore[arg-type]
            resource_server_url=None if garbage else f"{base}{path}",  # type: ignore[arg-type]
            client_registration_options=ClientRegistrationOptions(enabled=not garbage),
        )
    server = MCPServer(
        "secure",
        instructions="A server behind OAuth.",
        auth_server_provider=None if garbage else provider,  # type: ignore[arg-type]
        token_verifier=_Verifier(provider) if garbage else None,
        auth=settings,
    )

    @server.tool()
    def whoami() -> str:
        """Say that the caller is authorised."""
        return "authorised"

    @server.custom_route("/test/expire", methods=["POST"])
    async def expire(request: Request) -> Response:
        provider.access.clear()
        return PlainTextResponse("expired")

    @server.custom_route("/test/revoke", methods=["POST"])
    async def revoke(request: Request) -> Response:
        provider.access.clear()
        provider.refresh.clear()
        return PlainTextResponse("revoked")

    @server.custom_route("/test/stats", methods=["GET"])
    async def stats(request: Request) -> Response:
        return JSONResponse(provider.stats)

    if garbage:
        for path in (
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration",
            "/register",
        ):

            async def junk(request: Request) -> Response:
                return PlainTextResponse("<html>not json{{{", status_code=200)

            server.custom_route(path, methods=["GET", "POST"])(junk)
    return server


class _Verifier:
    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    async def verify_token(self, token: str) -> Any:
        return await self.provider.load_access_token(token)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--garbage-metadata", action="store_true")
    parser.add_argument("--sse", action="store_true")
    args = parser.parse_args()
    if args.sse:
        app = build(args.port, garbage=args.garbage_metadata, path="/sse").sse_app()
    else:
        app = build(args.port, garbage=args.garbage_metadata).streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
