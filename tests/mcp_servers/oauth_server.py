"""A real MCP server protected by OAuth, for the tests: the SDK's ``MCPServer`` with its own
authorisation server (``auth_server_provider``: metadata, dynamic client registration,
``/authorize`` that approves at once, PKCE-checked ``/token``, refresh) and its protected
resource metadata, on streamable HTTP at ``http://127.0.0.1:PORT/mcp``.

Run as ``python oauth_server.py PORT [--garbage-metadata] [--sse] [--client-id ID
[--client-secret SECRET] --redirect-uri URI] [--no-registration]`` (``--sse``: the legacy
SSE transport at ``/sse`` instead; ``--client-id``: a client registered beforehand, public or
with a secret (HTTP Basic), whose one redirect URI is ``URI``; ``--no-registration``: no
dynamic client registration). Token revocation (RFC 7009) is served at ``/revoke`` by a
handler of its own (the SDK's wants a ``client_secret`` form field even from a public client or
one using HTTP Basic, which RFC 7009 does not ask for). Test
controls (unauthenticated, 127.0.0.1 only): ``POST /test/expire`` makes every access token
invalid (refresh tokens stay), ``POST /test/revoke`` makes every token invalid, ``GET
/test/stats`` counts registrations, authorisations, code exchanges, refreshes and revoked
tokens, and names the last requested scope. ``--garbage-metadata`` serves no protected
resource metadata and garbage for every discovery and registration URL.
"""

from __future__ import annotations

import argparse
import base64
import hmac
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
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

ACCESS_TTL_S = 3600


class Provider:
    """An in-memory authorisation server that approves every authorisation request."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.stats: dict[str, Any] = {
            "registrations": 0,
            "authorizations": 0,
            "exchanges": 0,
            "refreshes": 0,
            "revocations": 0,
        }

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
        self.stats["scope"] = " ".join(params.scopes or [])
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
        self.stats["revocations"] += 1
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def build(
    port: int,
    *,
    garbage: bool,
    path: str = "/mcp",
    client: OAuthClientInformationFull | None = None,
    registration: bool = True,
) -> MCPServer:
    base = f"http://127.0.0.1:{port}"
    provider = Provider()
    if client is not None and client.client_id is not None:
        provider.clients[client.client_id] = client
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        settings = AuthSettings(
            issuer_url=base,  # type: ignore[arg-type]
            resource_server_url=None if garbage else f"{base}{path}",  # type: ignore[arg-type]
            client_registration_options=ClientRegistrationOptions(
                enabled=registration and not garbage
            ),
            revocation_options=RevocationOptions(enabled=True),
        )
    server = MCPServer(
        "secure",
        instructions="A server behind OAuth.",
        auth_server_provider=None if garbage else provider,  # type: ignore[arg-type]
        token_verifier=_Verifier(provider) if garbage else None,
        auth=settings,
    )

    server.test_provider = provider  # type: ignore[attr-defined]

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


def own_revocation(app: Starlette, server: MCPServer) -> None:
    """Serve ``/revoke`` (RFC 7009) with :func:`revoke_handler` instead of the SDK's."""
    provider = getattr(server, "test_provider", None)
    if provider is None:
        return
    for index, route in enumerate(app.router.routes):
        if getattr(route, "path", None) == "/revoke":
            app.router.routes[index] = Route("/revoke", revoke_handler(provider), methods=["POST"])


def revoke_handler(provider: Provider) -> Any:
    async def revoke(request: Request) -> Response:
        form = await request.form()
        client_id, secret = form.get("client_id"), form.get("client_secret")
        basic = request.headers.get("authorization", "")
        if basic.lower().startswith("basic "):
            from urllib.parse import unquote

            pair = base64.b64decode(basic[6:]).decode()
            client_id, secret = (unquote(part) for part in pair.split(":", 1))
        client = provider.clients.get(str(client_id))
        if client is None or (
            client.client_secret is not None
            and not hmac.compare_digest(client.client_secret, str(secret or ""))
        ):
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        token = str(form.get("token", ""))
        found = provider.access.get(token) or provider.refresh.get(token)
        if found is not None and found.client_id == client.client_id:
            await provider.revoke_token(found)
        return Response(status_code=200)

    return revoke


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
    parser.add_argument("--client-id")
    parser.add_argument("--client-secret")
    parser.add_argument("--redirect-uri")
    parser.add_argument("--no-registration", action="store_true")
    args = parser.parse_args()
    client = None
    if args.client_id:
        client = OAuthClientInformationFull(
            client_id=args.client_id,
            client_secret=args.client_secret,
            redirect_uris=[args.redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="client_secret_basic" if args.client_secret else "none",
            scope="read write admin",
        )
    server = build(
        args.port,
        garbage=args.garbage_metadata,
        path="/sse" if args.sse else "/mcp",
        client=client,
        registration=not args.no_registration,
    )
    app = server.sse_app() if args.sse else server.streamable_http_app()
    own_revocation(app, server)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
