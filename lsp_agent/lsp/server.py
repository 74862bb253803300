"""The LSP door: a pygls language server that embeds the agent.

:func:`create_server` builds an :class:`AgentLanguageServer` with the standard document sync
(the buffers become the agent's overlay), the ``lspAgent/*`` methods of docs/protocol.md and
the agent code actions, registered by :mod:`lsp_agent.lsp.features`; :func:`serve` runs it over
stdio or TCP. This module holds the server itself: its components, created on first use, its
configuration from ``initializationOptions`` and its transports.

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
from lsp_agent.lsp.errors import invalid_params
from lsp_agent.lsp.logs import LEVELS, ClientLogHandler, configure_logging
from lsp_agent.lsp.options import InitOptions
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
    from lsp_agent.sessions.idle import IdleCloser
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
        self.idle: IdleCloser | None = None
        """Closes sessions no request named for ``sessionIdleMinutes`` (started with them)."""
        self._idle_task: asyncio.Task[None] | None = None
        self.bg_approvals: asyncio.Task[None] | None = None
        """Asks the user about background runs' tool calls (``lsp.bg_approvals``)."""
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
            self._close_idle_sessions(self._sessions)
        return self._sessions

    def _close_idle_sessions(self, sessions: SessionManager) -> None:
        minutes = self.options.session_idle_minutes
        if minutes <= 0:
            return
        from lsp_agent.sessions.idle import IdleCloser

        self.idle = IdleCloser(manager=sessions, idle_s=minutes * 60)
        try:
            self._idle_task = asyncio.get_running_loop().create_task(self.idle.run())
        except RuntimeError:  # no running loop (a synchronous caller): nothing is closed
            self.idle = None

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
    # Imported here: the handlers' annotations name the server class, which pygls resolves
    # at run time, so that module imports this one.
    from lsp_agent.lsp.features import register_features

    server = AgentLanguageServer(model_factory=model_factory, config=config)
    register_features(server)
    return server


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
