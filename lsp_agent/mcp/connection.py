"""One MCP server: start it, keep it up, list its tools, call them.

A :class:`ServerConnection` runs a supervisor task that owns the SDK's ``mcp.Client`` (the
client's context must be entered and left in one task): connect within the start-up timeout,
list the tools, then wait until the connection is lost, a refresh is due (``list_changed``,
or the 2026 ``subscriptions/listen`` stream) or the pool stops. A connection that fails or is
lost is restarted with exponential backoff (:meth:`McpLimits.backoff`) up to
``restart_attempts`` times, then stays ``failed`` with the reason and the server's last stderr
lines until :meth:`reconnect`. A failed tool-list refresh keeps the old list.

Calls run in the caller's task, bounded by ``tool_timeout_s`` and cancelled with it; a call
whose connection dies returns an error naming the server and what its stderr said.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from lsp_agent import __version__
from lsp_agent.mcp import protocol_era as era
from lsp_agent.mcp.config import ServerSpec
from lsp_agent.mcp.elicitation import AskFn, AskUrlFn, url_host
from lsp_agent.mcp.errors import describe_error
from lsp_agent.mcp.limits import McpLimits
from lsp_agent.mcp.listing import list_prompts, list_tools
from lsp_agent.mcp.login_path import LoginPath
from lsp_agent.mcp.oauth import NeedsLoginError, OpenUrl, connect_auth, login, uses_oauth
from lsp_agent.mcp.oauth_logout import logout as oauth_logout
from lsp_agent.mcp.transport import Opened, StderrTail, open_transport

log = logging.getLogger(__name__)

FAILED_LOG = "MCP server %s failed: %s"
"""The log message of each failed start or lost connection (arguments: the server's name and
the error, as the status shows it); a door that shows the status itself filters on it."""

T = TypeVar("T")

State = Literal["idle", "starting", "ready", "failed", "needs_login", "stopped"]

ProgressFn = Callable[[float, float | None, str | None], None]
"""Receives ``(progress, total, message)`` from a running call."""


class CallFailedError(Exception):
    """A call did not produce a result (server not ready, timed out, connection lost); the
    message is written for the model and the user."""


@dataclass(frozen=True, kw_only=True)
class ServerStatus:
    """What a client shows about one server (plain data)."""

    name: str
    scope: str
    transport: str
    state: str
    error: str | None = None
    tools: int = 0
    description: str = ""
    logged_in: bool = False
    """An OAuth token is held for the server (it can be logged out of)."""


class ServerConnection:
    """See the module docstring. ``project`` is the project directory (absolute); ``roots``
    returns the workspace folders sent to servers that ask; ``on_change`` is called (on the
    event loop) after every state or tool-list change."""

    def __init__(
        self,
        *,
        spec: ServerSpec,
        limits: McpLimits,
        project: Path,
        environ: Mapping[str, str],
        roots: Callable[[], Sequence[Path]] = tuple,
        on_change: Callable[[ServerConnection], None] = lambda _c: None,
        login_path: LoginPath | None = None,
        ask: AskFn | None = None,
        ask_url: AskUrlFn | None = None,
        home: Path | None = None,
    ) -> None:
        self.spec = spec
        self.ask_url = ask_url
        self.home = home
        """The user's home directory, for OAuth credentials (``None``: no OAuth)."""
        self.ask = ask
        self.login_path = login_path
        self.limits = limits
        self.project = project
        self.environ = environ
        self.roots = roots
        self.on_change = on_change
        self.state: State = "idle"
        self.error: str | None = None
        self.tools: tuple[types.Tool, ...] = ()
        self.instructions: str | None = None
        self.prompts: tuple[types.Prompt, ...] = ()
        self.has_resources = False
        self.stderr = StderrTail(spec.name)
        self.garbage_lines = 0
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()
        self._wake = asyncio.Event()
        self._refresh_due = False
        self._prompts_due = False
        self._stop = False
        self._fresh = False
        self._lost: asyncio.Event | None = None
        self._login_due = asyncio.Event()
        self._logging_in = False
        self._auth: Any = None  # the OAuth provider of the current connection, if any
        self._relist = era.Relist()

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        """Start the supervisor (idempotent; needs a running event loop)."""
        if self._task is None or self._task.done():
            self._stop = False
            self._settled.clear()
            self._task = asyncio.ensure_future(self._supervise())

    def reconnect(self) -> None:
        """Restart now with a fresh restart budget (after a final failure, or on request)."""
        if self._task is not None and not self._task.done():
            self._lost_now()
            self._wake.set()
            self._fresh = True
            return
        self.start()

    async def wait_settled(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds until the server is ready or has failed once."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._settled.wait(), timeout)

    async def aclose(self) -> None:
        """Stop the server (bounded: the SDK's shutdown escalates to kill within seconds)."""
        self._stop = True
        self._wake.set()
        task, self._task = self._task, None
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), 10)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
            except Exception:
                log.debug("MCP server %s: supervisor failed", self.spec.name, exc_info=True)
        self._set("stopped")

    async def login(self, open_url: OpenUrl, *, timeout_s: float) -> None:
        """Log in to this HTTP server with OAuth (:func:`.oauth.login`: ``open_url`` shows the
        authorisation URL; bounded by ``timeout_s`` seconds), then reconnect with the new
        token. One login at a time: a second one while the first waits for the browser fails.
        Raises :class:`.oauth.LoginError` naming what failed."""
        from lsp_agent.mcp.oauth import LoginError

        if self.home is None or not uses_oauth(self.spec):
            raise LoginError(
                f"MCP server {self.spec.name!r} does not use OAuth (a stdio server, or its "
                "headers set Authorization)"
            )
        if self._logging_in:
            raise LoginError("a login to this server is already waiting for the browser")
        self._logging_in = True
        try:
            await login(
                spec=self.spec,
                home=self.home,
                open_url=open_url,
                callback_port=self.spec.callback_port or 0,
                timeout_s=timeout_s,
            )
        finally:
            self._logging_in = False
        self.reconnect()

    async def logout(self) -> bool:
        """Revoke this server's OAuth tokens where it offers that (:mod:`.oauth_logout`; best
        effort, bounded), forget its credentials and reconnect (it then needs a login).
        Returns whether the server revoked the tokens. Raises ``OSError`` if the credentials
        cannot be removed."""
        revoked = False
        if self.home is not None:
            revoked = await oauth_logout(spec=self.spec, home=self.home)
        self._auth = None
        self.reconnect()
        return revoked

    def status(self) -> ServerStatus:
        """The current status (plain data)."""
        return ServerStatus(
            name=self.spec.name,
            scope=self.spec.scope,
            transport=self.spec.transport,
            state=self.state,
            error=self.error,
            tools=len(self.tools),
            description=self.spec.describe(),
            logged_in=self.state != "needs_login"
            and self._auth is not None
            and self._auth.context.current_tokens is not None,
        )

    def _set(self, state: State, error: str | None = None) -> None:
        self.state = state
        self.error = error
        if state in ("ready", "failed", "needs_login", "stopped"):
            self._settled.set()
        try:
            self.on_change(self)
        except Exception:
            log.exception("MCP status listener failed")

    def _lost_now(self) -> None:
        """A call saw the connection die: stop offering the server at once (the supervisor
        restarts it)."""
        if self._lost is not None:
            self._lost.set()
        if self.state == "ready":
            self._client = None
            self._set("failed", "the connection was lost; restarting")

    # -- the supervisor ---------------------------------------------------------------------

    async def _supervise(self) -> None:
        attempt = 0
        while not self._stop:
            self._set("starting")
            self.stderr.restarted()
            started = time.monotonic()
            try:
                await self._session()
                error = "the connection closed"
            except Exception as exc:
                error = describe_error(exc)
            finally:
                self._client = None
                self.tools = ()
                self.prompts = ()
            if self._stop:
                break
            if self._login_due.is_set():
                log.info("MCP server %s needs a login", self.spec.name)
                self._set(
                    "needs_login",
                    "the server asks for an OAuth login; log in with `lsp-agent mcp "
                    f"login {self.spec.name}` or from the editor (VS Code: Log in in the MCP "
                    f"section; Neovim: :AgentMcp login {self.spec.name})",
                )
                await self._sleep(None)  # until login(), reconnect() or aclose()
                attempt = 0
                continue
            if time.monotonic() - started >= self.limits.stable_after_s or self._fresh:
                attempt = 0
                self._fresh = False
            attempt += 1
            tail = self.stderr.text()
            message = error + (f"\nstderr:\n{tail}" if tail else "")
            log.error(FAILED_LOG, self.spec.name, message)
            if attempt > self.limits.restart_attempts:
                self._set("failed", message)
                await self._sleep(None)  # until reconnect() or aclose()
                attempt = 0
                continue
            self._set("failed", message)
            await self._sleep(self.limits.backoff(attempt))
        self.tools = ()

    async def _sleep(self, seconds: float | None) -> None:
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)

    async def _session(self) -> None:
        """One connection, from connect to loss (raises on failure or start-up timeout).

        The SDK's client lives in a task of its own: anyio scopes must be left in the task and
        order they were entered, so the start-up timeout cancels that task rather than
        wrapping the connect in a scope of ours.
        """
        ready = asyncio.Event()
        self._login_due.clear()
        task = asyncio.ensure_future(self._run_client(ready))
        waiter = asyncio.ensure_future(ready.wait())
        login_wait = asyncio.ensure_future(self._login_due.wait())
        try:
            done, _ = await asyncio.wait(
                {task, waiter, login_wait},
                timeout=self.limits.startup_timeout_s,
                return_when=asyncio.FIRST_COMPLETED,
            )
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            waiter.cancel()
            login_wait.cancel()
        if self._login_due.is_set() and not ready.is_set():
            # The SDK's transport only logs a failed request: end the wait for its answer.
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            raise NeedsLoginError("the server asks for a login")
        if not done:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            raise TimeoutError(
                f"no answer within {self.limits.startup_timeout_s:g} s of starting (MCP_TIMEOUT)"
            )
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            raise

    async def _run_client(self, ready: asyncio.Event) -> None:
        try:
            await self._run_client_in(ready, mode=era.HANDSHAKE_MODE)
        except Exception as exc:
            if ready.is_set() or not era.refuses_handshake(exc):
                raise
            log.info(
                "MCP server %s refuses the handshake; trying the 2026 protocol", self.spec.name
            )
            await self._run_client_in(ready, mode=era.FALLBACK_MODE)

    async def _run_client_in(self, ready: asyncio.Event, *, mode: str) -> None:
        lost = asyncio.Event()
        self._lost = lost

        def needs_login() -> None:
            self._login_due.set()
            lost.set()

        auth = None
        if self.home is not None and uses_oauth(self.spec):
            auth = connect_auth(spec=self.spec, home=self.home, on_needs_login=needs_login)
        self._auth = auth

        @contextlib.asynccontextmanager
        async def transport() -> AsyncIterator[tuple[Any, Any]]:
            async with open_transport(
                self.spec,
                project=self.project,
                environ=self.environ,
                tail=self.stderr,
                login_path=self.login_path,
                auth=auth,
            ) as opened:
                watch = asyncio.ensure_future(_forward(opened, lost))
                try:
                    yield opened.read, opened.write
                finally:
                    watch.cancel()

        client = Client(
            transport(),
            message_handler=self._on_message,
            logging_callback=self._on_log,
            list_roots_callback=self._list_roots,
            elicitation_callback=self._elicit,
            mode=mode,
            client_info=types.Implementation(name="lsp-agent", version=__version__),
            cache=None,
        )
        async with client:
            tools = await list_tools(client, server=self.spec.name)
            self._client = client
            self.tools = tools
            self.instructions = client.instructions
            capabilities = client.server_capabilities
            self.has_resources = capabilities.resources is not None
            if capabilities.prompts is not None:
                self.prompts = await list_prompts(
                    client, server=self.spec.name, timeout_s=self.limits.startup_timeout_s
                )
            listen = None
            if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                listen = asyncio.ensure_future(self._listen(client))
            self._relist = era.relist_after_calls(client.protocol_version, capabilities)
            ready.set()
            self._set("ready")
            log.info("MCP server %s ready: %d tools", self.spec.name, len(tools))
            try:
                await self._serve(client, lost)
            finally:
                self._client = None
                if listen is not None:
                    listen.cancel()
                    with contextlib.suppress(BaseException):
                        await listen

    async def _serve(self, client: Client, lost: asyncio.Event) -> None:
        last_refresh = 0.0
        while not self._stop and not lost.is_set():
            self._wake.clear()
            lost_wait = asyncio.ensure_future(lost.wait())
            wake_wait = asyncio.ensure_future(self._wake.wait())
            try:
                await asyncio.wait({lost_wait, wake_wait}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                lost_wait.cancel()
                wake_wait.cancel()
            if not (self._refresh_due or self._prompts_due) or self._stop or lost.is_set():
                continue
            pause = last_refresh + self.limits.refresh_interval_s - time.monotonic()
            if pause > 0:
                await asyncio.sleep(pause)
            last_refresh = time.monotonic()
            if self._prompts_due:
                self._prompts_due = False
                prompts = await list_prompts(
                    client, server=self.spec.name, timeout_s=self.limits.startup_timeout_s
                )
                if prompts != self.prompts:
                    self.prompts = prompts
                    self._set("ready")
            if self._refresh_due:
                self._refresh_due = False
                try:
                    with anyio.fail_after(self.limits.startup_timeout_s):
                        tools = await list_tools(client, server=self.spec.name)
                    if tools == self.tools:
                        continue
                    self.tools = tools
                    log.info(
                        "MCP server %s: tool list refreshed (%d)", self.spec.name, len(self.tools)
                    )
                    self._set("ready")
                except Exception as exc:
                    log.warning(
                        "MCP server %s: refreshing the tool list failed (%s); keeping the old list",
                        self.spec.name,
                        describe_error(exc),
                    )

    async def _listen(self, client: Client) -> None:
        """Hold a ``subscriptions/listen`` stream open (2026-07-28 servers): its events reach
        :meth:`_on_message` as list_changed notifications."""
        try:
            async with client.listen(
                tools_list_changed=True, prompts_list_changed=True
            ) as subscription:
                async for _event in subscription:
                    pass
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.info(
                "MCP server %s: no change notifications (%s)", self.spec.name, describe_error(exc)
            )

    # -- callbacks from the SDK ------------------------------------------------------------

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            self.garbage_lines += 1
            if self.garbage_lines <= 20:
                log.warning(
                    "MCP server %s sent something that is not MCP: %s",
                    self.spec.name,
                    str(message).splitlines()[0][:200],
                )
            return
        if isinstance(message, types.ToolListChangedNotification):
            self._refresh_due = True
            self._wake.set()
        elif isinstance(message, types.PromptListChangedNotification):
            self._prompts_due = True
            self._wake.set()

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        log.info(
            "MCP server %s log (%s): %s", self.spec.name, params.level, str(params.data)[:2000]
        )

    async def _list_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(
            roots=[types.Root(uri=p.as_uri(), name=p.name) for p in self.roots()]  # type: ignore[arg-type]
        )

    async def _elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        """Ask the user through ``ask`` (a form) or ``ask_url`` (a URL-mode request; see
        :mod:`.elicitation`); every request nobody can answer is declined."""
        name = self.spec.name
        if isinstance(params, types.ElicitRequestURLParams):
            return types.ElicitResult(action=await self._elicit_url(params))  # type: ignore[arg-type]
        if self.ask is None or not isinstance(params, types.ElicitRequestFormParams):
            log.info("MCP server %s asked the user for input; declined (nobody to ask)", name)
            return types.ElicitResult(action="decline")
        try:
            action, content = await self.ask(name, params.message, dict(params.requested_schema))
        except Exception:
            log.exception("asking the user for MCP server %s failed", name)
            action, content = "cancel", None
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    async def _elicit_url(self, params: types.ElicitRequestURLParams) -> str:
        """The action for a URL-mode request: ``ask_url``'s, or ``decline`` with a warning
        naming the host and the reason (``run -p`` prints it) when it cannot be asked."""
        name, host = self.spec.name, url_host(params.url)
        if self.ask_url is None or host is None:
            log.warning(
                "MCP server %s asked to open a page on %s (%r); declined: %s",
                name,
                host or "a non-web URL",
                params.message[:200],
                "not an http(s) URL" if host is None else "nobody can be asked here",
            )
            return "decline"
        try:
            return await self.ask_url(name, params.message, params.url)
        except Exception:
            log.exception("asking the user to open MCP server %s's page failed", name)
            return "cancel"

    # -- calls ------------------------------------------------------------------------------

    async def call(
        self, tool: str, arguments: dict[str, Any], *, report: ProgressFn | None = None
    ) -> types.CallToolResult:
        """Call ``tool``; raises :class:`CallFailedError` when no result came back (not
        ready, timed out after ``tool_timeout_s``, connection lost, protocol error)."""

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if report is not None:
                report(progress, total, message)

        try:
            return await self.request(
                tool,
                lambda client: client.call_tool(tool, arguments, progress_callback=on_progress),
            )
        finally:
            self._refresh_due = self._refresh_due or self._relist.tools
            self._prompts_due = self._prompts_due or self._relist.prompts
            self._wake.set()

    async def request(self, what: str, send: Callable[[Client], Awaitable[T]]) -> T:
        """Run ``send`` on the connected client (a call, a resource read, a prompt get),
        bounded by ``tool_timeout_s``. Raises :class:`CallFailedError` naming the server and
        ``what`` when no result came back (not ready, timed out, connection lost, protocol
        error)."""
        client = self._client
        name = self.spec.name
        if client is None or self.state != "ready":
            why = f": {self.error}" if self.error else ""
            raise CallFailedError(f"MCP server {name!r} is not connected ({self.state}){why}")
        try:
            with anyio.fail_after(self.limits.tool_timeout_s):
                return await send(client)
        except TimeoutError:
            raise CallFailedError(
                f"MCP server {name!r}: {what} did not finish within "
                f"{self.limits.tool_timeout_s:g} s (MCP_TOOL_TIMEOUT) and was cancelled"
            ) from None
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                self._lost_now()
                tail = self.stderr.text()
                raise CallFailedError(
                    f"MCP server {name!r} disconnected during the call"
                    + (f"; its last stderr lines:\n{tail}" if tail else "")
                ) from None
            raise CallFailedError(f"MCP server {name!r}: {exc.error.message}") from None
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            self._lost_now()
            raise CallFailedError(
                f"MCP server {name!r}: the connection failed ({describe_error(exc)})"
            ) from None


async def _forward(opened: Opened, lost: asyncio.Event) -> None:
    await opened.lost.wait()
    lost.set()
