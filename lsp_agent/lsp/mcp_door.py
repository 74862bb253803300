"""The LSP door's side of MCP: one :class:`~lsp_agent.mcp.service.McpService` per project
directory, shared by every session there, visible and controllable from the editor.

* Services are created with the settings stores (workspace folders at ``initialized``, other
  directories on first use) from the same trust and settings files; the servers they enable
  start at once, in the background. The ``mcp`` SDK is imported only when some server is
  enabled.
* Problems of ``.mcp.json`` and ``~/.claude.json`` are published as diagnostics positioned in
  those files, like settings problems.
* ``lspAgent/mcp/didChange {cwd, servers}`` is sent after every change of a server's state or
  of the configuration; ``lspAgent/mcp/list {cwd?}`` answers the same list;
  ``lspAgent/mcp/approve {name, approved, cwd?}`` records the user's answer about a project
  server (pinned to its current definition); ``lspAgent/mcp/setEnabled {name, enabled,
  cwd?}`` turns a server of any scope on or off for the project, persisted in the user's
  ``~/.claude.json``; ``lspAgent/mcp/reconnect {name, cwd?}`` restarts
  a server now; ``lspAgent/mcp/resources {query, cwd?}`` completes ``@server:uri`` mentions;
  ``lspAgent/mcp/login {name, cwd?}`` logs in to an HTTP server with OAuth
  (the authorisation URL is opened with ``window/showDocument {external: true}``; answered
  when the login ended) and ``lspAgent/mcp/logout {name, cwd?}`` forgets its tokens.
* Before each turn the configuration is read again, so an edited ``.mcp.json`` takes effect
  at the next prompt (changed servers restart, new approvals are asked for).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import uuid
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams

from lsp_agent.config.diagnostics import problems_to_diagnostics
from lsp_agent.lsp import methods
from lsp_agent.lsp.protocol import AgentProtocol
from lsp_agent.mcp.elicit_form import ask_form, form_problem
from lsp_agent.mcp.elicitation import question_for, url_consent
from lsp_agent.mcp.limits import limits_from_env
from lsp_agent.mcp.service import McpError, McpService
from lsp_agent.mcp.sources import McpSources

if TYPE_CHECKING:
    from lsp_agent.lsp.server import AgentLanguageServer

logger = logging.getLogger(__name__)

EDITOR_FIRST_TURN_WAIT_S = 5.0
"""In the editor a turn waits at most this long for servers still starting (seconds); their
tools join at the next turn."""


class McpDoor:
    """See the module docstring. Event-loop only (single writer)."""

    def __init__(self, *, server: AgentLanguageServer) -> None:
        self.server = server
        self.services: dict[Path, McpService] = {}
        self._published: dict[Path, set[str]] = {}
        self._starting: set[asyncio.Task[None]] = set()
        self.editor_servers: dict[str, Any] | None = server.options.mcp_servers
        """The editor's ``mcpServers`` (``initializationOptions.lspAgent.mcpServers``, then
        ``workspace/didChangeConfiguration`` ``settings.lspAgent.mcpServers``)."""
        self._shown: set[str] = set()

    def _sources(self, key: Path) -> McpSources:
        store = self.server.settings_door.store_for(key)
        return McpSources(
            cwd=key,
            home=store.loader.home,
            trusted=store.trusted,
            environ=dict(os.environ),
            settings_files={str(k): v for k, v in store.loader.files().items()},
            editor_servers=self.editor_servers,
        )

    def service_for(self, cwd: Path) -> McpService:
        """The service of project directory ``cwd`` (created and started on first use)."""
        key = cwd.resolve()
        service = self.services.get(key)
        if service is not None:
            return service
        limits = limits_from_env(os.environ)
        service = McpService(
            sources=self._sources(key),
            limits=limits.__class__(
                **{
                    **limits.__dict__,
                    "first_turn_wait_s": min(limits.first_turn_wait_s, EDITOR_FIRST_TURN_WAIT_S),
                }
            ),
            roots=self.server.workspace_roots,
            on_change=lambda s: self._changed(key, s),
            ask=self._ask,
            ask_url=self._ask_url,
        )
        self.services[key] = service
        self._publish(key, service)
        if service.plan.enabled():
            try:
                task = asyncio.get_running_loop().create_task(self._start(service))
            except RuntimeError:
                logger.debug("no event loop: MCP servers of %s start with the first turn", key)
            else:
                self._starting.add(task)
                task.add_done_callback(self._starting.discard)
        return service

    async def _start(self, service: McpService) -> None:
        """Import the SDK off the event loop (it takes a while), then start the servers."""
        try:
            await asyncio.to_thread(importlib.import_module, "lsp_agent.mcp.pool")
            service.start()
        except Exception:
            logger.exception("starting the MCP servers of %s failed", service.sources.cwd)

    def open_folders(self, folders: list[Path]) -> None:
        """Create the services of the workspace folders (at ``initialized``)."""
        for folder in folders:
            if folder.is_dir():
                self.service_for(folder)

    def _key(self, raw: Any) -> Path:
        cwd = raw.get("cwd") if isinstance(raw, dict) else None
        if cwd is not None and not isinstance(cwd, str):
            raise JsonRpcInvalidParams("cwd must be a string (an absolute path)")
        if cwd:
            path = Path(cwd)
            if not path.is_absolute():
                raise JsonRpcInvalidParams("cwd must be an absolute path")
            return path.resolve()
        roots = self.server.workspace_roots()
        if not roots:
            raise JsonRpcInvalidParams("no cwd given and the workspace has no folder")
        return roots[0].resolve()

    def _name(self, raw: Any) -> str:
        name = raw.get("name") if isinstance(raw, dict) else None
        if not isinstance(name, str) or not name:
            raise JsonRpcInvalidParams("name must be the MCP server's name (a string)")
        return name

    # ---- requests -------------------------------------------------------------------------------

    async def list(self, raw: Any) -> dict[str, Any]:
        """``lspAgent/mcp/list``: the servers of ``cwd`` (default: the first folder)."""
        key = self._key(raw)
        service = self.service_for(key)
        await service.refresh()
        return {"cwd": str(key), "servers": service.statuses()}

    async def approve(self, raw: Any) -> dict[str, Any]:
        """``lspAgent/mcp/approve``: record the user's answer and apply it."""
        key = self._key(raw)
        name = self._name(raw)
        approved = raw.get("approved")
        if not isinstance(approved, bool):
            raise JsonRpcInvalidParams("approved must be true or false")
        service = self.service_for(key)
        try:
            await service.approve(name, approved=approved)
        except McpError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        except OSError as exc:
            raise JsonRpcInvalidParams(f"the answer could not be saved: {exc}") from None
        return {"cwd": str(key), "servers": service.statuses()}

    async def set_enabled(self, raw: Any) -> dict[str, Any]:
        """``lspAgent/mcp/setEnabled``: turn a server of any scope on or off for the project,
        persisted (:meth:`McpService.set_enabled`); every session of the project sees it."""
        key = self._key(raw)
        name = self._name(raw)
        enabled = raw.get("enabled")
        if not isinstance(enabled, bool):
            raise JsonRpcInvalidParams("enabled must be true or false")
        service = self.service_for(key)
        try:
            await service.set_enabled(name, enabled=enabled)
        except McpError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        return {"cwd": str(key), "servers": service.statuses()}

    def reconnect(self, raw: Any) -> dict[str, Any]:
        """``lspAgent/mcp/reconnect``: restart a server now."""
        key = self._key(raw)
        service = self.service_for(key)
        try:
            service.reconnect(self._name(raw))
        except McpError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        return {"cwd": str(key), "servers": service.statuses()}

    async def resources(self, raw: Any) -> dict[str, Any]:
        """``lspAgent/mcp/resources``: resources matching the ``@server:uri`` mention being
        typed (:mod:`lsp_agent.mcp.resource_completion`)."""
        key = self._key(raw)
        query = raw.get("query") if isinstance(raw, dict) else None
        if not isinstance(query, str):
            raise JsonRpcInvalidParams("query must be the text after the @ (a string)")
        items = await self.service_for(key).complete_resources(query)
        return {"cwd": str(key), "items": items}

    async def login(self, raw: Any) -> dict[str, Any]:
        """``lspAgent/mcp/login``: log in to an HTTP server with OAuth; the answer comes when
        the browser came back (or the login failed: an error naming why)."""
        key = self._key(raw)
        name = self._name(raw)
        service = self.service_for(key)
        from lsp_agent.mcp.oauth import LOGIN_TIMEOUT_S

        try:
            await service.login(name, self._open_url, timeout_s=LOGIN_TIMEOUT_S)
        except McpError as exc:
            raise JsonRpcInternalError(str(exc)) from None
        return {"cwd": str(key), "servers": service.statuses()}

    async def logout(self, raw: Any) -> dict[str, Any]:
        """``lspAgent/mcp/logout``: revoke (where the server offers it) and forget a server's
        OAuth tokens (it then needs a login)."""
        key = self._key(raw)
        service = self.service_for(key)
        try:
            await service.logout(self._name(raw))
        except McpError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        return {"cwd": str(key), "servers": service.statuses()}

    async def _open_url(self, url: str, *, why: str = "to log in to the MCP server") -> None:
        """Open ``url`` in the user's browser (``window/showDocument`` with ``external``);
        when the editor cannot, show it in a message to copy, saying ``why``."""
        try:
            shown = await self.server.window_show_document_async(
                types.ShowDocumentParams(uri=url, external=True)
            )
            opened = bool(shown and shown.success)
        except Exception:
            logger.info("window/showDocument failed; showing the login URL instead", exc_info=True)
            opened = False
        if not opened:
            self.server.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Info,
                    message=f"lsp-agent: open this URL {why}: {url}",
                )
            )

    async def _ask(
        self, server: str, message: str, schema: dict[str, Any]
    ) -> tuple[str, dict[str, Any] | None]:
        """A server's elicitation: a form (``lspAgent/mcp/elicit``) when the client declared
        ``mcpElicitation``, else buttons (``window/showMessageRequest``) when they can answer
        it, else declined."""
        if self.server.options.client_capabilities.mcp_elicitation:
            problem = form_problem(schema)
            if problem is None:
                return await ask_form(message, schema, form=partial(self._form, server))
            logger.info("MCP server %s asked for a form; declined (%s)", server, problem)
            return "decline", None
        question = question_for(schema)
        if question is None:
            logger.info("MCP server %s asked for a form buttons cannot answer; declined", server)
            return "decline", None
        chosen = await self.server.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Info,
                message=f"MCP server {server!r} asks: {message}",
                actions=[types.MessageActionItem(title=c) for c in question.choices],
            )
        )
        return question.answer(chosen.title if chosen is not None else None)

    async def _ask_url(self, server: str, message: str, url: str) -> str:
        """A URL-mode elicitation: consent naming the host (``window/showMessageRequest``),
        then the page opened in the browser (``window/showDocument`` with ``external``; the URL
        in a message when the editor cannot). ``accept`` once opened, ``decline`` for the
        Decline button, ``cancel`` when closed without one."""
        consent = url_consent(server, message, url)
        if consent is None:
            return "decline"
        question, open_label = consent
        chosen = await self.server.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Info,
                message=question,
                actions=[types.MessageActionItem(title=t) for t in (open_label, "Decline")],
            )
        )
        if chosen is None:
            return "cancel"
        if chosen.title != open_label:
            return "decline"
        await self._open_url(url, why=f"to answer MCP server {server!r}")
        return "accept"

    async def _form(
        self, server: str, message: str, schema: dict[str, Any], problems: tuple[str, ...]
    ) -> tuple[str, Any]:
        """One ``lspAgent/mcp/elicit`` round trip: the editor's ``(action, content)``; an
        error, a malformed answer or no answer within the permission timeout is ``cancel``."""
        properties = schema.get("properties")
        params: dict[str, Any] = {
            "server": server,
            "message": message,
            "requestedSchema": schema,
            # The fields in the server's order: a client that decodes JSON objects into
            # unordered tables (Neovim's Lua) asks them in this order.
            "propertyOrder": list(properties) if isinstance(properties, dict) else [],
        }
        if problems:
            params["problems"] = list(problems)
        protocol = self.server.protocol
        assert isinstance(protocol, AgentProtocol)
        msg_id = f"lspAgent-{uuid.uuid4().hex}"
        future = asyncio.wrap_future(
            protocol.send_request(methods.MCP_ELICIT, params, msg_id=msg_id)
        )
        timeout = self.server.options.permission_timeout_ms / 1000
        try:
            raw = await asyncio.wait_for(asyncio.shield(future), timeout=timeout)
        except (TimeoutError, asyncio.CancelledError) as exc:
            protocol.abandon_request(msg_id)
            if isinstance(exc, asyncio.CancelledError):
                raise
            logger.info("no answer to MCP server %s's form within %g s", server, timeout)
            return "cancel", None
        except JsonRpcException as exc:
            logger.warning("the editor could not show MCP server %s's form: %s", server, exc)
            return "cancel", None
        if isinstance(raw, dict):
            return str(raw.get("action", "cancel")), raw.get("content")
        return str(getattr(raw, "action", "cancel")), getattr(raw, "content", None)

    def did_change_configuration(self, raw: Any) -> None:
        """``workspace/didChangeConfiguration``: a change of ``settings.lspAgent.trusted``
        reaches every project's servers at once (an untrusted workspace's ``.mcp.json``
        servers stop; a trusted one's ask for approval); a new
        ``settings.lspAgent.mcpServers`` (an object, or ``null`` for none) is adopted by every
        project at once (servers it adds
        start, removed ones stop, changed ones restart); without the key nothing changes; a
        value that is not an object is logged and ignored."""
        ours = raw.get("lspAgent") if isinstance(raw, dict) else None
        if not isinstance(ours, dict):
            return
        if type(ours.get("trusted")) is bool:
            # The settings door took the new trust first: .mcp.json servers follow it now.
            self._reload_all()
        if "mcpServers" not in ours:
            return
        value = ours["mcpServers"]
        if value is not None and not isinstance(value, dict):
            logger.warning(
                "ignoring settings.lspAgent.mcpServers: it must be an object of server "
                "definitions (as in .mcp.json), got %s",
                type(value).__name__,
            )
            return
        if value == self.editor_servers:
            return
        self.editor_servers = value
        self._reload_all()

    def _reload_all(self) -> None:
        """Every project's service reads its sources again (in the background)."""
        for key, service in self.services.items():
            task = asyncio.get_running_loop().create_task(self._reload(key, service))
            self._starting.add(task)
            task.add_done_callback(self._starting.discard)

    async def _reload(self, key: Path, service: McpService) -> None:
        try:
            if service.pool is None and self.editor_servers:
                await asyncio.to_thread(importlib.import_module, "lsp_agent.mcp.pool")
            await service.reload(self._sources(key))
        except Exception:
            logger.exception("applying the editor's mcpServers to %s failed", key)

    async def shutdown(self) -> None:
        """Stop every server of every project (bounded)."""
        services = list(self.services.values())
        self.services.clear()
        await asyncio.gather(*(s.aclose() for s in services), return_exceptions=True)

    # ---- showing state --------------------------------------------------------------------------

    def _changed(self, key: Path, service: McpService) -> None:
        self._publish(key, service)
        self.server.protocol.notify(
            methods.MCP_DID_CHANGE, {"cwd": str(key), "servers": service.statuses()}
        )

    def _publish(self, key: Path, service: McpService) -> None:
        for problem in service.problems:
            if problem.path is None and problem.message not in self._shown:
                # The editor's mcpServers has no file to put a diagnostic in.
                self._shown.add(problem.message)
                self.server.window_show_message(
                    types.ShowMessageParams(
                        type=types.MessageType.Warning,
                        message=f"lsp-agent: mcpServers in the editor's settings: "
                        f"{problem.message}",
                    )
                )
        encoding = self.server.settings_door.encoding
        by_uri = problems_to_diagnostics(
            service.problems, files=service.plan.files, encoding=encoding
        )
        before = self._published.get(key, set())
        now = {uri for uri, items in by_uri.items() if items}
        for uri, items in by_uri.items():
            if items or uri in before:
                self.server.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(
                        uri=uri,
                        diagnostics=[_diagnostic(item) for item in items],
                    )
                )
        self._published[key] = now


def _diagnostic(item: dict[str, Any]) -> types.Diagnostic:
    start, end = item["range"]["start"], item["range"]["end"]
    return types.Diagnostic(
        range=types.Range(
            start=types.Position(line=start["line"], character=start["character"]),
            end=types.Position(line=end["line"], character=end["character"]),
        ),
        severity=types.DiagnosticSeverity(item["severity"]),
        source="lsp-agent (MCP)",
        message=item["message"],
    )
