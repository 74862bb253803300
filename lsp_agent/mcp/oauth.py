"""OAuth for HTTP MCP servers, on the SDK's ``OAuthClientProvider``.

Two uses of one provider class (:class:`McpOAuth`), both storing credentials per server where
:mod:`.oauth_tokens` keeps them (the keyring, else the 0600 file of :mod:`.oauth_store`):

* **Connecting** (:func:`connect_auth`): the stored access token is sent; an expired one is
  refreshed first (its expiry survives restarts: the SDK alone forgets it). A 401 on an MCP
  request with a refresh token not yet tried refreshes once and retries (a token revoked or
  expired early); when that fails too, or there is nothing to refresh, the request fails with
  :class:`NeedsLoginError` instead of starting an interactive flow nobody asked for — the
  server then waits in ``needs_login``. No loop: one refresh per 401.
* **Logging in** (:func:`login`): the SDK's flow as it runs it — protected-resource and
  authorisation-server metadata discovery, dynamic client registration, PKCE — with the
  authorisation URL handed to ``open_url`` (the editor's ``window/showDocument``) and the
  redirect received by a one-shot HTTP server on 127.0.0.1 (:class:`LoopbackCallback`; an
  ephemeral port, or the definition's ``oauth.callbackPort``). A callback whose ``state`` does
  not match the one sent is refused and ends the login (fail closed); the whole login is
  bounded by ``timeout_s``.
* **A pre-registered client** (``oauth.clientId``, optional ``oauth.clientSecret``): no dynamic
  registration; the client is taken from the definition every time and never stored (its
  secret stays in the configuration). Its redirect URI is ``http://localhost:PORT/callback``,
  the one Claude Code registers, so a client set up for Claude Code works unchanged. A
  confidential client authenticates with HTTP Basic (RFC 6749 §2.3.1: the method every
  authorisation server must support). ``oauth.scopes`` pins the scopes asked for.

Tokens never leave this module and their store: they are not logged, not put in errors, not shown
to the model. Imports the SDK: reached only when an HTTP server is configured.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
)

from lsp_agent.mcp.config import ServerSpec
from lsp_agent.mcp.oauth_tokens import load_entry, update_entry

log = logging.getLogger(__name__)

LOGIN_TIMEOUT_S = 300.0
"""How long a login waits for the browser's redirect at most (seconds)."""

CALLBACK_PATH = "/callback"
"""The path of the loopback redirect URI (``http://127.0.0.1:PORT/callback``)."""

MAX_CALLBACK_REQUEST_BYTES = 16384
"""Longest request head the loopback server reads (bytes); longer requests are refused."""

OpenUrl = Callable[[str], Awaitable[None]]
"""Shows an authorisation URL to the user (opens their browser, or prints it)."""


class NeedsLoginError(Exception):
    """The server wants a login (401 and no token that a refresh could mend)."""


class LoginError(Exception):
    """A login did not end with a token; the message says why (never holds a token)."""


def uses_oauth(spec: ServerSpec) -> bool:
    """Whether ``spec`` is an HTTP/SSE server that may log in with OAuth: one whose headers set
    no ``Authorization`` of their own (a configured bearer token is used as it is)."""
    return spec.transport in ("http", "sse") and not any(
        key.lower() == "authorization" for key, _ in spec.headers
    )


class CredentialStorage:
    """The SDK's ``TokenStorage`` on the entry of ``spec`` in :mod:`.oauth_tokens`; with
    ``preset`` (a pre-registered client) that client instead of a stored one."""

    def __init__(
        self, *, home: Path, spec: ServerSpec, preset: OAuthClientInformationFull | None = None
    ) -> None:
        self.home = home
        self.name = spec.name
        self.url = spec.url
        self.preset = preset

    # The store may be the system keyring, whose calls can block (a D-Bus round trip, a
    # prompt to unlock it): they run in a worker thread so the event loop goes on.

    async def entry(self) -> dict[str, Any]:
        """The stored entry (plain data)."""
        return await anyio.to_thread.run_sync(load_entry, self.home, self.name, self.url)

    async def update(self, **fields: Any) -> None:
        """Set or (``None``) remove fields of the entry. Raises ``OSError``."""
        await anyio.to_thread.run_sync(
            lambda: update_entry(self.home, self.name, self.url, **fields)
        )

    async def get_tokens(self) -> OAuthToken | None:
        raw = (await self.entry()).get("tokens")
        try:
            return OAuthToken.model_validate(raw) if isinstance(raw, dict) else None
        except ValueError:
            log.warning("MCP server %s: the stored OAuth token is malformed; ignored", self.name)
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        await self.update(
            tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires_at
        )

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.preset is not None:
            return self.preset
        raw = (await self.entry()).get("client_info")
        try:
            return OAuthClientInformationFull.model_validate(raw) if isinstance(raw, dict) else None
        except ValueError:
            log.warning("MCP server %s: the stored OAuth client is malformed; ignored", self.name)
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self.preset is not None:  # the configured client: its secret is never written
            return
        await self.update(client_info=client_info.model_dump(mode="json", exclude_none=True))

    async def forget(self, *, client: bool) -> None:
        """Drop the tokens (and with ``client`` the registered client). Raises ``OSError``."""
        fields: dict[str, Any] = {"tokens": None, "expires_at": None}
        if client:
            fields.update(client_info=None, metadata=None)
        await self.update(**fields)


SDK_AUTH_LOGGER = "mcp.client.auth"
"""The SDK's OAuth loggers (``mcp.client.auth.*``)."""


class _NoTracebacks(logging.Filter):
    """Drops the traceback of the SDK's OAuth log records, keeping their message: on a token
    answer it cannot parse the SDK logs the parser's report (``logger.exception("Invalid
    refresh response")``), whose lines quote the answer's fields, tokens among them."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info or record.exc_text:
            record.exc_info, record.exc_text = None, None
            record.msg = f"{record.msg} (details left out: they may quote credentials)"
        return True


def _hide_sdk_tracebacks() -> None:
    """Install :class:`_NoTracebacks` on the SDK's OAuth loggers (once per process)."""
    for name in (SDK_AUTH_LOGGER, f"{SDK_AUTH_LOGGER}.oauth2", f"{SDK_AUTH_LOGGER}.utils"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _NoTracebacks) for f in logger.filters):
            logger.addFilter(_NoTracebacks())


class McpOAuth(OAuthClientProvider):
    """The SDK's provider with what :mod:`this module <lsp_agent.mcp.oauth>` adds: the stored
    expiry and metadata restored on first use, and (``interactive=False``) a 401 answered by one
    refresh, then :class:`NeedsLoginError`."""

    def __init__(
        self,
        *,
        storage: CredentialStorage,
        interactive: bool,
        on_needs_login: Callable[[], None] = lambda: None,
        **kwargs: Any,
    ) -> None:
        super().__init__(storage=storage, **kwargs)
        _hide_sdk_tracebacks()
        self.file = storage
        self.interactive = interactive
        self.on_needs_login = on_needs_login

    async def _initialize(self) -> None:
        await super()._initialize()
        entry = await self.file.entry()
        expires_at = entry.get("expires_at")
        if isinstance(expires_at, int | float) and self.context.current_tokens is not None:
            self.context.token_expiry_time = float(expires_at)
        metadata = entry.get("metadata")
        if isinstance(metadata, dict) and self.context.oauth_metadata is None:
            with contextlib.suppress(ValueError):
                # The token endpoint of the server that issued the token, for refreshing it.
                self.context.oauth_metadata = OAuthMetadata.model_validate(metadata)

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        refreshed = False
        while True:
            flow = super()._auth_flow(request)
            try:
                outgoing = await flow.__anext__()
                while True:
                    response = yield outgoing
                    if not self.interactive and outgoing is request and response.status_code == 401:
                        break
                    outgoing = await flow.asend(response)
            except StopAsyncIteration:
                return
            finally:
                await flow.aclose()
            if refreshed or not self.context.can_refresh_token():
                self.on_needs_login()
                raise NeedsLoginError("the server asks for a login (HTTP 401)")
            refreshed = True
            self.context.token_expiry_time = 1.0  # refused: expired (0 would mean "never")


class _PinnedScope(OAuthClientMetadata):
    """Client metadata whose ``scope`` stays the configured ``oauth.scopes``: the SDK otherwise
    replaces it with the scopes of the server's challenge or metadata before authorising."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name != "scope":
            super().__setattr__(name, value)


def client_metadata(redirect_uri: str, scopes: str | None = None) -> OAuthClientMetadata:
    """What lsp-agent registers as (a public client: PKCE, no secret); ``scopes`` (a
    space-separated string) pins the scopes asked for."""
    fields: dict[str, Any] = {
        "client_name": "lsp-agent",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    if scopes:
        return _PinnedScope(**fields, scope=scopes)
    return OAuthClientMetadata(**fields)


def redirect_host(spec: ServerSpec) -> str:
    """The host of the redirect URI: ``localhost`` for a pre-registered client (as Claude Code
    registers it), the loopback address otherwise (RFC 8252 §7.3)."""
    return "localhost" if spec.client_id is not None else "127.0.0.1"


def preset_client(spec: ServerSpec, redirect_uri: str) -> OAuthClientInformationFull | None:
    """The pre-registered client of ``spec`` (``oauth.clientId``), or ``None``: confidential
    (HTTP Basic) with ``oauth.clientSecret``, public (PKCE only) without."""
    if spec.client_id is None:
        return None
    return OAuthClientInformationFull(
        client_id=spec.client_id,
        client_secret=spec.client_secret,
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_basic" if spec.client_secret else "none",
        scope=spec.scopes,
    )


def connect_auth(*, spec: ServerSpec, home: Path, on_needs_login: Callable[[], None]) -> McpOAuth:
    """The auth of a connection to ``spec`` (see the module docstring): stored tokens,
    refreshed; ``on_needs_login()`` then :class:`NeedsLoginError` when a login is needed."""

    async def refuse(url: str) -> None:  # a 403 scope step-up: also the user's to start
        on_needs_login()
        raise NeedsLoginError("the server asks for a login")

    async def no_callback() -> AuthorizationCodeResult:
        raise NeedsLoginError("the server asks for a login")

    redirect_uri = f"http://{redirect_host(spec)}:{spec.callback_port or 0}{CALLBACK_PATH}"
    return McpOAuth(
        server_url=spec.url,
        client_metadata=client_metadata(redirect_uri, spec.scopes),
        storage=CredentialStorage(home=home, spec=spec, preset=preset_client(spec, redirect_uri)),
        interactive=False,
        on_needs_login=on_needs_login,
        redirect_handler=refuse,
        callback_handler=no_callback,
    )


class LoopbackCallback:
    """A one-shot HTTP server on 127.0.0.1 that receives the authorisation redirect.

    :meth:`expect` names the ``state`` the authorisation URL carried; the first request to
    :data:`CALLBACK_PATH` ends the wait: with the code when its ``state`` matches, with a
    :class:`LoginError` otherwise (a wrong ``state``, an ``error`` from the server). Other
    paths get 404 and change nothing.
    """

    def __init__(self, *, host: str = "127.0.0.1") -> None:
        self.host = host
        self._server: asyncio.Server | None = None
        self._server6: asyncio.Server | None = None
        self._state: str | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] = (
            asyncio.get_running_loop().create_future()
        )
        self.port = 0

    @property
    def redirect_uri(self) -> str:
        return f"http://{self.host}:{self.port}{CALLBACK_PATH}"

    async def start(self, port: int = 0) -> None:
        """Listen on 127.0.0.1:``port`` (0: an ephemeral port), and for a ``localhost``
        redirect on [::1] at the same port too when it can (a browser may resolve
        ``localhost`` to either). Raises ``OSError``."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", port)
        self.port = int(self._server.sockets[0].getsockname()[1])
        if self.host == "localhost":
            with contextlib.suppress(OSError):
                self._server6 = await asyncio.start_server(self._serve, "::1", self.port)

    def expect(self, state: str) -> None:
        self._state = state

    async def wait(self) -> AuthorizationCodeResult:
        """The code and state of an accepted redirect. Raises :class:`LoginError`."""
        return await asyncio.shield(self._result)

    async def aclose(self) -> None:
        for server in (self._server, self._server6):
            if server is not None:
                server.close()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(server.wait_closed(), 2)
        if not self._result.done():
            self._result.cancel()

    def _finish(self, params: dict[str, str]) -> tuple[int, str]:
        if self._result.done():
            return 409, "This login has already ended; you can close this tab."
        if "error" in params:
            why = params["error"] + (
                f" ({params['error_description']})" if params.get("error_description") else ""
            )
            self._result.set_exception(LoginError(f"the authorisation server refused: {why}"))
            return 400, f"Login refused by the server: {why}. You can close this tab."
        if self._state is None or params.get("state") != self._state:
            self._result.set_exception(
                LoginError(
                    "the browser came back with a wrong state (not the login lsp-agent "
                    "started); the login was abandoned — try again"
                )
            )
            return 400, "This is not the login lsp-agent started (wrong state); it was refused."
        if not params.get("code"):
            self._result.set_exception(LoginError("the redirect carried no authorisation code"))
            return 400, "No authorisation code came back; the login failed."
        self._result.set_result(
            AuthorizationCodeResult(
                code=params["code"], state=params["state"], iss=params.get("iss")
            )
        )
        return 200, "Logged in: lsp-agent has the authorisation. You can close this tab."

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        status, text = 400, "Bad request."
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            method, target, _version = line.split(" ", 2)
            parts = urlsplit(target)
            if method != "GET" or parts.path != CALLBACK_PATH:
                status, text = 404, "Not found."
            else:
                query = parse_qs(parts.query)
                status, text = self._finish({k: v[0] for k, v in query.items() if v})
        except (asyncio.LimitOverrunError, asyncio.IncompleteReadError, TimeoutError, ValueError):
            pass
        body = f"<!doctype html><title>lsp-agent</title><p>{text}</p>".encode()
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 409: "Conflict"}[status]
        with contextlib.suppress(OSError):
            writer.write(
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
            writer.close()


LOGIN_PROBE = {"jsonrpc": "2.0", "id": 0, "method": "ping"}
"""The request sent to start the server's OAuth challenge: any request the server refuses
with 401 does; what it answers once authorised does not matter."""


async def login(
    *,
    spec: ServerSpec,
    home: Path,
    open_url: OpenUrl,
    callback_port: int = 0,
    timeout_s: float = LOGIN_TIMEOUT_S,
) -> None:
    """Log in to HTTP server ``spec`` and store its tokens (see the module docstring).

    Raises :class:`LoginError` naming what failed: the server does not ask for OAuth, its
    metadata or registration is unusable, the user's browser came back with a wrong ``state``
    or an error, nothing came back within ``timeout_s`` seconds, or the token request failed.
    """
    callback = LoopbackCallback(host=redirect_host(spec))
    try:
        await callback.start(callback_port)
    except OSError as exc:
        raise LoginError(
            f"cannot listen on 127.0.0.1:{callback_port} for the redirect: {exc}"
        ) from None
    preset = preset_client(spec, callback.redirect_uri)
    storage = CredentialStorage(home=home, spec=spec, preset=preset)
    try:
        known = await storage.get_client_info()
        registered = known is not None and callback.redirect_uri in {
            str(u) for u in known.redirect_uris or ()
        }
        # A client registered for another port is useless; with a preset, a stored one is.
        await storage.forget(client=preset is not None or not registered)

        async def redirect(url: str) -> None:
            state = parse_qs(urlsplit(url).query).get("state", [""])[0]
            callback.expect(state)
            log.info("MCP server %s: waiting for the browser's login", spec.name)
            await open_url(url)

        provider = McpOAuth(
            server_url=spec.url,
            client_metadata=client_metadata(callback.redirect_uri, spec.scopes),
            storage=storage,
            interactive=True,
            redirect_handler=redirect,
            callback_handler=callback.wait,
        )
        headers = {k: v for k, v in spec.headers if k.lower() != "authorization"}
        headers["Accept"] = "application/json, text/event-stream"
        # Streamable HTTP: a POST. SSE: the GET that opens the event stream, left at once (the
        # headers say whether it was authorised; the stream is never read).
        method, body = ("POST", LOGIN_PROBE) if spec.transport == "http" else ("GET", None)
        async with httpx2.AsyncClient(auth=provider, headers=headers, timeout=30.0) as client:
            with anyio.fail_after(timeout_s):
                async with client.stream(method, spec.url, json=body) as response:
                    status = response.status_code
        tokens = await storage.get_tokens()
        if provider.context.current_tokens is None or tokens is None:
            raise LoginError(f"the server did not ask for an OAuth login (HTTP {status})")
        if provider.context.oauth_metadata is not None:
            await storage.update(metadata=provider.context.oauth_metadata.model_dump(mode="json"))
        log.info("MCP server %s: logged in", spec.name)
    except LoginError:
        raise
    except TimeoutError:
        raise LoginError(f"no login came back from the browser within {timeout_s:g} s") from None
    except OSError as exc:
        raise LoginError(f"the login failed: {exc}") from None
    except Exception as exc:
        raise LoginError(f"the login failed: {type(exc).__name__}: {_reason(exc)}") from None
    finally:
        await callback.aclose()


MAX_REASON_CHARS = 300
"""Longest reason from the SDK that a :class:`LoginError` repeats (characters)."""


def _reason(exc: BaseException) -> str:
    """The first line of ``exc``'s message, cut to :data:`MAX_REASON_CHARS`. The SDK's
    messages quote what the server answered: a refused token request its whole body (any
    size), a malformed token answer the parser's report, whose later lines quote the answer's
    fields (the tokens among them)."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return first if len(first) <= MAX_REASON_CHARS else first[: MAX_REASON_CHARS - 1] + "…"
