"""The features the LSP door serves, registered on an
:class:`~lsp_agent.lsp.server.AgentLanguageServer`: the lifecycle (``initialize``,
``initialized``, ``shutdown``, configuration changes), document sync, the ``lspAgent/*``
methods of docs/protocol.md, code actions and commands, and the memory-file features.

The handlers are thin: each hands its work to a door module (:mod:`lsp_agent.lsp.sessions_door`,
:mod:`lsp_agent.lsp.store_door`, :mod:`lsp_agent.lsp.mcp_door`, :mod:`lsp_agent.lsp.rewind_door`,
:mod:`lsp_agent.lsp.code_actions`, :mod:`lsp_agent.lsp.memory_door`), imported on first use, so
this module stays as light as the server's: pygls, lsprotocol and the static capabilities of
:mod:`lsp_agent.lsp.methods`. The server class is imported at run time, not for type checking
only: pygls reads the handlers' annotations to structure their parameters.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types

from lsp_agent.lsp import methods
from lsp_agent.lsp.errors import invalid_params
from lsp_agent.lsp.options import parse_init_options
from lsp_agent.lsp.server import AgentLanguageServer

logger = logging.getLogger(__name__)


def register_features(server: AgentLanguageServer) -> None:
    """Register every feature of the door on ``server`` (see the module docstring)."""
    _register_lifecycle(server)
    _register_documents(server)
    _register_sessions(server)
    _register_code_actions(server)
    _register_mcp(server)
    _register_rewind(server)
    _register_memory(server)


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
        from lsp_agent.lsp import bg_approvals

        ls.bg_approvals = asyncio.get_running_loop().create_task(bg_approvals.watch(ls))

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: AgentLanguageServer, params: None) -> None:
        if ls._idle_task is not None:
            ls._idle_task.cancel()
        if ls.bg_approvals is not None:
            ls.bg_approvals.cancel()
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
        ls.mcp_door.did_change_configuration(params.settings)  # settings.lspAgent.mcpServers
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

    @server.feature(methods.SESSION_COMMAND)
    async def session_command(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        ls.warm_up.wait_for_core()
        from lsp_agent.lsp import command_door

        return await command_door.session_command(ls, raw)

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

    @server.feature(methods.MCP_SET_ENABLED)
    async def mcp_set_enabled(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        return await ls.mcp_door.set_enabled(raw)

    @server.feature(methods.MCP_RECONNECT)
    def mcp_reconnect(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        return ls.mcp_door.reconnect(raw)

    @server.feature(methods.MCP_RESOURCES)
    async def mcp_resources(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        return await ls.mcp_door.resources(raw)

    @server.feature(methods.MCP_LOGIN)
    async def mcp_login(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        return await ls.mcp_door.login(raw)

    @server.feature(methods.MCP_LOGOUT)
    async def mcp_logout(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        return await ls.mcp_door.logout(raw)


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
