"""The LSP door: a pygls language server that embeds the agent.

:func:`create_server` builds an :class:`AgentLanguageServer` with the standard document sync
(the buffers become the agent's overlay) and the ``lspAgent/*`` methods of docs/protocol.md;
:func:`serve` runs it over stdio or TCP. Importing this module does not import the
``anthropic`` SDK: it is imported in a background thread after ``initialized``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import FeatureRequestError, JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from lsp_agent import __version__
from lsp_agent.agent.loop import AgentConfig
from lsp_agent.lsp import methods
from lsp_agent.lsp.code_actions import register_code_actions
from lsp_agent.lsp.diagnostics_door import DiagnosticsDoor
from lsp_agent.lsp.errors import MODEL_ERROR, ModelError, SessionBusyError, invalid_params
from lsp_agent.lsp.host import CURRENT_SESSION, LspHost
from lsp_agent.lsp.logs import LEVELS, ClientLogHandler, configure_logging
from lsp_agent.lsp.options import InitOptions, parse_init_options
from lsp_agent.lsp.params import (
    ListSessionsParams,
    NewSessionParams,
    PromptParams,
    SessionIdParams,
    SetModeParams,
    parse,
)
from lsp_agent.lsp.progress import TurnProgress
from lsp_agent.lsp.prompt import path_from, prompt_parts
from lsp_agent.lsp.protocol import AgentProtocol
from lsp_agent.lsp.settings_door import SettingsDoor
from lsp_agent.model.base import Model
from lsp_agent.sessions.manager import MODES, Session, SessionError, SessionManager

logger = logging.getLogger(__name__)

SERVER_NAME = "lsp-agent"


def _default_model_factory() -> Model:
    from lsp_agent.model.anthropic import AnthropicModel

    return AnthropicModel.from_env()


def _warm_up() -> None:
    try:
        from lsp_agent.model.anthropic import warm_up

        warm_up()
    except Exception:
        logger.exception("importing the model SDK failed")


class AgentLanguageServer(LanguageServer):
    """A language server that hosts agent sessions.

    ``model_factory`` makes one model client per session (default: the Anthropic client from
    the environment); ``config`` holds the agent settings, completed at ``initialize`` from
    ``initializationOptions.lspAgent`` (model name, default permission mode).
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
        self.host = LspHost(server=self)
        self.diagnostics = DiagnosticsDoor(server=self)
        self.settings_door = SettingsDoor(server=self)
        self.options = InitOptions()
        self.log_handler: ClientLogHandler | None = None
        self._model_factory = model_factory
        self._base_config = config
        self._sessions: SessionManager | None = None

    @property
    def sessions(self) -> SessionManager:
        """The session manager (created on first use, after ``initialize``)."""
        if self._sessions is None:
            self._sessions = SessionManager(
                host=self.diagnostics.session_host(),
                model_factory=self._model_factory or _default_model_factory,
                config=self.agent_config(),
                tools_factory=self.diagnostics.tools_factory,
                settings=self.settings_door.store_for,
            )
        return self._sessions

    def agent_config(self) -> AgentConfig:
        """The agent settings: ``config`` given to :func:`create_server`, with the model and
        permission mode from ``initializationOptions.lspAgent`` applied on top."""
        base = self._base_config
        if base is None:
            from lsp_agent.model.anthropic import resolve_model_name

            base = AgentConfig(model=resolve_model_name(None))
        changes: dict[str, Any] = {}
        if self.options.model:
            changes["model"] = self.options.model
        if self.options.permission_mode:
            changes["permission_mode"] = self.options.permission_mode
        config = dataclasses.replace(base, **changes) if changes else base
        return self.diagnostics.agent_config(config)

    def apply_options(self, options: InitOptions) -> None:
        """Adopt ``initializationOptions.lspAgent`` (called at ``initialize``)."""
        self.options = options
        self.diagnostics.configure(options.diagnostics)
        self.settings_door.configure(trusted=options.trusted, settings=options.settings)
        self.host.client_saves = options.client_capabilities.save_documents
        self.host.timeouts.permission = options.permission_timeout_ms / 1000
        self.host.timeouts.confirm_edit = options.edit_confirm_timeout_ms / 1000
        if self.log_handler is not None:
            self.log_handler.setLevel(LEVELS[options.log_level])

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
    register_code_actions(server)
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
        ls.settings_door.open_folders(ls.workspace_roots())
        if ls._model_factory is None:
            threading.Thread(target=_warm_up, name="lsp-agent-warm-up", daemon=True).start()

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: AgentLanguageServer, params: None) -> None:
        if ls._sessions is not None:
            # Cancels running turns, runs SessionEnd hooks, closes the model clients.
            await ls._sessions.aclose()
        await ls.settings_door.shutdown()
        await ls.diagnostics.shutdown()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: AgentLanguageServer, params: types.DidChangeConfigurationParams
    ) -> None:
        ls.settings_door.did_change_configuration(params.settings)


def _register_documents(server: AgentLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AgentLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.host.documents.opened(params.text_document.uri)
        ls.diagnostics.opened(ls.workspace.get_text_document(params.text_document.uri))

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AgentLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        doc = ls.workspace.text_documents.get(params.text_document.uri)
        if doc is None:
            doc = ls.workspace.get_text_document(params.text_document.uri)
        ls.host.documents.changed(doc)
        ls.diagnostics.changed(doc, params)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: AgentLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.host.documents.saved(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AgentLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.host.documents.closed(params.text_document.uri)
        ls.diagnostics.closed(params.text_document.uri)


# ---- sessions ---------------------------------------------------------------------------------


def _modes(session: Session) -> dict[str, Any]:
    available = session.available_modes()
    return {
        "currentModeId": session.mode,
        "availableModes": [
            {"id": mode, "name": name, "description": description}
            for mode, name, description in MODES
            if mode in available
        ],
    }


def _session(ls: AgentLanguageServer, session_id: str) -> Session:
    try:
        return ls.sessions.get(session_id)
    except SessionError:
        raise invalid_params(f"unknown session id: {session_id!r}") from None


def _register_sessions(server: AgentLanguageServer) -> None:
    @server.feature(methods.SESSION_NEW)
    def session_new(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        params = parse(NewSessionParams, raw, method=methods.SESSION_NEW)
        folders = ls.workspace_roots()
        if params.cwd is not None:
            cwd = path_from(params.cwd, field="cwd")
        elif folders:
            cwd = folders[0]
        else:
            raise invalid_params(
                "cwd is required: the client opened no workspace folder to default to"
            )
        if not cwd.is_dir():
            raise invalid_params(f"cwd: {cwd} is not a directory")
        if params.additional_directories is not None:
            extra = [
                path_from(value, field=f"additionalDirectories[{index}]")
                for index, value in enumerate(params.additional_directories)
            ]
        else:
            extra = [folder for folder in folders if folder != cwd]
        try:
            session = ls.sessions.new(cwd=cwd, additional_directories=extra, mode=params.mode)
        except Exception as exc:
            logger.exception("cannot create a session")
            raise JsonRpcException(
                message=f"cannot create a session: {exc}", code=MODEL_ERROR
            ) from None
        logger.info("session %s created in %s", session.id, cwd)
        return {"sessionId": session.id, "modes": _modes(session)}

    @server.feature(methods.SESSION_PROMPT)
    async def session_prompt(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        params = parse(PromptParams, raw, method=methods.SESSION_PROMPT)
        session = _session(ls, params.session_id)
        if session.busy:
            raise SessionBusyError(
                f"session {session.id} is already running a prompt; cancel it first"
            )
        parts = prompt_parts(params.prompt, method=methods.SESSION_PROMPT, buffer=ls.host.buffer)
        progress = await TurnProgress.start(ls, on_cancel=session.cancel)
        ls.host.progress[session.id] = progress
        token = CURRENT_SESSION.set(session.id)
        stop = "cancelled"
        try:
            result = await session.prompt(parts)
            stop = result.stop_reason
        except SessionError as exc:
            raise SessionBusyError(str(exc)) from None
        finally:
            CURRENT_SESSION.reset(token)
            progress.end(stop)
            if ls.host.progress.get(session.id) is progress:
                del ls.host.progress[session.id]
            ls.host.forget_session_tools(session.id)
        usage = {
            "inputTokens": result.usage.input_tokens,
            "outputTokens": result.usage.output_tokens,
            "cacheReadInputTokens": result.usage.cache_read_input_tokens,
            "cacheCreationInputTokens": result.usage.cache_creation_input_tokens,
        }
        if result.error is not None:
            raise ModelError(result.error, data={"stopReason": result.stop_reason, "usage": usage})
        return {"stopReason": result.stop_reason, "usage": usage}

    @server.feature(methods.SESSION_CANCEL)
    def session_cancel(ls: AgentLanguageServer, raw: Any) -> None:
        try:
            params = parse(SessionIdParams, raw, method=methods.SESSION_CANCEL)
            session = _session(ls, params.session_id)
        except JsonRpcException as exc:
            # A notification has no answer: all we can do is say why it was ignored.
            logger.warning("ignored %s: %s", methods.SESSION_CANCEL, exc.message)
            return
        session.cancel()

    @server.feature(methods.SESSION_SET_MODE)
    def session_set_mode(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        params = parse(SetModeParams, raw, method=methods.SESSION_SET_MODE)
        try:
            _session(ls, params.session_id).set_mode(params.mode_id)
        except SessionError as exc:
            raise invalid_params(str(exc)) from None
        return {}

    @server.feature(methods.SESSION_LIST)
    def session_list(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        parse(ListSessionsParams, raw, method=methods.SESSION_LIST)
        sessions = ls._sessions.sessions.values() if ls._sessions is not None else ()
        return {
            "sessions": [{"sessionId": s.id, "cwd": str(s.cwd), "busy": s.busy} for s in sessions]
        }


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
    server.settings_door.flag_settings = settings_file
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
