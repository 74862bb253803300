"""The LSP door: a pygls language server that embeds the agent.

:func:`create_server` builds an :class:`AgentLanguageServer` with the standard document sync
(the buffers become the agent's overlay), the ``lspAgent/*`` methods of docs/protocol.md and
the agent code actions; :func:`serve` runs it over stdio or TCP.

Start-up: this module imports only pygls, lsprotocol and the door's light modules, so the
``initialize`` answer does not wait for the agent. Capabilities are declared statically
(:mod:`lsp_agent.lsp.methods`). The parts that load the core — the host, the diagnostics and
settings doors, the sessions, the code-action handlers — are created on first use; after
``initialized`` a background thread imports them, then the ``anthropic`` SDK
(:mod:`lsp_agent.lsp.warmup`). docs/performance.md has the figures.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from lsp_agent import __version__
from lsp_agent.lsp import methods
from lsp_agent.lsp.errors import invalid_params
from lsp_agent.lsp.logs import LEVELS, ClientLogHandler, configure_logging
from lsp_agent.lsp.options import InitOptions, parse_init_options
from lsp_agent.lsp.protocol import AgentProtocol
from lsp_agent.lsp.warmup import WarmUp

if TYPE_CHECKING:
    from collections.abc import Iterable

    from lsp_agent.agent.env import AgentConfig
    from lsp_agent.diagnostics.config import DiagnosticsSettings
    from lsp_agent.lsp.code_actions import CodeActions
    from lsp_agent.lsp.diagnostics_door import DiagnosticsDoor
    from lsp_agent.lsp.host import LspHost
    from lsp_agent.lsp.mcp_door import McpDoor
    from lsp_agent.lsp.memory_door import MemoryDoor
    from lsp_agent.lsp.settings_door import SettingsDoor
    from lsp_agent.model.base import Model
    from lsp_agent.sessions.manager import Session, SessionManager

logger = logging.getLogger(__name__)

SERVER_NAME = "lsp-agent"


def _default_model_factory() -> Model:
    from lsp_agent.model.anthropic import AnthropicModel

    return AnthropicModel.from_env()


class AgentLanguageServer(LanguageServer):
    """A language server that hosts agent sessions.

    ``model_factory`` makes one model client per session (default: the Anthropic client from
    the environment); ``config`` holds the agent settings, completed at ``initialize`` from
    ``initializationOptions.lspAgent`` (model name, default permission mode, verification).
    The components that load the agent core (:attr:`host`, :attr:`diagnostics`,
    :attr:`settings_door`, :attr:`sessions`, :attr:`code_actions`) are created on first use.
    """

    def __init__(
        self,
        *,
        model_factory: Callable[[], Model] | None = None,
        config: AgentConfig | None = None,
    ) -> None:
        super().__init__(
            SERVER_NAME,
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=AgentProtocol,
        )
        self.options = InitOptions()
        self.diagnostics_settings: DiagnosticsSettings | None = None
        """``initializationOptions.lspAgent.diagnostics``, validated (``None``: not sent)."""
        self.flag_settings: Path | None = None
        """``--settings FILE`` of ``lsp-agent serve`` (source ``flagSettings``)."""
        self.log_handler: ClientLogHandler | None = None
        self.warm_up = WarmUp()
        self._model_factory = model_factory
        self._base_config = config
        self._host: LspHost | None = None
        self._diagnostics: DiagnosticsDoor | None = None
        self._settings_door: SettingsDoor | None = None
        self._mcp_door: McpDoor | None = None
        self._code_actions: CodeActions | None = None
        self._sessions: SessionManager | None = None
        self._memory: MemoryDoor | None = None

    # ---- components, created on first use --------------------------------------------------

    @property
    def host(self) -> LspHost:
        """The core's Host against this editor (created on first use)."""
        if self._host is None:
            self.warm_up.wait_for_core()
            from lsp_agent.lsp.host import LspHost

            self._host = LspHost(server=self)
            self._configure_host(self._host)
        return self._host

    @property
    def diagnostics(self) -> DiagnosticsDoor:
        """The diagnostics door (created on first use, with the validated settings)."""
        if self._diagnostics is None:
            self.warm_up.wait_for_core()
            from lsp_agent.lsp.diagnostics_door import DiagnosticsDoor

            self._diagnostics = DiagnosticsDoor(server=self, settings=self.diagnostics_settings)
        return self._diagnostics

    @property
    def settings_door(self) -> SettingsDoor:
        """The settings door (created on first use: at ``initialized`` at the latest)."""
        if self._settings_door is None:
            self.warm_up.wait_for_core()
            from lsp_agent.lsp.settings_door import SettingsDoor

            door = SettingsDoor(server=self, flag_settings=self.flag_settings)
            door.configure(trusted=self.options.trusted, settings=self.options.settings)
            self._settings_door = door
        return self._settings_door

    @property
    def mcp_door(self) -> McpDoor:
        """The MCP door (created on first use: at ``initialized`` at the latest)."""
        if self._mcp_door is None:
            self.warm_up.wait_for_core()
            from lsp_agent.lsp.mcp_door import McpDoor

            self._mcp_door = McpDoor(server=self)
        return self._mcp_door

    @property
    def memory(self) -> MemoryDoor:
        """The memory-file features (created on first use)."""
        if self._memory is None:
            self.warm_up.wait_for_core()
            from lsp_agent.context.memory.approvals import ImportApprovals, default_approvals_path
            from lsp_agent.lsp.memory_door import MemoryDoor

            approvals = ImportApprovals(path=default_approvals_path())
            self._memory = MemoryDoor(server=self, approvals=approvals)
        return self._memory

    @property
    def code_actions(self) -> CodeActions:
        """The code-action and command handlers (created on first use)."""
        if self._code_actions is None:
            self.warm_up.wait_for_core()
            from lsp_agent.lsp.code_actions import CodeActions

            self._code_actions = CodeActions(server=self)
        return self._code_actions

    @property
    def sessions(self) -> SessionManager:
        """The session manager (created on first use, after ``initialize``)."""
        if self._sessions is None:
            self.warm_up.wait_for_core()
            from lsp_agent.sessions.compose import build_sessions
            from lsp_agent.sessions.project_mode import ModeApprovals, default_approvals_path

            self._sessions = build_sessions(
                host=self.host,
                model_factory=self._model_factory or _default_model_factory,
                config=self.agent_config(),
                diagnostics=self.diagnostics.service,
                settings=self.settings_door.store_for,
                mcp=self.mcp_door.service_for,
                import_approvals=self.memory.approvals,
                mode_approvals=ModeApprovals(path=default_approvals_path()),
            )
        return self._sessions

    def existing_sessions(self) -> Iterable[Session]:
        """The sessions created so far (none, without creating the manager)."""
        return self._sessions.sessions.values() if self._sessions is not None else ()

    # ---- configuration ----------------------------------------------------------------------

    def agent_config(self) -> AgentConfig:
        """The agent settings: ``config`` given to :func:`create_server`, with the model and
        permission mode from ``initializationOptions.lspAgent`` applied on top."""
        base = self._base_config
        if base is None:
            from lsp_agent.agent.env import AgentConfig
            from lsp_agent.model.anthropic import resolve_model_name

            base = AgentConfig(model=resolve_model_name(None))
        changes: dict[str, Any] = {}
        if self.options.model:
            changes["model"] = self.options.model
        if self.options.permission_mode:
            changes["permission_mode"] = self.options.permission_mode
        if self.options.max_model_requests is not None:
            changes["max_turns"] = self.options.max_model_requests
        config = dataclasses.replace(base, **changes) if changes else base
        return self.diagnostics.agent_config(config)

    def apply_options(self, options: InitOptions) -> None:
        """Adopt ``initializationOptions.lspAgent`` (called at ``initialize``). Raises
        ``JsonRpcInvalidParams`` naming the field when ``diagnostics`` is malformed."""
        self.options = options
        if options.diagnostics is not None:
            # Only now is the diagnostics schema (pydantic) loaded: a bad field must fail
            # initialize, and clients that send no diagnostics settings do not pay for it.
            from lsp_agent.diagnostics.config import SettingsError, parse_settings

            try:
                self.diagnostics_settings = parse_settings(
                    options.diagnostics, where="initializationOptions.lspAgent.diagnostics"
                )
            except SettingsError as exc:
                raise invalid_params(str(exc)) from None
        if self._diagnostics is not None:
            self._diagnostics.configure(self.diagnostics_settings)
        if self._settings_door is not None:
            self._settings_door.configure(trusted=options.trusted, settings=options.settings)
        if self._host is not None:
            self._configure_host(self._host)
        if self.log_handler is not None:
            self.log_handler.setLevel(LEVELS[options.log_level])

    def _configure_host(self, host: LspHost) -> None:
        host.client_saves = self.options.client_capabilities.save_documents
        host.timeouts.permission = self.options.permission_timeout_ms / 1000
        host.timeouts.confirm_edit = self.options.edit_confirm_timeout_ms / 1000

    def workspace_roots(self) -> list[Path]:
        """The client's workspace folders as paths (``rootUri`` when there are none)."""
        roots: list[Path] = []
        for folder in self.workspace.folders.values():
            fs_path = to_fs_path(folder.uri)
            if fs_path is not None:
                roots.append(Path(fs_path))
        if not roots and self.workspace.root_path:
            roots.append(Path(self.workspace.root_path))
        return roots

    # ---- transports: our framing and intake instead of pygls' read loop --------------------

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve one client over stdio (:mod:`lsp_agent.lsp.transport`)."""
        from lsp_agent.lsp.transport import run_stdio

        self._stop_event = stop = threading.Event()
        try:
            run_stdio(
                self._agent_protocol(),
                stdin=stdin or sys.stdin.buffer,
                stdout=stdout or sys.stdout.buffer,
                stop=stop,
            )
        except BrokenPipeError:
            logger.error("the connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one client over TCP on ``host:port`` (:mod:`lsp_agent.lsp.transport`)."""
        from lsp_agent.lsp.transport import run_tcp

        self._stop_event = stop = threading.Event()
        try:
            run_tcp(self._agent_protocol(), host=host, port=port, stop=stop)
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    def _agent_protocol(self) -> AgentProtocol:
        assert isinstance(self.protocol, AgentProtocol)
        return self.protocol

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log errors instead of popping a message for each (pygls' default)."""
        if source is FeatureRequestError:
            # The client already got the error as the request's answer.
            logger.debug("request failed: %s", error)
            return
        logger.error("server error (%s): %s", getattr(source, "__name__", source), error)


def create_server(
    *,
    model_factory: Callable[[], Model] | None = None,
    config: AgentConfig | None = None,
) -> AgentLanguageServer:
    """Build the server with every feature registered; see the module docstring."""
    server = AgentLanguageServer(model_factory=model_factory, config=config)
    _register_lifecycle(server)
    _register_documents(server)
    _register_sessions(server)
    _register_code_actions(server)
    _register_mcp(server)
    _register_rewind(server)
    _register_memory(server)
    return server


# ---- lifecycle --------------------------------------------------------------------------------


def _register_lifecycle(server: AgentLanguageServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: AgentLanguageServer, params: types.InitializeParams) -> None:
        ls.apply_options(parse_init_options(params.initialization_options))
        logger.info(
            "initialize: client %s, position encoding %s",
            params.client_info.name if params.client_info else "?",
            ls.workspace.position_encoding,
        )

    @server.feature(types.INITIALIZED)
    def initialized(ls: AgentLanguageServer, params: types.InitializedParams) -> None:
        if ls.log_handler is not None:
            ls.log_handler.bind_loop(asyncio.get_running_loop())
        # Settings diagnostics are published now, as before; the settings modules load here,
        # on this thread, before the warm-up thread starts on the rest of the core.
        ls.settings_door.open_folders(ls.workspace_roots())
        ls.mcp_door.open_folders(ls.workspace_roots())
        ls.warm_up.start(sdk=ls._model_factory is None)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: AgentLanguageServer, params: None) -> None:
        if ls._sessions is not None:
            # Cancels running turns, runs SessionEnd hooks, closes the model clients.
            await ls._sessions.aclose()
        if ls._settings_door is not None:
            await ls._settings_door.shutdown()
        if ls._mcp_door is not None:
            await ls._mcp_door.shutdown()
        if ls._memory is not None:
            await ls._memory.shutdown()
        if ls._diagnostics is not None:
            await ls._diagnostics.shutdown()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: AgentLanguageServer, params: types.DidChangeConfigurationParams
    ) -> None:
        ls.settings_door.did_change_configuration(params.settings)
        if ls._memory is not None:
            ls._memory.refresh_open()  # trust or settings may have changed what loads


def _register_documents(server: AgentLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AgentLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.host.documents.opened(params.text_document.uri)
        ls.diagnostics.opened(ls.workspace.get_text_document(params.text_document.uri))
        if params.text_document.uri.endswith(".md"):
            ls.memory.refresh(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AgentLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        doc = ls.workspace.text_documents.get(params.text_document.uri)
        if doc is None:
            doc = ls.workspace.get_text_document(params.text_document.uri)
        ls.host.documents.changed(doc)
        ls.host.document_changed(doc)
        ls.diagnostics.changed(doc, params)
        if doc.uri.endswith(".md"):
            ls.memory.refresh(doc.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: AgentLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.host.documents.saved(params.text_document.uri)
        if params.text_document.uri.endswith(".md"):
            ls.memory.refresh(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AgentLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.host.documents.closed(params.text_document.uri)
        ls.diagnostics.closed(params.text_document.uri)
        if ls._memory is not None:
            ls._memory.closed(params.text_document.uri)


# ---- sessions ---------------------------------------------------------------------------------
# Thin handlers: the bodies live in lsp_agent.lsp.sessions_door, imported on first use.


def _register_sessions(server: AgentLanguageServer) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_folders(
        ls: AgentLanguageServer, params: types.DidChangeWorkspaceFoldersParams
    ) -> None:
        if not params.event.removed or ls._sessions is None:
            return
        from lsp_agent.lsp import store_door

        await store_door.close_removed(ls, [f.uri for f in params.event.removed])

    # Each handler waits for the warm-up (if it is importing the core) before its import.
    @server.feature(methods.SESSION_NEW)
    def session_new(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        ls.warm_up.wait_for_core()
        from lsp_agent.lsp import sessions_door

        return sessions_door.session_new(ls, raw)

    @server.feature(methods.SESSION_PROMPT)
    async def session_prompt(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        ls.warm_up.wait_for_core()
        from lsp_agent.lsp import sessions_door

        return await sessions_door.session_prompt(ls, raw)

    @server.feature(methods.SESSION_CANCEL)
    def session_cancel(ls: AgentLanguageServer, raw: Any) -> None:
        ls.warm_up.wait_for_core()
        from lsp_agent.lsp import sessions_door

        sessions_door.session_cancel(ls, raw)

    @server.feature(methods.SESSION_SET_MODE)
    def session_set_mode(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        ls.warm_up.wait_for_core()
        from lsp_agent.lsp import sessions_door

        return sessions_door.session_set_mode(ls, raw)

    @server.feature(methods.SESSION_CLOSE)
    async def session_close(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        ls.warm_up.wait_for_core()
        from lsp_agent.lsp import sessions_door

        return await sessions_door.session_close(ls, raw)

    @server.feature(methods.SESSION_LIST)
    def session_list(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        ls.warm_up.wait_for_core()
        from lsp_agent.lsp import store_door

        return store_door.session_list(ls, raw)

    @server.feature(methods.SESSION_LOAD)
    def session_load(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        ls.warm_up.wait_for_core()
        from lsp_agent.lsp import store_door

        return store_door.session_load(ls, raw)

    @server.feature(methods.SESSION_FORK)
    def session_fork(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        ls.warm_up.wait_for_core()
        from lsp_agent.lsp import store_door

        return store_door.session_fork(ls, raw)


# ---- MCP servers --------------------------------------------------------------------------------
# The bodies live in lsp_agent.lsp.mcp_door, imported on first use.


def _register_mcp(server: AgentLanguageServer) -> None:
    @server.feature(methods.MCP_LIST)
    async def mcp_list(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        return await ls.mcp_door.list(raw)

    @server.feature(methods.MCP_APPROVE)
    async def mcp_approve(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        return await ls.mcp_door.approve(raw)

    @server.feature(methods.MCP_RECONNECT)
    def mcp_reconnect(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        return ls.mcp_door.reconnect(raw)


# ---- checkpoints and rewind ------------------------------------------------------------------
# The bodies live in lsp_agent.lsp.rewind_door, imported on first use.


def _register_rewind(server: AgentLanguageServer) -> None:
    @server.feature(methods.SESSION_CHECKPOINTS)
    async def session_checkpoints(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        ls.warm_up.wait_for_core()
        from lsp_agent.lsp import rewind_door

        return await rewind_door.session_checkpoints(ls, raw)

    @server.feature(methods.SESSION_REWIND)
    async def session_rewind(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        ls.warm_up.wait_for_core()
        from lsp_agent.lsp import rewind_door

        return await rewind_door.session_rewind(ls, raw)


# ---- code actions and commands ----------------------------------------------------------------
# Registered with static capabilities; the handlers (lsp_agent.lsp.code_actions) load on first use.


def _register_code_actions(server: AgentLanguageServer) -> None:
    @server.feature(methods.DIAGNOSTICS_DID_CHANGE)
    def bridge(ls: AgentLanguageServer, raw: Any) -> None:
        ls.diagnostics.bridge(raw)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=list(methods.CODE_ACTION_KINDS), resolve_provider=True
        ),
    )
    def code_action(
        ls: AgentLanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        actions = ls.code_actions.code_actions(params)
        if params.text_document.uri.endswith(".md"):
            actions += ls.memory.code_actions(params)
        return actions

    @server.feature(types.CODE_ACTION_RESOLVE)
    def resolve(ls: AgentLanguageServer, action: types.CodeAction) -> types.CodeAction:
        return ls.code_actions.resolve(action)

    for name in methods.COMMANDS:
        _register_command(server, name)

    @server.command(methods.COMMAND_APPROVE_IMPORTS)
    def approve_imports(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
        try:
            return ls.memory.approve(arguments)
        except ValueError as exc:
            raise invalid_params(f"{methods.COMMAND_APPROVE_IMPORTS}: {exc}") from None


# ---- memory files ------------------------------------------------------------------------------
# Links, hovers, completion and diagnostics for CLAUDE.md & co.; a code lens on other files
# (lsp_agent.lsp.memory_door, loaded on first use).


def _register_memory(server: AgentLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK, types.DocumentLinkOptions())
    def document_link(
        ls: AgentLanguageServer, params: types.DocumentLinkParams
    ) -> list[types.DocumentLink]:
        if not params.text_document.uri.endswith(".md"):
            return []
        return ls.memory.document_links(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: AgentLanguageServer, params: types.HoverParams) -> types.Hover | None:
        if not params.text_document.uri.endswith(".md"):
            return None
        return ls.memory.hover(params)

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=list(methods.MEMORY_COMPLETION_TRIGGERS)),
    )
    def completion(
        ls: AgentLanguageServer, params: types.CompletionParams
    ) -> types.CompletionList | None:
        if not params.text_document.uri.endswith(".md"):
            return None
        return ls.memory.completion(params)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions())
    def code_lens(ls: AgentLanguageServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        return ls.memory.code_lens(params)


def _register_command(server: AgentLanguageServer, name: str) -> None:
    @server.command(name)
    async def run(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
        return await ls.code_actions.run_command(name, arguments)


# ---- entry points -----------------------------------------------------------------------------


def serve(
    *,
    tcp: tuple[str, int] | None = None,
    log_file: Path | None = None,
    log_level: int = logging.INFO,
    model_factory: Callable[[], Model] | None = None,
    config: AgentConfig | None = None,
    settings_file: Path | None = None,
) -> int:
    """Run the server until the client sends ``exit``: over stdio (default) or, with
    ``tcp=(host, port)``, as a TCP server for one client. Logs go to ``log_file`` or stderr,
    never stdout. ``settings_file`` is ``--settings FILE`` (the ``flagSettings`` layer of every
    project's settings). Returns the process exit code (0 after a proper ``shutdown``, else 1)."""
    configure_logging(log_file=log_file, level=log_level)
    server = create_server(model_factory=model_factory, config=config)
    server.flag_settings = settings_file
    server.log_handler = ClientLogHandler(server=server, level=logging.WARNING)
    logging.getLogger().addHandler(server.log_handler)
    try:
        if tcp is not None:
            server.start_tcp(*tcp)
        else:
            server.start_io()
    finally:
        logging.getLogger().removeHandler(server.log_handler)
    return 0 if server.protocol._shutdown else 1


def serve_stdio() -> int:
    """``serve()`` over stdio."""
    return serve()


def serve_tcp(host: str, port: int) -> int:
    """``serve()`` over TCP on ``host:port`` (one client)."""
    return serve(tcp=(host, port))
